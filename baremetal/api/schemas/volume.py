"""Volume connector and target create and patched-document schemas (as
Ironic's)."""

from baremetal.api import schemas

CONNECTOR = {
    'type': 'object',
    'properties': {
        'connector_id': {'type': 'string', 'maxLength': 255},
        'extra': {'type': ['object', 'null']},
        'node_uuid': {'type': 'string'},
        'type': {'type': 'string'},
        'uuid': {'type': ['string', 'null']},
    },
    'required': ['connector_id', 'node_uuid', 'type'],
    'additionalProperties': False,
}

TARGET = {
    'type': 'object',
    'properties': {
        'boot_index': {'type': 'integer'},
        'extra': {'type': ['object', 'null']},
        'node_uuid': {'type': 'string'},
        'properties': {'type': ['object', 'null']},
        'uuid': {'type': ['string', 'null']},
        'volume_id': {'type': 'string', 'maxLength': 36},
        'volume_type': {'type': 'string', 'maxLength': 64},
    },
    'required': ['boot_index', 'node_uuid', 'volume_id', 'volume_type'],
    'additionalProperties': False,
}

CONNECTOR_BODY = schemas.Body(
    'connector', CONNECTOR,
    patch_allowed=('connector_id', 'extra', 'node_uuid', 'type'),
    uuid_fields=('uuid', 'node_uuid'))
TARGET_BODY = schemas.Body(
    'target', TARGET,
    patch_allowed=('boot_index', 'extra', 'node_uuid', 'properties',
                   'volume_id', 'volume_type'),
    uuid_fields=('uuid', 'node_uuid'))
