"""Notification payloads: Ironic's payload objects, built from rows.

Each payload is what oslo.versionedobjects would put on the wire for
Ironic's payload class of the same name and version::

    {"ironic_object.name": "NodeSetPowerStatePayload",
     "ironic_object.namespace": "ironic",
     "ironic_object.version": "1.17",
     "ironic_object.data": {...every field of that version...}}

Field lists and versions follow Ironic's notification payload classes
(doc/source/admin/notifications.rst says which event carries which);
datetimes are written as oslo.versionedobjects writes them
(``2016-01-26T20:41:03Z``).  Builders take the row as stored plus what
must be looked up elsewhere (traits, the UUIDs of related rows), so
they do no I/O.
"""

import datetime
from typing import Any

from baremetal.common import secrets

NAMESPACE = 'ironic'

# NodePayload 1.17: the node fields every node notification carries
NODE_FIELDS = (
    'clean_step', 'conductor_group', 'console_enabled', 'created_at',
    'deploy_step', 'description', 'disable_power_off', 'driver', 'extra',
    'boot_mode', 'secure_boot', 'inspection_finished_at',
    'inspection_started_at', 'instance_uuid', 'last_error', 'maintenance',
    'maintenance_reason', 'fault', 'name', 'bios_interface',
    'boot_interface', 'console_interface', 'deploy_interface',
    'inspect_interface', 'management_interface', 'network_interface',
    'power_interface', 'raid_interface', 'rescue_interface',
    'storage_interface', 'vendor_interface', 'owner', 'lessee',
    'power_state', 'properties', 'protected', 'protected_reason',
    'provision_state', 'provision_updated_at', 'resource_class', 'retired',
    'retired_reason', 'target_power_state', 'target_provision_state',
    'traits', 'updated_at', 'uuid')

# payload name -> (version, fields beyond NODE_FIELDS)
NODE_PAYLOADS = {
    'NodePayload': ('1.17', ()),
    'NodeSetPowerStatePayload': ('1.17', ('to_power',)),
    'NodeCorrectedPowerStatePayload': ('1.17', ('from_power',)),
    'NodeSetProvisionStatePayload': (
        '1.18', ('instance_info', 'driver_internal_info', 'event',
                 'previous_provision_state',
                 'previous_target_provision_state')),
    'NodeCRUDPayload': ('1.15', ('chassis_uuid', 'instance_info',
                                 'driver_info')),
}

# resource -> (payload name, version, fields); for the API's CRUD events
CRUD_PAYLOADS = {
    'chassis': ('ChassisCRUDPayload', '1.0', (
        'description', 'extra', 'created_at', 'updated_at', 'uuid')),
    'port': ('PortCRUDPayload', '1.8', (
        'address', 'extra', 'local_link_connection', 'pxe_enabled',
        'node_uuid', 'portgroup_uuid', 'physical_network', 'created_at',
        'updated_at', 'uuid', 'is_smartnic', 'name', 'description',
        'vendor', 'category', 'available_for_dynamic_portgroup')),
    'portgroup': ('PortgroupCRUDPayload', '1.3', (
        'address', 'category', 'extra', 'mode', 'name', 'node_uuid',
        'physical_network', 'properties', 'standalone_ports_supported',
        'created_at', 'updated_at', 'uuid', 'dynamic_portgroup')),
    'allocation': ('AllocationCRUDPayload', '1.1', (
        'uuid', 'name', 'node_uuid', 'state', 'last_error', 'owner',
        'resource_class', 'traits', 'candidate_nodes', 'extra',
        'created_at', 'updated_at')),
    'deploy_template': ('DeployTemplateCRUDPayload', '1.0', (
        'created_at', 'extra', 'name', 'steps', 'updated_at', 'uuid')),
    'volumeconnector': ('VolumeConnectorCRUDPayload', '1.0', (
        'extra', 'type', 'connector_id', 'node_uuid', 'created_at',
        'updated_at', 'uuid')),
    'volumetarget': ('VolumeTargetCRUDPayload', '1.0', (
        'boot_index', 'extra', 'node_uuid', 'properties', 'volume_id',
        'volume_type', 'created_at', 'updated_at', 'uuid')),
}

# the object part of a CRUD event type, as Ironic spells it on the wire
# (its class name in lower case: "deploytemplate", not the documented
# "deploy_template")
EVENT_OBJECT = {'deploy_template': 'deploytemplate'}

# JSON fields a payload shows as {} / [] when the row has none (as the
# API does); a missing boolean with a default gets that default
_DICTS = frozenset(('extra', 'properties', 'local_link_connection',
                    'instance_info', 'driver_info', 'driver_internal_info'))
_LISTS = frozenset(('traits', 'candidate_nodes', 'steps'))
_DEFAULTS = {'available_for_dynamic_portgroup': True,
             'is_smartnic': False, 'dynamic_portgroup': False}


def isotime(value: Any) -> Any:
    """A datetime as oslo.versionedobjects writes it (UTC, seconds)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC)
        return value.strftime('%Y-%m-%dT%H:%M:%SZ')
    return value


def _value(row: dict, name: str) -> Any:
    value = row.get(name)
    if value is None:
        if name in _DICTS:
            return {}
        if name in _LISTS:
            return []
        return _DEFAULTS.get(name)
    if name.endswith('_at'):
        return isotime(value)
    return value


def envelope(name: str, version: str, data: dict) -> dict:
    return {'ironic_object.name': name,
            'ironic_object.namespace': NAMESPACE,
            'ironic_object.version': version,
            'ironic_object.data': data}


def _mask_node(data: dict) -> None:
    """Secrets out, as Ironic's payloads have them: passwords in the
    JSON fields, and the image URL (it may carry credentials)."""
    for f in ('instance_info', 'driver_info', 'driver_internal_info'):
        if f in data:
            data[f] = secrets.mask_secrets(data[f])
    info = data.get('instance_info')
    if info and 'image_url' in info:
        info['image_url'] = secrets.MASK


def node(name: str, row: dict, traits: list[str] | None = None,
         **extra: Any) -> dict:
    """A node payload (``name`` from NODE_PAYLOADS) from a node row;
    ``extra`` gives the fields the row does not have (``to_power``,
    ``event``, ``chassis_uuid``, ...)."""
    version, more = NODE_PAYLOADS[name]
    data = {f: _value(row, f) for f in NODE_FIELDS}
    data['traits'] = sorted(traits or ())
    for f in more:
        data[f] = extra[f] if f in extra else _value(row, f)
    _mask_node(data)
    return envelope(name, version, data)


def crud(resource: str, row: dict) -> dict:
    """The CRUD payload of ``resource`` (a CRUD_PAYLOADS key) from its
    API view: the row with the derived fields (node_uuid, steps, ...)
    merged in."""
    name, version, fields = CRUD_PAYLOADS[resource]
    data = {f: _value(row, f) for f in fields}
    if resource == 'volumetarget':
        # CHAP secrets (auth_password) out; Ironic sends them as stored
        data['properties'] = secrets.mask_secrets(data['properties'])
    return envelope(name, version, data)


def event_type(obj: str, action: str, status: str) -> str:
    """``baremetal.<object>.<action>.<status>``."""
    return 'baremetal.%s.%s.%s' % (EVENT_OBJECT.get(obj, obj), action,
                                   status)
