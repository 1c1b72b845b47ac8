"""What the live conductors offer: hardware types and interfaces.

Read from the conductor tables (the API never loads drivers) and cached
for a few seconds; an unknown name triggers one re-read before failing.
"""

import threading
import time

from baremetal.api import state
from baremetal.common import exception
from baremetal.conf import default as default_conf
from baremetal.db import conductors as db_conductors

INTERFACE_TYPES = default_conf.INTERFACE_TYPES
_TTL = 10.0


class _Cache:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded = 0.0
        # hw type -> iface type -> (ordered impl names, default)
        self.types: dict[str, dict[str, tuple[list[str], str | None]]] = {}
        self.hosts: dict[str, list[str]] = {}


_cache = _Cache()


def _load() -> None:
    timeout = state.CONF.conductor.heartbeat_timeout
    live = db_conductors.live_conductors(timeout)
    ids = {c['id']: c['hostname'] for c in live}
    rows = db_conductors.hardware_interfaces(list(ids)) if ids else []
    types: dict[str, dict[str, tuple[list[str], str | None]]] = {}
    hosts: dict[str, set[str]] = {}
    for r in sorted(rows, key=lambda r: r['id']):
        hw = types.setdefault(r['hardware_type'], {})
        names, default = hw.get(r['interface_type'], ([], None))
        if r['interface_name'] not in names:
            names.append(r['interface_name'])
        if r['default'] and default is None:
            default = r['interface_name']
        hw[r['interface_type']] = (names, default)
        hosts.setdefault(r['hardware_type'], set()).add(
            ids[r['conductor_id']])
    _cache.types = types
    _cache.hosts = {k: sorted(v) for k, v in hosts.items()}
    _cache.loaded = time.monotonic()


def _ensure(force: bool = False) -> None:
    with _cache.lock:
        if force or time.monotonic() - _cache.loaded > _TTL:
            _load()


def hardware_types() -> dict:
    _ensure()
    return _cache.types


def hosts(hw: str) -> list[str]:
    _ensure()
    return _cache.hosts.get(hw, [])


def get_type(hw: str) -> dict:
    _ensure()
    if hw not in _cache.types:
        _ensure(force=True)
    if hw not in _cache.types:
        raise exception.InvalidParameterValue(
            err='The driver "%s" is unknown: no live conductor offers '
                'it. Enabled hardware types: %s'
            % (hw, ', '.join(sorted(_cache.types)) or 'none'))
    return _cache.types[hw]


def check_interfaces(hw: str, values: dict) -> dict:
    """Validate/fill ``<iface>_interface`` values for hardware type
    ``hw``; returns the values to store (defaults where unset)."""
    offered = get_type(hw)
    out = {}
    for it in INTERFACE_TYPES:
        key = '%s_interface' % it
        names, default = offered.get(it, ([], None))
        value = values.get(key)
        if value is None:
            if default is None:
                raise exception.NoValidDefaultForInterface(
                    interface_type=it, node_info='driver %s' % hw,
                    hardware_type=hw)
            out[key] = default
            continue
        if value not in names:
            raise exception.InvalidParameterValue(
                err='%s interface "%s" is not enabled or not supported '
                    'by hardware type %s; valid: %s'
                % (it.capitalize(), value, hw, ', '.join(names) or
                   'none'))
        out[key] = value
    return out
