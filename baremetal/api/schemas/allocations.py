"""Allocation create schema (as Ironic's; its messages read
``Schema error: ...``, naming no resource)."""

from baremetal.api import schemas

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'(?i)^[A-Z0-9-._~]+$'}
_UUID_OR_NAME = {'anyOf': [{'type': 'string', 'format': 'uuid'}, _NAME]}

CREATE = {
    'type': 'object',
    'properties': {
        'candidate_nodes': {'type': ['array', 'null'],
                            'items': _UUID_OR_NAME},
        'extra': {'type': ['object', 'null']},
        'name': {'type': ['string', 'null']},
        'node': {'type': ['string', 'null']},
        'owner': {'type': ['string', 'null'], 'maxLength': 255},
        'resource_class': {'type': ['string', 'null'], 'maxLength': 80},
        'traits': {'type': ['array', 'null'],
                   'items': schemas.trait_schema()},
        'uuid': {'type': ['string', 'null']},
    },
    'additionalProperties': False,
}

BODY = schemas.Body(None, CREATE, patch_allowed=('name', 'extra'))
