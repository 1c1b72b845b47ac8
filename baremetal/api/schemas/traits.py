"""A node's traits (PUT /v1/nodes/{node}/traits[/{trait}]), as Ironic's
schemas: one trait (``Schema error for trait``) or the body holding the
list (``Schema error for body``)."""

from typing import Any

from baremetal.api import schemas

TRAIT = schemas.trait_schema()
BODY = {
    'type': 'object',
    'properties': {'traits': {'type': 'array', 'items': TRAIT}},
    'additionalProperties': False,
}

_trait = schemas.compile(TRAIT)
_body = schemas.compile(BODY)


def check_trait(trait: Any) -> None:
    schemas.validate(_trait, trait, 'trait')


def check_body(body: Any) -> None:
    schemas.validate(_body, body, 'body')
