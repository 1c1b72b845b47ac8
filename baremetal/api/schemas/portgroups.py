"""Portgroup create and patched-portgroup schema (as Ironic's)."""

from baremetal.api import schemas

CREATE = {
    'type': 'object',
    'properties': {
        'address': {'type': ['string', 'null']},
        'category': {'type': ['string', 'null'], 'maxLength': 80},
        'extra': {'type': ['object', 'null']},
        'mode': {'type': ['string', 'null'], 'maxLength': 255},
        'name': {'type': ['string', 'null']},
        'node_uuid': {'type': 'string'},
        'physical_network': {'type': ['string', 'null'], 'maxLength': 64},
        'properties': {'type': ['object', 'null']},
        'standalone_ports_supported': {
            'type': ['string', 'boolean', 'null']},
        'uuid': {'type': ['string', 'null']},
    },
    'required': ['node_uuid'],
    'additionalProperties': False,
}

BODY = schemas.Body(
    'portgroup', CREATE,
    patch_allowed=('address', 'extra', 'mode', 'name', 'node_uuid',
                   'properties', 'standalone_ports_supported',
                   'physical_network', 'category'),
    uuid_fields=('uuid', 'node_uuid'), mac_fields=('address',))
