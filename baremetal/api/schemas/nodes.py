"""Node create and patched-node schemas (Ironic's node schema, 1.x)."""

from baremetal.api import schemas
from baremetal.api import versions
from baremetal.common import exception

_STR = {'type': ['string', 'null']}
_BOOL = {'type': ['string', 'boolean', 'null']}
_DICT = {'type': ['object', 'null']}

_PROPERTIES = {
    'automated_clean': _BOOL,
    'boot_mode': {'type': ['string', 'null'], 'maxLength': 16},
    'chassis_uuid': _STR,
    'conductor_group': _STR,
    'console_enabled': _BOOL,
    'description': {'type': ['string', 'null'], 'maxLength': 4096},
    'disable_power_off': _BOOL,
    'driver': {'type': 'string'},
    'driver_info': _DICT,
    'extra': _DICT,
    'instance_info': _DICT,
    'instance_name': {'type': ['string', 'null'], 'minLength': 1,
                      'maxLength': 255},
    'instance_uuid': _STR,
    'lessee': _STR,
    'maintenance': _BOOL,
    'name': _STR,
    # Ironic also checks it against its network_data schema (see
    # doc/source/api/differences.rst); the type is checked here
    'network_data': _DICT,
    'owner': _STR,
    'parent_node': {'type': ['string', 'null'], 'maxLength': 36},
    'properties': _DICT,
    'resource_class': {'type': ['string', 'null'], 'maxLength': 80},
    'retired': _BOOL,
    'retired_reason': _STR,
    'secure_boot': _BOOL,
    'shard': _STR,
    'uuid': _STR,
}
for _iface in ('bios', 'boot', 'console', 'deploy', 'firmware', 'inspect',
               'management', 'network', 'power', 'raid', 'rescue',
               'storage', 'vendor'):
    _PROPERTIES['%s_interface' % _iface] = _STR

# ours also accepts these on create (Ironic 39 refuses them: see
# doc/source/api/differences.rst)
_CREATE_ALSO = {'protected': _BOOL, 'protected_reason': _STR,
                'maintenance_reason': _STR, 'target_raid_config': _DICT}

CREATE = {
    'type': 'object',
    'properties': dict(_PROPERTIES, **_CREATE_ALSO),
    'required': ['driver'],
    'additionalProperties': False,
}
# the patched node: what create accepts, plus the protection fields
PATCHED = dict(CREATE, additionalProperties=True, properties=dict(
    _PROPERTIES, protected=_BOOL, protected_reason=_STR))

create_validator = schemas.compile(CREATE)
patched_validator = schemas.compile(PATCHED)

# checked after the schema, as Ironic's extra validators
UUID_FIELDS = ('chassis_uuid', 'instance_uuid', 'uuid')

# what a PATCH may touch, in the order Ironic's message lists them
PATCH_ALLOWED = (
    'automated_clean', 'bios_interface', 'boot_interface', 'chassis_uuid',
    'conductor_group', 'console_interface', 'deploy_interface',
    'description', 'disable_power_off', 'driver', 'driver_info', 'extra',
    'inspect_interface', 'instance_info', 'instance_name', 'instance_uuid',
    'lessee', 'maintenance', 'management_interface', 'name',
    'network_data', 'network_interface', 'owner', 'power_interface',
    'properties', 'protected', 'protected_reason', 'raid_interface',
    'rescue_interface', 'resource_class', 'retired', 'retired_reason',
    'shard', 'storage_interface', 'vendor_interface', 'parent_node',
    'firmware_interface')
_PATCH_ALLOWED_SET = frozenset(PATCH_ALLOWED)


def check_patch_paths(ops: list[dict], version: int) -> None:
    """``Cannot patch /x. Only the following can be updated: ...``."""
    for op in ops:
        field = op['path'].split('/')[1]
        if version >= versions.PATCH_SPECIAL_KEYS:
            field = field.replace('~1', '/').replace('~0', '~')
        if field not in _PATCH_ALLOWED_SET:
            raise exception.InvalidParameterValue(
                err='Cannot patch %s. Only the following can be updated: '
                    '%s' % (op['path'], ', '.join(PATCH_ALLOWED)))


def patched_document(current: dict, updated: dict, ops: list[dict]) -> dict:
    return schemas.patched_document(PATCHED, current, updated, ops)
