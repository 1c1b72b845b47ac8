"""Node list pages whose JSON the database writes itself.

A page of 1,000 nodes with every field is 2.3 MB of JSON.  Rendering it
the usual way means the database handing over 50,000 values, the
driver's and SQLAlchemy's type conversions making Python objects of them
(dates parsed, only to be formatted again), a dict per node and orjson
encoding it all.  Here the database's JSON functions (in C: SQLite's
``json_object``, PostgreSQL's ``json_build_object``) write each node's
plain fields, dates, booleans and looked-up values as JSON text; Python
adds the JSON fields as they are stored, and what it alone knows: the
masked ``driver_info`` and ``instance_info``, the conductor the hash
ring picks and the links.  Each node goes into the page as an
``orjson.Fragment``.  The SQL is db/node_json.py's.

Where no field needs Python (a field list without the masked fields
and the conductor, as Nova's and the default list's), the database
writes each node whole, its stored JSON fields and links too, and the
page is one ``orjson.Fragment`` of their texts joined: no work per node
is left to Python.

The output equals ``node_view.Renderer``'s field for field (a unit test
compares the two over nodes of every shape, on both databases); only
the order of the keys in an object (and PostgreSQL's spaces around
colons) differ, which JSON does not give meaning to.  Other databases
(MySQL/MariaDB) render through ``node_view``.
"""

import functools
from collections.abc import Iterable

import orjson

from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.common import agent_tokens
from baremetal.db import node_json

# fields Python adds: masked, from the hash ring, or stored JSON text
_MASKED = frozenset(('driver_info', 'instance_info'))
_STORED_JSON = node_view.PASSED_THROUGH
_PYTHON_FIELDS = _MASKED | _STORED_JSON | {'conductor'}


def usable() -> bool:
    return node_json.usable()


@functools.lru_cache(maxsize=4096)
def _masked(field: str, stored: str | None) -> str:
    """``"field":<masked JSON>`` for a stored driver_info/instance_info
    (nodes often share them: remembered)."""
    value = orjson.loads(stored) if stored else None
    return '"%s":%s' % (field, orjson.dumps(node_view.mask_secrets(
        value, configdrive=field == 'instance_info')).decode())


def _esc(text: str) -> str:
    """``text`` as the inside of a JSON string."""
    if text.isascii() and text.replace('-', '').isalnum():
        return text     # a UUID, a host name: nothing to escape
    return orjson.dumps(text).decode()[1:-1]


class Page:
    """One request's page shape: the SELECT's columns and how a row
    becomes the node's JSON.  ``fields`` are already version-checked."""

    def __init__(self, req, fields: Iterable[str], sub_links: bool = False
                 ) -> None:
        hide = not req.allows(versions.AVAILABLE_STATE)
        fields = list(fields)
        written = [f for f in fields if f not in _PYTHON_FIELDS]
        # what Python adds, in field order: stored JSON as ('"field":',
        # column label); masked fields as (field, label); the conductor
        self.stored: list[tuple[str, str]] = []
        self.masked: list[tuple[str, str]] = []
        self.conductor = 'conductor' in fields
        for f in fields:
            if f in _STORED_JSON:
                self.stored.append(('"%s":' % f, '_raw_' + f))
            elif f in _MASKED:
                self.masked.append((f, '_raw_' + f))
        # the links every node carries, NUL standing for its UUID
        # (JSON escapes a NUL, so none can come from the host name)
        base = _esc(req.host_url)
        links = ('links',) + (node_view.sub_link_names(req) if sub_links
                              else ())
        self.tail = ''.join(
            ',"%s":[{"href":"%s/v1/nodes/\0%s","rel":"self"},'
            '{"href":"%s/nodes/\0%s","rel":"bookmark"}]'
            % (name, base, sub, base, sub)
            for name, sub in ((n, '' if n == 'links' else '/' + n)
                              for n in links)) + '}'
        stored = [label[5:] for _, label in self.stored]
        # the database writes whole nodes where Python adds nothing
        self.whole = not self.masked and not self.conductor
        if self.whole:
            self.columns = node_json.node_text(
                written, hide_available=hide,
                date_fields=node_view.DATETIME_FIELDS,
                never_null=node_view.BOOL_FIELDS, stored=stored,
                token=(agent_tokens.TOKEN_KEY, node_view.MASK),
                tail=self.tail.split('\0'))
            self.objects, self.raw_columns = [], frozenset()
            return
        # the SELECT's columns; what the database writes: JSON object
        # texts (their labels)
        self.columns, self.objects = node_json.page_columns(
            written, hide_available=hide,
            date_fields=node_view.DATETIME_FIELDS,
            never_null=node_view.BOOL_FIELDS, conductor=self.conductor,
            raw=[label[5:] for _, label in self.stored + self.masked])
        # selected as stored, not decoded
        self.raw_columns = frozenset(label for _, label in
                                     self.stored + self.masked)

    def render_page(self, rows: list) -> orjson.Fragment | list:
        """The page's ``nodes`` from its rows (when ``whole``, tuples of
        ``node_json.node_text``'s columns)."""
        if self.whole:
            return orjson.Fragment('[%s]' % ','.join([r[2] for r in rows]))
        return [self.render(r) for r in rows]

    def render(self, row: dict) -> orjson.Fragment:
        parts = []
        for label in self.objects:
            inner = row[label][1:-1]
            if inner:
                parts.append(inner)
        for prefix, label in self.stored:
            text = row[label] or '{}'
            if node_view.TOKEN_KEY_TEXT in text:
                text = orjson.dumps(node_view.stored_json(text)).decode()
            parts.append(prefix + text)
        for f, label in self.masked:
            parts.append(_masked(f, row[label]))
        if self.conductor:
            parts.append('"conductor":' + orjson.dumps(
                node_view.conductor_of(row)).decode())
        tail = self.tail.replace('\0', _esc(row['uuid']))
        if not parts:
            return orjson.Fragment('{' + tail[1:])
        return orjson.Fragment('{' + ','.join(parts) + tail)
