"""BIOS settings of a node (API 1.40; registry fields 1.74)."""

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import rows as db_rows

BIOS = models.TABLES['bios_settings']

# what a BIOS registry says of a setting (API 1.74)
BIOS_REGISTRY_FIELDS = ('attribute_type', 'allowable_values', 'lower_bound',
                        'max_length', 'min_length', 'read_only',
                        'reset_required', 'unique', 'upper_bound')

_BIOS_OF_ONE = sa.select(BIOS).where(
    BIOS.c.node_id == sa.bindparam('node_id')).order_by(BIOS.c.name)


def bios_settings(node_id: int) -> list[dict]:
    with engine.reader() as conn:
        return prepared.run(engine.prepared_cache, conn, _BIOS_OF_ONE,
                            {'node_id': node_id})[0]


@engine.retry_on_deadlock
def replace_bios_settings(node_id: int, settings: list[dict]) -> None:
    now = db_rows.utcnow()
    with engine.writer() as conn:
        conn.execute(BIOS.delete().where(BIOS.c.node_id == node_id))
        if settings:
            conn.execute(BIOS.insert(), [
                dict({k: s.get(k) for k in BIOS_REGISTRY_FIELDS},
                     node_id=node_id, name=s['name'],
                     value=None if s.get('value') is None
                     else str(s['value']), created_at=now)
                for s in settings])
