"""Deploy templates: the steps of those a deployment asks for."""

from baremetal.db import api as db

_TEMPLATES = db.T['deploy_templates']
_STEPS = db.T['deploy_template_steps']


def steps_for(traits: list[str]) -> list:
    """The step rows of the deploy templates named like one of
    ``traits`` (one query)."""
    tt, ts = _TEMPLATES, _STEPS
    with db.reader() as conn:
        return conn.execute(
            ts.select().join(tt, tt.c.id == ts.c.deploy_template_id)
            .where(tt.c.name.in_(traits))).mappings().all()
