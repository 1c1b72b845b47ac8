"""Text every database can hold, from text a peer sent (a BMC's answer,
an agent's error): PostgreSQL refuses a NUL character in a text column,
and no database driver nor orjson encodes a lone UTF-16 surrogate (which
Python's JSON parser reads from ``"\\ud800"``).  Both are written as
their escapes instead, so the text still says what was sent."""

from typing import Any


def text(value: str) -> str:
    """``value`` with NUL characters and lone surrogates escaped."""
    if value.isascii():
        return value.replace('\x00', '\\x00') if '\x00' in value \
            else value
    return value.replace('\x00', '\\x00').encode(
        'utf-8', 'backslashreplace').decode('utf-8')


def deep(value: Any) -> Any:
    """``value`` (JSON: objects, arrays, texts...) with every text in it,
    keys too, made storable."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {deep(k): deep(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [deep(v) for v in value]
    return value


def bounded(value: str, size: int) -> str:
    """``text(value)`` cut to ``size`` characters (ending in "...")."""
    value = text(value)
    return value if len(value) <= size else value[:size - 3] + '...'
