"""Port create and patched-port schema (as Ironic's)."""

from baremetal.api import schemas

_BOOL = {'type': ['string', 'boolean', 'null']}

CREATE = {
    'type': 'object',
    'properties': {
        'address': {'type': 'string'},
        'extra': {'type': ['object', 'null']},
        'is_smartnic': _BOOL,
        # its keys are checked by the port controller (see
        # doc/source/api/differences.rst)
        'local_link_connection': {'type': ['null', 'object']},
        'node_ident': {'type': 'string'},
        'node_uuid': {'type': 'string'},
        'physical_network': {'type': ['string', 'null'], 'maxLength': 64},
        'portgroup_uuid': {'type': ['string', 'null']},
        'pxe_enabled': _BOOL,
        'uuid': {'type': ['string', 'null']},
        'name': {'type': ['string', 'null']},
        'description': {'type': ['string', 'null'], 'maxLength': 255},
        'vendor': {'type': ['string', 'null'], 'maxLength': 32},
        'category': {'type': ['string', 'null'], 'maxLength': 80},
        'available_for_dynamic_portgroup': {'type': 'boolean'},
    },
    'required': ['address'],
    'oneOf': [{'required': ['node_ident']}, {'required': ['node_uuid']}],
    'additionalProperties': False,
}

BODY = schemas.Body(
    'port', CREATE,
    patch_allowed=('address', 'extra', 'is_smartnic',
                   'local_link_connection', 'node_ident', 'node_uuid',
                   'physical_network', 'portgroup_uuid', 'pxe_enabled',
                   'name', 'description', 'vendor', 'category',
                   'available_for_dynamic_portgroup'),
    uuid_fields=('uuid', 'node_uuid', 'portgroup_uuid'),
    mac_fields=('address',))
