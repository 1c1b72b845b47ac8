"""Storing a node's BIOS settings as its driver reads them."""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import storable
from baremetal.db import bios as db_bios

LOG = log.getLogger(__name__)

# the name's column size; the value's column is a text, which MySQL and
# MariaDB hold up to 65,535 bytes (a character of UTF-8 takes up to 4)
NAME_SIZE = 255
VALUE_SIZE = 16383


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
    settings = [_storable(s) for s in settings]
    reg = db_bios.BIOS_REGISTRY_FIELDS
    wanted = sorted((s['name'], None if s.get('value') is None
                     else str(s['value'])) + tuple(s.get(k) for k in reg)
                    for s in settings)
    stored = [(s['name'], s['value']) + tuple(s[k] for k in reg)
              for s in db_bios.bios_settings(task.node.id)]
    if wanted == stored:
        return
    try:
        # writes are serialised (SQLite): only when something changed
        db_bios.replace_bios_settings(task.node.id, settings)
    except exception.DatabaseUnavailable:
        raise
    except Exception as e:
        if strict:
            raise
        LOG.warning('Node %s: could not store its BIOS settings: %s',
                    task.node.uuid, e)


def _storable(setting: dict) -> dict:
    """A setting as the columns hold it (what a BMC sent may be of any
    length, hold NUL characters or lone surrogates, or be an object):
    name and value as texts, escaped where no database would store them,
    cut to their columns' size."""
    value = setting.get('value')
    return dict(setting, name=storable.bounded(str(setting['name']),
                                               NAME_SIZE),
                value=None if value is None
                else storable.bounded(str(value), VALUE_SIZE))
