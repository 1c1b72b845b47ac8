"""Runbook create schemas (as Ironic's): before API 1.112 the name is a
trait; from 1.112 a URL-safe name, and a description."""

import copy

from baremetal.api import schemas
from baremetal.api import versions
from baremetal.api.schemas import deploy_templates

STEP = {
    'type': 'object',
    'properties': {
        'args': {'type': 'object'},
        'interface': {'type': 'string',
                      'enum': deploy_templates.STEP_INTERFACES},
        'step': {'type': 'string', 'minLength': 1},
        'order': deploy_templates.STEP['properties']['priority'],
    },
    'required': ['interface', 'step', 'order'],
    'additionalProperties': False,
}

CREATE = {
    'type': 'object',
    'properties': {
        'uuid': {'type': ['string', 'null']},
        'name': schemas.trait_schema(),
        'steps': {'type': 'array', 'items': STEP, 'minItems': 1},
        'disable_ramdisk': {'type': ['boolean', 'null']},
        'extra': {'type': ['object', 'null']},
        'public': {'type': ['boolean', 'null']},
        'owner': {'type': ['string', 'null'], 'maxLength': 255},
    },
    'required': ['steps', 'name'],
    'additionalProperties': False,
}

CREATE_1_112 = copy.deepcopy(CREATE)
CREATE_1_112['properties'].update(
    name={'type': 'string', 'minLength': 1, 'maxLength': 255,
          'pattern': r'^[A-Za-z0-9\-._~]+$'},
    description={'type': ['string', 'null'], 'maxLength': 255})

_BODY = schemas.Body('runbook', CREATE)
_BODY_1_112 = schemas.Body('runbook', CREATE_1_112)


def body_for(version: int) -> schemas.Body:
    return _BODY_1_112 if version >= versions.RUNBOOK_TRAITS else _BODY
