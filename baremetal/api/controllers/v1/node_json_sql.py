"""Node list pages whose JSON the database writes itself.

A page of 1,000 nodes with every field is 2.3 MB of JSON.  Rendering it
the usual way means the database handing over 50,000 values, the
driver's and SQLAlchemy's type conversions making Python objects of them
(dates parsed, only to be formatted again), a dict per node and orjson
encoding it all.  Here the database writes each node's JSON text (SQL in
db/node_json.py, in C: SQLite's ``json_object``, PostgreSQL's
``to_json``), stored JSON fields passed through as stored, the links
from the request's host URL bound as parameters.  The page is the rows'
texts joined, one ``orjson.Fragment``; the agent's token is masked here,
in the rare node whose text holds its key.

Python adds only what it alone knows, in front of the database's text:
the masked ``driver_info`` and ``instance_info`` (remembered per stored
text: nodes often share them) and the conductor the hash ring picks.
Where a field list has none of them (Nova's, the default list's), no
work per node is left to Python.

The output equals ``node_view.Renderer``'s field for field (a unit test
compares the two over nodes of every shape, on both databases); only
the order of the keys in an object differs, which JSON does not give
meaning to.  Other databases
(MySQL/MariaDB) render through ``node_view``.
"""

import functools
from collections.abc import Iterable

import orjson

from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.common import agent_tokens
from baremetal.db import node_json

# fields Python adds: masked, or from the hash ring
_MASKED = ('driver_info', 'instance_info')
_PYTHON_FIELDS = frozenset(_MASKED) | {'conductor'}


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


def page(req, fields: Iterable[str], sub_links: bool = False) -> 'Page':
    """The ``Page`` of a request: one per shape, kept (building one took
    0.1-0.3 ms of a page that takes 1)."""
    return _page(tuple(fields), not req.allows(versions.AVAILABLE_STATE),
                 node_view.sub_link_names(req) if sub_links else (),
                 req.host_url, node_json.dialect())


@functools.lru_cache(maxsize=64)
def _page(*shape) -> 'Page':
    return Page(*shape)


class Page:
    """A page shape: the SELECT's columns and how a row becomes the
    node's JSON.  ``fields`` are already version-checked; ``hide``: the
    'available' state shows as null; ``sub_links``: the sub-resources
    each node links to; ``host_url``: the links' base; ``dialect``: the
    database's (the SQL is its own)."""

    def __init__(self, fields: tuple[str, ...], hide: bool,
                 sub_links: tuple[str, ...], host_url: str,
                 dialect: str) -> None:
        written = [f for f in fields if f not in _PYTHON_FIELDS
                   and f not in node_view.PASSED_THROUGH]
        stored = [f for f in fields if f in node_view.PASSED_THROUGH]
        # what Python adds, in field order
        self.masked = [f for f in fields if f in _MASKED]
        self.conductor = 'conductor' in fields
        # the links every node carries, NUL standing for its UUID
        # (JSON escapes a NUL, so none can come from the host name)
        base = _esc(host_url)
        links = ('links',) + sub_links
        self.tail = ''.join(
            ',"%s":[{"href":"%s/v1/nodes/\0%s","rel":"self"},'
            '{"href":"%s/nodes/\0%s","rel":"bookmark"}]'
            % (name, base, sub, base, sub)
            for name, sub in ((n, '' if n == 'links' else '/' + n)
                              for n in links)) + '}'
        # the database writes whole nodes where Python adds nothing;
        # else all but the masked fields and the conductor, which
        # Python puts first
        self.whole = not self.masked and not self.conductor
        also = self.masked + (['driver', 'conductor_group']
                              if self.conductor else [])
        self.columns = node_json.node_text(
            written, hide_available=hide,
            date_fields=node_view.DATETIME_FIELDS,
            never_null=node_view.BOOL_FIELDS, stored=stored,
            tail=self.tail.split('\0'), whole=self.whole, also=also)
        self.stored = stored
        # the agent's token is looked for only where it can be
        self.token = node_view.TOKEN_FIELD in stored
        # selected as stored, not decoded
        self.raw_columns = frozenset(self.masked)
        # after Python's members: a comma where the database's text
        # starts with a member (not with the links' comma)
        self._joint = ',' if written or stored else ''
        # the rows' columns: id, uuid, the text, then ``also``
        self._masked_at = [(f, 3 + i) for i, f in enumerate(self.masked)]
        self._driver_at = 3 + len(self.masked)

    def render_page(self, rows: list) -> orjson.Fragment:
        """The page's ``nodes`` from its rows: tuples of
        ``node_json.node_text``'s columns."""
        if self.whole:
            texts = [r[2] for r in rows]
            if not texts:
                return orjson.Fragment('[]')
            if self.token and any(node_view.TOKEN_KEY_TEXT in t
                                  for t in texts):
                texts = [self._token_masked(t) for t in texts]
            # the brackets put with the first and the last node: the
            # page's text made by one join (formatted again, a page of
            # Nova's 550 KB took 0.15 ms more)
            texts[0] = '[' + texts[0]
            texts[-1] += ']'
            return orjson.Fragment(','.join(texts))
        # the page's text in pieces, joined once (a 660 KB detail page
        # copied once, not three times)
        out = []
        add = out.append
        masked_at, joint = self._masked_at, self._joint
        conductor = node_view.Conductors() if self.conductor else None
        key = ',"conductor":' if masked_at else '"conductor":'
        d = self._driver_at
        for row in rows:
            add(',{' if out else '[{')
            add(','.join([_masked(f, row[i]) for f, i in masked_at]))
            if conductor is not None:
                add(key)
                add(_host(conductor(row[1], row[d], row[d + 1])))
            add(joint)
            add(self._token_masked(row[2]) if self.token else row[2])
        add(']' if out else '[]')
        return orjson.Fragment(''.join(out))

    def _token_masked(self, text: str) -> str:
        """A node's text (whole or not) with the agent's token masked
        where its driver_internal_info holds it at its top level (rare:
        looked for in the text first)."""
        if node_view.TOKEN_KEY_TEXT not in text:
            return text
        node = orjson.loads(text if self.whole else '{' + text)
        info = node[node_view.TOKEN_FIELD]
        if isinstance(info, dict) and agent_tokens.TOKEN_KEY in info:
            info[agent_tokens.TOKEN_KEY] = node_view.MASK
        text = orjson.dumps(node).decode()
        return text if self.whole else text[1:]


@functools.lru_cache(maxsize=256)
def _host(host: str | None) -> str:
    return orjson.dumps(host).decode()
