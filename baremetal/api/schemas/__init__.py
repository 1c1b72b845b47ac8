"""Request-body JSON schemas, one module per resource, as Ironic's.

``compile`` builds a validator once (at import of the resource's schema
module); ``validate`` checks a body (or, for PATCH, the patched
document) and turns the first jsonschema error into the 400 Ironic
answers: ``Schema error for <name>: <jsonschema message>``, followed by
``. Possible root cause: <message>`` when the error is a combination
(``anyOf``/``oneOf``) whose best-matching branch says more.
"""

import dataclasses
from typing import Any

import jsonschema
import os_traits
from jsonschema import exceptions as js_exc

from baremetal.api import versions
from baremetal.common import exception
from baremetal.common import mac_address
from baremetal.db import rows as db_rows

_FORMATS = jsonschema.FormatChecker(())


@_FORMATS.checks('uuid')
def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or db_rows.is_uuid_like(value)


def compile(schema: dict) -> jsonschema.protocols.Validator:
    """A validator for ``schema`` (JSON Schema draft 7), checked once."""
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=_FORMATS)


def message(err: js_exc.ValidationError) -> str:
    """jsonschema's message, with the root cause of a combination."""
    text = err.message
    cause = None
    current = err
    while current.context:
        current = js_exc.best_match(current.context)
        cause = current.message
    if cause is not None:
        text += '. Possible root cause: %s' % cause
    return text


def validate(validator: jsonschema.protocols.Validator, body: Any,
             name: str | None) -> None:
    """400 (``InvalidParameterValue``) unless ``body`` is valid; ``name``
    is what Ironic's message names (``node``, ``patch``), None for the
    resources whose message reads ``Schema error: ...``."""
    err = js_exc.best_match(validator.iter_errors(body))
    if err is None:
        return
    prefix = 'Schema error for %s: ' % name if name else 'Schema error: '
    raise exception.InvalidParameterValue(err=prefix + message(err))


def check_uuid(name: str, value: Any) -> None:
    """Ironic's ``Expected UUID for <field>: <value>`` (None passes)."""
    if value is not None and not (isinstance(value, str)
                                  and db_rows.is_uuid_like(value)):
        raise exception.InvalidParameterValue(
            err='Expected UUID for %s: %s' % (name, value))


def patched_document(schema: dict, current: dict, updated: dict,
                     ops: list[dict]) -> dict:
    """What a PATCH result is validated as: the schema's fields the patch
    changed, and its required ones (a field the patch removes is absent,
    not null). Ironic checks the whole patched document; the fields the
    patch left alone were checked when written, so the answer is the
    same and the cost on the hot path a fraction."""
    props = schema['properties']
    keep = set(schema.get('required', ()))
    for branch in schema.get('oneOf', ()):
        keep.update(branch.get('required', ()))
    removed = {op['path'][1:] for op in ops if op['op'] == 'remove'}
    return {k: v for k, v in updated.items()
            if k in props and k not in removed and
            (k in keep or current.get(k) != v)}


def check_mac(name: str, value: Any) -> None:
    """Ironic's ``Expected valid MAC address for <field>: <value>``."""
    if value is None:
        return
    if mac_address.normalized(value) is None:
        raise exception.InvalidParameterValue(
            err='Expected valid MAC address for %s: %s' % (name, value))


# a trait: a custom one or one of the standard (os-traits) names
CUSTOM_TRAIT_PATTERN = '^CUSTOM_[A-Z0-9_]+$'


def trait_schema() -> dict:
    return {'type': 'string', 'minLength': 1, 'maxLength': 255,
            'anyOf': [{'pattern': CUSTOM_TRAIT_PATTERN},
                      {'enum': list(os_traits.get_traits())}]}


@dataclasses.dataclass(frozen=True)
class Body:
    """A resource's request-body checks, in Ironic's order: the schema
    (``Schema error for <name>``), then UUID and MAC fields; for a
    PATCH, the fields it may touch (``Cannot patch /x. Only the
    following can be updated: ...``), then the patched document."""
    name: str | None
    schema: dict
    patch_allowed: tuple[str, ...] = ()
    uuid_fields: tuple[str, ...] = ('uuid',)
    mac_fields: tuple[str, ...] = ()
    create: Any = dataclasses.field(init=False, compare=False)
    patched: Any = dataclasses.field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, 'create', compile(self.schema))
        object.__setattr__(self, 'patched', compile(self.schema))

    def check_create(self, body: Any) -> None:
        validate(self.create, body, self.name)
        self._check_formats(body)

    def _check_formats(self, doc: dict) -> None:
        for f in self.uuid_fields:
            check_uuid(f, doc.get(f))
        for f in self.mac_fields:
            check_mac(f, doc.get(f))

    def check_patch_paths(self, ops: list[dict], version: int) -> None:
        if not self.patch_allowed:
            return
        for op in ops:
            field = op['path'].split('/')[1]
            if version >= versions.PATCH_SPECIAL_KEYS:
                field = field.replace('~1', '/').replace('~0', '~')
            if field not in self.patch_allowed:
                raise exception.InvalidParameterValue(
                    err='Cannot patch %s. Only the following can be '
                        'updated: %s' % (op['path'],
                                         ', '.join(self.patch_allowed)))

    def check_patched(self, current: dict, updated: dict,
                      ops: list[dict]) -> None:
        """The patched document as Ironic checks it (see
        ``patched_document``)."""
        doc = patched_document(self.schema, current, updated, ops)
        validate(self.patched, doc, 'patch')
        self._check_formats({k: v for k, v in doc.items()
                             if k != 'uuid'})
