"""Storing a node's firmware components as its firmware interface reads
them (API 1.86): the version first seen stays as ``initial_version``; a
version that changed since the last reading is ``last_version_flashed``.
"""

from oslo_log import log

from baremetal.db import api as db

LOG = log.getLogger(__name__)
# a component's vendor, model and serial number, when the hardware says
IDENTITY = ('vendor', 'model', 'serial_number')


def cache(task, strict: bool = False) -> None:
    """Read the components and update the stored ones; ``strict=False``:
    a failure is logged, not raised (the list is a view)."""
    try:
        found = task.driver.firmware.cache_firmware_components(task)
    except Exception as e:
        if strict:
            raise
        LOG.warning('Node %s: could not read its firmware components: %s',
                    task.node.uuid, e)
        return
    if found is None:
        return
    t = db.T['firmware_information']
    now = db.utcnow()
    node_id = task.node.id
    # one transaction: read what is stored, write only what changed
    with db.writer() as conn:
        stored = {r['component']: r for r in conn.execute(
            t.select().where(t.c.node_id == node_id)).mappings()}
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
        if new:
            conn.execute(t.insert(), new)
        if stored:
            # components the hardware no longer reports
            conn.execute(t.delete().where(t.c.id.in_(
                [r['id'] for r in stored.values()])))


def components(node_id: int) -> list[dict]:
    t = db.T['firmware_information']
    return sorted(db.query(t, (t.c.node_id == node_id,)),
                  key=lambda r: r['component'])
