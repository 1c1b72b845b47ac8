"""Deploy template create and patched-template schema (as Ironic's:
the name is a trait, each step names a deploy interface)."""

from baremetal.api import schemas

# the interfaces whose steps a template may name, in Ironic's order
STEP_INTERFACES = ['vendor', 'power', 'management', 'firmware', 'deploy',
                   'bios', 'raid']
_NUMBER = {'anyOf': [{'type': 'integer', 'minimum': 0},
                     {'type': 'string', 'minLength': 1,
                      'pattern': '^[0-9]+$'}]}

STEP = {
    'type': 'object',
    'properties': {
        'args': {'type': 'object'},
        'interface': {'type': 'string', 'enum': STEP_INTERFACES},
        'priority': _NUMBER,
        'step': {'type': 'string', 'minLength': 1},
    },
    'required': ['interface', 'step', 'args', 'priority'],
    'additionalProperties': False,
}

CREATE = {
    'type': 'object',
    'properties': {
        'extra': {'type': ['object', 'null']},
        'name': schemas.trait_schema(),
        'steps': {'type': 'array', 'items': STEP, 'minItems': 1},
        'uuid': {'type': ['string', 'null']},
    },
    'required': ['steps', 'name'],
    'additionalProperties': False,
}

BODY = schemas.Body('template', CREATE,
                    patch_allowed=('extra', 'name', 'steps', 'description'))
