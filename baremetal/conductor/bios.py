"""Storing a node's BIOS settings as its driver reads them."""

from oslo_log import log

from baremetal.db import bios as db_bios

LOG = log.getLogger(__name__)


def cache(task, strict: bool = False) -> None:
    """Read the settings through the bios interface and replace the
    stored ones.  ``strict=False``: a failure is logged, not raised (the
    settings are a view, not the node's state)."""
    try:
        settings = task.driver.bios.cache_bios_settings(task)
    except Exception as e:
        if strict:
            raise
        LOG.warning('Node %s: could not read its BIOS settings: %s',
                    task.node.uuid, e)
        return
    if settings is None:
        return
    reg = db_bios.BIOS_REGISTRY_FIELDS
    wanted = sorted((s['name'], None if s.get('value') is None
                     else str(s['value'])) + tuple(s.get(k) for k in reg)
                    for s in settings)
    stored = [(s['name'], s['value']) + tuple(s[k] for k in reg)
              for s in db_bios.bios_settings(task.node.id)]
    if wanted != stored:
        # writes are serialised (SQLite): only when something changed
        db_bios.replace_bios_settings(task.node.id, settings)
