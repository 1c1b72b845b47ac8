"""A node's firmware components (API 1.86) as stored."""

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import rows as db_rows

FIRMWARE = models.TABLES['firmware_information']
# a component's vendor, model and serial number, when the hardware says
IDENTITY = ('vendor', 'model', 'serial_number')

# what every verification runs (store_components): built once, run
# prepared where the database allows it (SQLAlchemy's execution of the
# ad-hoc SELECT and INSERT was most of a verification's database time)
_STORED = sa.select(*FIRMWARE.c).where(
    FIRMWARE.c.node_id == sa.bindparam('node_id'))
_NEW_COLUMNS = ('node_id', 'component', 'initial_version',
                'current_version', 'last_version_flashed', 'created_at'
                ) + IDENTITY
_INSERT = FIRMWARE.insert().values(
    {c: sa.bindparam(c) for c in _NEW_COLUMNS})


def store_components(node_id: int, found: list[dict]) -> None:
    """Update the node's stored components to what the hardware reports
    (``found``), in one transaction that reads what is stored and writes
    only what changed: a new component keeps its first version as
    ``initial_version``; a version that changed is
    ``last_version_flashed``; a component no longer reported goes."""
    t = FIRMWARE
    now = db_rows.utcnow()
    with engine.writer() as conn:
        stored = {r['component']: r for r in prepared.run(
            engine.prepared_cache, conn, _STORED, {'node_id': node_id})[0]}
        new = []
        for comp in found:
            name, version = comp['component'], comp.get('current_version')
            # what the hardware says the component is (API 1.114)
            identity = {k: comp.get(k) for k in IDENTITY}
            row = stored.pop(name, None)
            if row is None:
                new.append(dict(identity, node_id=node_id, component=name,
                                initial_version=version or '',
                                current_version=version,
                                last_version_flashed=None, created_at=now))
                continue
            changes = {k: v for k, v in identity.items() if row[k] != v}
            if row['current_version'] != version:
                changes.update(current_version=version,
                               last_version_flashed=version)
            if changes:
                conn.execute(t.update().where(t.c.id == row['id']).values(
                    updated_at=now, **changes))
        for row in new:
            prepared.run(engine.prepared_cache, conn, _INSERT, row)
        if stored:
            # components the hardware no longer reports
            conn.execute(t.delete().where(t.c.id.in_(
                [r['id'] for r in stored.values()])))


def components(node_id: int) -> list[dict]:
    """The node's stored components, by name."""
    t = FIRMWARE
    return sorted(db_rows.query(t, (t.c.node_id == node_id,)),
                  key=lambda r: r['component'])
