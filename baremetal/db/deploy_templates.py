"""Deploy templates: their rows and steps (``STEPS``, see
step_lists.py), and the steps of those a deployment asks for."""

from baremetal.common import exception
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows
from baremetal.db import step_lists

_TEMPLATES = models.TABLES['deploy_templates']
_STEPS = models.TABLES['deploy_template_steps']
ROWS = db_rows.Rows(_TEMPLATES, exception.DeployTemplateNotFound,
                    'template')
STEPS = step_lists.StepLists(ROWS, _STEPS, 'deploy_template_id')


def steps_for(traits: list[str]) -> list:
    """The step rows of the deploy templates named like one of
    ``traits`` (one query)."""
    tt, ts = _TEMPLATES, _STEPS
    with engine.reader() as conn:
        return conn.execute(
            ts.select().join(tt, tt.c.id == ts.c.deploy_template_id)
            .where(tt.c.name.in_(traits))).mappings().all()
