"""Request-body JSON schemas, one module per resource, as Ironic's.

``compile`` builds a validator once (at import of the resource's schema
module); ``validate`` checks a body (or, for PATCH, the patched
document) and turns the first jsonschema error into the 400 Ironic
answers: ``Schema error for <name>: <jsonschema message>``, followed by
``. Possible root cause: <message>`` when the error is a combination
(``anyOf``/``oneOf``) whose best-matching branch says more.
"""

from typing import Any

import jsonschema
from jsonschema import exceptions as js_exc

from baremetal.common import exception
from baremetal.db import api as db

_FORMATS = jsonschema.FormatChecker(())


@_FORMATS.checks('uuid')
def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or db.is_uuid_like(value)


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
                                  and db.is_uuid_like(value)):
        raise exception.InvalidParameterValue(
            err='Expected UUID for %s: %s' % (name, value))
