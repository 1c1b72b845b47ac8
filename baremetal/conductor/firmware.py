"""Storing a node's firmware components as its firmware interface reads
them (API 1.86): the version first seen stays as ``initial_version``; a
version that changed since the last reading is ``last_version_flashed``.
"""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import storable
from baremetal.db import firmware as db_firmware

LOG = log.getLogger(__name__)

# the size of the versions' and the identity's columns (db/models.py)
COLUMN_SIZE = 255


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
    try:
        # one transaction: read what is stored, write only what changed
        db_firmware.store_components(task.node.id, _storable(found))
    except exception.DatabaseUnavailable:
        raise
    except Exception as e:
        if strict:
            raise
        LOG.warning('Node %s: could not store its firmware components: '
                    '%s', task.node.uuid, e)


def _storable(found: list[dict]) -> list[dict]:
    """What the hardware reported as the columns hold it: texts (a BMC
    may send a number or an object), escaped where no database would
    store them, cut to the columns' size."""
    return [{k: v if v is None else storable.bounded(str(v), COLUMN_SIZE)
             for k, v in comp.items()} for comp in found]
