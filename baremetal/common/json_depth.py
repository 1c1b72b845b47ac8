"""One bound on how deeply untrusted JSON may nest ([api]
max_json_body_depth): request bodies, JSON-patch values, agent lookups,
heartbeats and command results.

Parsing very deep JSON exhausts Python's recursion limit (a 500 where a
400 belongs), and everything that walks such a value afterwards would too.
``loads`` parses, turns a RecursionError into ``TooDeep``, and measures
the parsed value's depth without recursion.
"""

import json
from typing import Any


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
