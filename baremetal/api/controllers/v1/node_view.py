"""How a node looks on the wire, per microversion."""

from collections.abc import Iterable

from oslo_utils import strutils

from baremetal.api import state
from baremetal.api import versions
from baremetal.common import exception
from baremetal.common import states
from baremetal.db import api as db

MASK = '******'

# Every field the node API can show, in Ironic's order.
ALL_FIELDS = (
    'uuid', 'name', 'description', 'chassis_uuid', 'driver',
    'driver_info', 'driver_internal_info', 'extra', 'instance_info',
    'instance_uuid', 'last_error', 'maintenance', 'maintenance_reason',
    'fault', 'power_state', 'target_power_state', 'provision_state',
    'target_provision_state', 'provision_updated_at', 'console_enabled',
    'properties', 'reservation', 'resource_class', 'clean_step',
    'deploy_step', 'raid_config', 'target_raid_config',
    'inspection_started_at', 'inspection_finished_at',
    'bios_interface', 'boot_interface', 'console_interface',
    'deploy_interface', 'inspect_interface', 'management_interface',
    'network_interface', 'power_interface', 'raid_interface',
    'rescue_interface', 'storage_interface', 'vendor_interface',
    'traits', 'conductor_group', 'automated_clean', 'protected',
    'protected_reason', 'conductor', 'owner', 'allocation_uuid',
    'retired', 'retired_reason', 'created_at', 'updated_at')

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
STEP_FIELDS = frozenset(('clean_step', 'deploy_step'))
DICT_FIELDS = frozenset(('driver_info', 'driver_internal_info', 'extra',
                         'instance_info', 'properties', 'raid_config',
                         'target_raid_config'))


def visible_fields(version: int) -> list[str]:
    hidden = versions.hidden_fields(versions.NODE_FIELDS, version)
    return [f for f in ALL_FIELDS if f not in hidden]


def db_columns(fields: Iterable[str]) -> list[str]:
    cols = {'id', 'uuid'}
    for f in fields:
        cols.update(_DERIVED.get(f, (f,)))
    return sorted(cols)


def iso(value) -> str | None:
    if value is None:
        return None
    return value.isoformat() + '+00:00'


def mask_secrets(info: dict | None, configdrive: bool = False) -> dict:
    if not info:
        return {}
    out = strutils.mask_dict_password(info, MASK)
    if configdrive and 'configdrive' in out:
        out['configdrive'] = MASK
    return out


class Lookups:
    """Batched look-ups for a page of nodes (one query each)."""

    def __init__(self, rows: list[dict], fields: Iterable[str],
                 traits: dict[int, list[str]] | None = None) -> None:
        fields = set(fields)
        ids = [r['id'] for r in rows]
        if traits is not None:
            self.traits = traits  # read with the rows already
        else:
            self.traits = (db.traits_for_nodes(ids) if 'traits' in fields
                           else {})
        self.chassis: dict[int, str] = {}
        if 'chassis_uuid' in fields:
            cids = {r['chassis_id'] for r in rows if r.get('chassis_id')}
            if cids:
                t = db.T['chassis']
                self.chassis = {r['id']: r['uuid'] for r in db.query(
                    t, (t.c.id.in_(cids),), columns=('id', 'uuid'))}
        self.allocations: dict[int, str] = {}
        if 'allocation_uuid' in fields:
            aids = {r['allocation_id'] for r in rows
                    if r.get('allocation_id')}
            if aids:
                t = db.T['allocations']
                self.allocations = {r['id']: r['uuid'] for r in db.query(
                    t, (t.c.id.in_(aids),), columns=('id', 'uuid'))}
        self.want_conductor = 'conductor' in fields


def conductor_of(row: dict) -> str | None:
    try:
        return state.RPC.host_for(row)
    except exception.NoValidHost:
        return None


def render(req, row: dict, fields: Iterable[str],
           lookups: Lookups | None = None, links: bool = True,
           sub_links: bool = False) -> dict:
    """One node as a dict with only ``fields`` (already version-checked).
    """
    lookups = lookups or Lookups([row], fields)
    out = {}
    for f in fields:
        if f in DATETIME_FIELDS:
            out[f] = iso(row.get(f))
        elif f == 'driver_info':
            out[f] = mask_secrets(row.get(f))
        elif f == 'instance_info':
            out[f] = mask_secrets(row.get(f), configdrive=True)
        elif f in STEP_FIELDS:
            out[f] = row.get(f) or {}
        elif f in DICT_FIELDS:
            out[f] = row.get(f) or {}
        elif f == 'provision_state':
            ps = row.get(f)
            if ps == states.AVAILABLE and not req.allows(
                    versions.AVAILABLE_STATE):
                ps = None
            out[f] = ps
        elif f == 'target_provision_state':
            out[f] = row.get(f)
        elif f == 'traits':
            out[f] = lookups.traits.get(row['id'], [])
        elif f == 'chassis_uuid':
            out[f] = lookups.chassis.get(row.get('chassis_id'))
        elif f == 'allocation_uuid':
            out[f] = lookups.allocations.get(row.get('allocation_id'))
        elif f == 'conductor':
            out[f] = conductor_of(row)
        elif f == 'retired':
            out[f] = bool(row.get(f))
        elif f in ('maintenance', 'console_enabled', 'protected'):
            out[f] = bool(row.get(f))
        else:
            out[f] = row.get(f)
    if links:
        out['links'] = req.links('nodes', row['uuid'])
    if sub_links:
        uuid = row['uuid']
        out['ports'] = req.links('nodes', uuid, 'ports')
        out['states'] = req.links('nodes', uuid, 'states')
        if req.allows(versions.PORTGROUP_SUBCONTROLLERS):
            out['portgroups'] = req.links('nodes', uuid, 'portgroups')
        if req.allows(versions.VOLUME):
            out['volume'] = req.links('nodes', uuid, 'volume')
    return out
