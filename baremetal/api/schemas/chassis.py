"""Chassis create and patched-chassis schema (as Ironic's)."""

from baremetal.api import schemas

CREATE = {
    'type': 'object',
    'properties': {
        'description': {'type': ['string', 'null'], 'maxLength': 255},
        'extra': {'type': ['object', 'null']},
        'uuid': {'type': ['string', 'null']},
    },
    'additionalProperties': False,
}

BODY = schemas.Body('chassis', CREATE,
                    patch_allowed=('uuid', 'extra', 'description'))
