"""One bound on how deeply untrusted JSON may nest ([api]
max_json_body_depth): request bodies, JSON-patch values, agent lookups,
heartbeats and command results.

Parsing very deep JSON exhausts Python's recursion limit (a 500 where a
400 belongs), and everything that walks such a value afterwards would too.
``loads`` parses, turns a RecursionError into ``TooDeep``, and measures
the parsed value's depth without recursion.

``strict`` parses a request body as the service can keep it: JSON as RFC
8259 has it (no ``NaN`` or ``Infinity``, no lone UTF-16 surrogate in a
string, UTF-8 only), no integer beyond 64 bits, which neither the JSON
encoder of the database columns nor the databases' integers hold, and
no NUL character, which PostgreSQL keeps in neither text nor JSON.
Python's own parser accepts all of these, and they failed later, when
stored (a 500) or silently changed (``NaN`` stored as ``null``).
"""

import json
import re
from typing import Any

import orjson


class TooDeep(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__('JSON nested deeper than %d levels' % limit)
        self.limit = limit


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep
    (``{}`` and ``[]`` are one level, ``{"a": [1]}`` two)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if level > limit:
            return True
        stack.extend((c, level + 1) for c in children
                     if isinstance(c, (dict, list)))
    return False


def check(value: Any, limit: int) -> Any:
    """``value``, or TooDeep."""
    if depth_exceeds(value, limit):
        raise TooDeep(limit)
    return value


def loads(text, limit: int, parse=json.loads) -> Any:
    """Parse ``text`` (str or bytes) with ``parse``; TooDeep beyond
    ``limit``, ValueError for what is not JSON."""
    try:
        value = parse(text)
    except RecursionError:
        raise TooDeep(limit) from None
    return check(value, limit)


# integers orjson and the databases keep exactly; orjson reads larger
# ones as floats (inexact), so text holding a run of this many digits is
# read again to tell
INT_MIN, INT_MAX = -2 ** 63, 2 ** 64 - 1
_LONG_DIGITS = re.compile(rb'[0-9]{19}')


def _integer(text: str) -> int:
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise ValueError('the integer %s is beyond 64 bits' % text)
    return value


def _constant(name: str) -> None:
    raise ValueError('%s is not a JSON value' % name)


_CHECKING = json.JSONDecoder(parse_int=_integer, parse_constant=_constant)


def strict(text) -> Any:
    """``text`` (bytes or str) parsed: ValueError for what is not JSON
    as RFC 8259 has it, holds an integer beyond 64 bits or a NUL.  What
    nests deeper than orjson reads (1,024 levels) Python's parser reads,
    up to its recursion limit (RecursionError beyond it: ``loads``
    makes that TooDeep)."""
    raw = text.encode() if isinstance(text, str) else text
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if not str(e).startswith('depth limit exceeded'):
            # Python's parser names what is wrong more plainly (NaN, a
            # missing comma); what it takes (a lone surrogate, 1e999) is
            # refused with orjson's words
            _CHECKING.decode(_text(text))
            raise
        # deeper than orjson goes: Python's parser says how deep
        value = _CHECKING.decode(_text(text))
    else:
        if _LONG_DIGITS.search(raw):
            _CHECKING.decode(_text(text))  # a ValueError: a long integer
    if b'\\u0000' in raw and _holds_nul(value):
        raise ValueError('a string holds a NUL character (\\u0000)')
    return value


def _holds_nul(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if '\x00' in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _text(text) -> str:
    return text.decode('utf-8') if isinstance(text, (bytes, bytearray)) \
        else text
