"""How a node looks on the wire, per microversion."""

import functools
from collections.abc import Iterable

import orjson


from baremetal.api import state
from baremetal.api import versions
from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import secrets
from baremetal.common import states
from baremetal.db import allocations as db_allocations
from baremetal.db import chassis as db_chassis
from baremetal.db import traits as db_traits

MASK = secrets.MASK
mask_secrets = secrets.mask_secrets

# Every field the node API can show, in Ironic's order.
ALL_FIELDS = (
    'uuid', 'name', 'description', 'chassis_uuid', 'driver',
    'driver_info', 'driver_internal_info', 'extra', 'instance_info',
    'instance_uuid', 'instance_name', 'last_error', 'maintenance',
    'maintenance_reason', 'fault', 'health', 'power_state',
    'target_power_state', 'provision_state',
    'target_provision_state', 'provision_updated_at', 'console_enabled',
    'properties', 'reservation', 'resource_class', 'clean_step',
    'deploy_step', 'raid_config', 'target_raid_config',
    'inspection_started_at', 'inspection_finished_at',
    'bios_interface', 'boot_interface', 'console_interface',
    'deploy_interface', 'firmware_interface', 'inspect_interface',
    'management_interface',
    'network_interface', 'power_interface', 'raid_interface',
    'rescue_interface', 'storage_interface', 'vendor_interface',
    'traits', 'conductor_group', 'automated_clean', 'protected',
    'protected_reason', 'conductor', 'owner', 'lessee', 'allocation_uuid',
    'retired', 'retired_reason', 'network_data', 'boot_mode',
    'secure_boot', 'shard', 'parent_node', 'service_step',
    'disable_power_off', 'created_at', 'updated_at')

LIST_FIELDS = ('instance_uuid', 'maintenance', 'power_state',
               'provision_state', 'uuid', 'name')

# API field -> DB columns needed to render it
_DERIVED = {
    'chassis_uuid': ('chassis_id',),
    'allocation_uuid': ('allocation_id',),
    'traits': ('id',),
    'conductor': ('driver', 'conductor_group', 'uuid'),
}
DATETIME_FIELDS = frozenset(('provision_updated_at', 'created_at',
                             'updated_at', 'inspection_started_at',
                             'inspection_finished_at'))
STEP_FIELDS = frozenset(('clean_step', 'deploy_step', 'service_step'))
DICT_FIELDS = frozenset(('driver_info', 'driver_internal_info', 'extra',
                         'instance_info', 'properties', 'raid_config',
                         'target_raid_config', 'network_data'))
# booleans shown as false when unset
BOOL_FIELDS = frozenset(('retired', 'maintenance', 'console_enabled',
                         'protected', 'disable_power_off'))


# JSON fields shown as stored (no secrets to mask): a list page may hand
# them over as their stored text, embedded in the response unparsed
PASSED_THROUGH = (STEP_FIELDS | DICT_FIELDS) - {'driver_info',
                                                'instance_info'}


# driver_internal_info holds the agent's token while a ramdisk runs: the
# one secret a passed-through field holds (the service stores it nowhere
# else), found by its key
TOKEN_FIELD = 'driver_internal_info'
TOKEN_KEY_TEXT = '"%s"' % agent_tokens.TOKEN_KEY


def stored_json(value, token: bool = False):
    """A stored JSON field for the wire: its text unparsed, unless it is
    the field that holds the agent token (``token``) and holds it: the
    token is masked."""
    if type(value) is str:
        if not token or TOKEN_KEY_TEXT not in value:
            return orjson.Fragment(value)
        value = orjson.loads(value)
    value = value or {}
    if token and isinstance(value, dict) and \
            agent_tokens.TOKEN_KEY in value:
        value = dict(value)
        value[agent_tokens.TOKEN_KEY] = MASK
    return value


@functools.cache
def visible_fields(version: int) -> tuple[str, ...]:
    """The node fields API ``version`` shows, in order (a tuple, kept)."""
    hidden = versions.hidden_fields(versions.NODE_FIELDS, version)
    return tuple(f for f in ALL_FIELDS if f not in hidden)


@functools.cache
def visible_set(version: int) -> frozenset[str]:
    return frozenset(visible_fields(version))


def db_columns(fields: Iterable[str]) -> list[str]:
    cols = {'id', 'uuid'}
    for f in fields:
        cols.update(_DERIVED.get(f, (f,)))
    return sorted(cols)


def iso(value) -> str | None:
    if value is None:
        return None
    return value.isoformat() + '+00:00'


class Lookups:
    """Batched look-ups for a page of nodes (one query each)."""

    def __init__(self, rows: list[dict], fields: Iterable[str],
                 traits: dict[int, list[str]] | None = None) -> None:
        fields = set(fields)
        ids = [r['id'] for r in rows]
        if traits is not None:
            self.traits = traits  # read with the rows already
        else:
            self.traits = (db_traits.traits_for_nodes(ids)
                           if 'traits' in fields else {})
        self.chassis: dict[int, str] = {}
        if 'chassis_uuid' in fields:
            cids = {r['chassis_id'] for r in rows if r.get('chassis_id')}
            if cids:
                self.chassis = db_chassis.uuids_by_id(cids)
        self.allocations: dict[int, str] = {}
        if 'allocation_uuid' in fields:
            aids = {r['allocation_id'] for r in rows
                    if r.get('allocation_id')}
            if aids:
                self.allocations = db_allocations.uuids_by_id(aids)
        self.want_conductor = 'conductor' in fields


def conductor_of(row: dict) -> str | None:
    try:
        return state.RPC.host_for(row)
    except exception.NoValidHost:
        return None


