"""Storing a node's firmware components as its firmware interface reads
them (API 1.86): the version first seen stays as ``initial_version``; a
version that changed since the last reading is ``last_version_flashed``.
"""

from oslo_log import log

from baremetal.db import firmware as db_firmware

LOG = log.getLogger(__name__)


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
    # one transaction: read what is stored, write only what changed
    db_firmware.store_components(task.node.id, found)