class Conductors:
    """The conductor of each node of one page: the rings looked up once
    per hardware type and conductor group."""

    def __init__(self) -> None:
        self._rings: dict = {}

    def __call__(self, uuid: str, driver: str, group: str | None
                 ) -> str | None:
        key = (driver, group)
        try:
            ring = self._rings[key]
        except KeyError:
            ring = self._rings[key] = state.RPC.rings.ring_for(driver,
                                                               group)
        return None if ring is None else ring.get_host(uuid)


# how each field is rendered (anything else: the column as stored)
_PLAIN, _DATE, _DRIVER_INFO, _INSTANCE_INFO, _DICT, _PSTATE, _TRAITS, \
    _CHASSIS, _ALLOCATION, _CONDUCTOR, _BOOL = range(11)
_KINDS = {'driver_info': _DRIVER_INFO, 'instance_info': _INSTANCE_INFO,
          'provision_state': _PSTATE, 'traits': _TRAITS,
          'chassis_uuid': _CHASSIS, 'allocation_uuid': _ALLOCATION,
          'conductor': _CONDUCTOR}
_KINDS.update({f: _BOOL for f in BOOL_FIELDS})
_KINDS.update({f: _DATE for f in DATETIME_FIELDS})
_KINDS.update({f: _DICT for f in STEP_FIELDS | DICT_FIELDS
               if f not in _KINDS})


def sub_link_names(req) -> tuple[str, ...]:
    """The sub-resources a node links to in full views at this
    version."""
    subs = ['ports']
    if req.allows(versions.STATES_LINKS):
        subs.append('states')
    if req.allows(versions.PORTGROUP_SUBCONTROLLERS):
        subs.append('portgroups')
    if req.allows(versions.VOLUME):
        subs.append('volume')
    return tuple(subs)


@functools.lru_cache(maxsize=256)
def _plan(fields: tuple[str, ...], columns: tuple[str, ...] | None
          ) -> tuple:
    """How a Renderer shows ``fields`` (from rows of ``columns``): the
    columns to drop, the plain, date, stored JSON and boolean fields,
    and the others with their kinds; one plan per shape, kept."""
    plan = [(f, _KINDS.get(f, _PLAIN)) for f in fields]
    # rows holding just ``columns``: copy each row whole (in C) and
    # drop the few columns not shown, rather than pick field by field
    drop = None
    if columns is not None:
        shown = {f for f, _ in plan}
        drop = tuple(c for c in columns if c not in shown)
    # the common kinds in plain loops, the rest through the if-chain
    return (drop,
            tuple(f for f, k in plan if k == _PLAIN),
            tuple(f for f, k in plan if k == _DATE),
            tuple(f for f, k in plan if k == _DICT),
            tuple(f for f, k in plan if k == _BOOL),
            tuple((f, k) for f, k in plan
                  if k not in (_PLAIN, _DATE, _DICT, _BOOL)))


class Renderer:
    """Renders the nodes of one request: the per-field decisions and the
    link prefixes are made once, not once per node."""

    def __init__(self, req, fields: Iterable[str],
                 lookups: Lookups, links: bool = True,
                 sub_links: bool = False,
                 columns: Iterable[str] | None = None) -> None:
        (self.drop, self.plain, self.dates, self.dicts, self.bools,
         self.plan) = _plan(tuple(fields), None if columns is None
                            else tuple(columns))
        self.lookups = lookups
        self.hide_available = not req.allows(versions.AVAILABLE_STATE)
        self.links = links
        base = req.host_url
        self.self_prefix = base + '/v1/nodes/'
        self.book_prefix = base + '/nodes/'
        self.subs = sub_link_names(req) if sub_links else ()

    def _links(self, uuid: str, sub: str = '') -> list[dict]:
        tail = uuid + sub
        return [{'href': self.self_prefix + tail, 'rel': 'self'},
                {'href': self.book_prefix + tail, 'rel': 'bookmark'}]

    def __call__(self, row: dict) -> dict:
        get = row.get
        if self.drop is not None:
            out = dict(row)
            for c in self.drop:
                del out[c]
        else:
            out = {f: get(f) for f in self.plain}
        for f in self.dates:
            out[f] = iso(get(f))
        for f in self.dicts:
            v = get(f)
            # stored JSON text (see PASSED_THROUGH) goes out as it is
            out[f] = stored_json(v, f == TOKEN_FIELD)
        for f in self.bools:
            out[f] = bool(get(f))
        lookups = self.lookups
        for f, kind in self.plan:
            if kind == _DRIVER_INFO:
                out[f] = mask_secrets(get(f))
            elif kind == _INSTANCE_INFO:
                out[f] = mask_secrets(get(f), configdrive=True)
            elif kind == _PSTATE:
                ps = get(f)
                if ps == states.AVAILABLE and self.hide_available:
                    ps = None
                out[f] = ps
            elif kind == _TRAITS:
                out[f] = lookups.traits.get(row['id'], [])
            elif kind == _CHASSIS:
                out[f] = lookups.chassis.get(get('chassis_id'))
            elif kind == _ALLOCATION:
                out[f] = lookups.allocations.get(get('allocation_id'))
            else:  # _CONDUCTOR
                out[f] = conductor_of(row)
        if self.links:
            out['links'] = self._links(row['uuid'])
        for sub in self.subs:
            out[sub] = self._links(row['uuid'], '/' + sub)
        return out


def render(req, row: dict, fields: Iterable[str],
           lookups: Lookups | None = None, links: bool = True,
           sub_links: bool = False) -> dict:
    """One node as a dict with only ``fields`` (already version-checked).
    """
    return Renderer(req, fields, lookups or Lookups([row], fields), links,
                    sub_links)(row)
