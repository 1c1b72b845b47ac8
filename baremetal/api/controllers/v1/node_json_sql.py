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
``orjson.Fragment``.

The output equals ``node_view.Renderer``'s field for field (a unit test
compares the two over nodes of every shape, on both databases); only
the order of the keys in an object (and PostgreSQL's spaces around
colons) differ, which JSON does not give meaning to.  Other databases
(MySQL/MariaDB) render through ``node_view``.
"""

import functools
from collections.abc import Iterable

import orjson
import sqlalchemy as sa

from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.common import states
from baremetal.db import api as db

N = db.NODES

# SQLite's default limit is 127 arguments per function call and
# PostgreSQL's 100: an object takes two per field, so a long run of
# fields is split
_FIELDS_PER_OBJECT = 40

# fields Python adds: masked, from the hash ring, or stored JSON text
_MASKED = frozenset(('driver_info', 'instance_info'))
_STORED_JSON = node_view.PASSED_THROUGH
_PYTHON_FIELDS = _MASKED | _STORED_JSON | {'conductor'}


class _SQLite:
    @staticmethod
    def date(col: str) -> str:
        # stored by SQLAlchemy as 'YYYY-MM-DD HH:MM:SS.ffffff'; shown as
        # datetime.isoformat() does it (no fraction when it is zero) +
        # UTC
        return (f"CASE WHEN {col} IS NULL THEN NULL "
                f"WHEN substr({col}, 21) IN ('', '000000') "
                f"THEN substr({col}, 1, 10) || 'T' || substr({col}, 12, 8)"
                " || '+00:00' "
                f"ELSE substr({col}, 1, 10) || 'T' || substr({col}, 12) "
                "|| '+00:00' END")

    traits = ("json((SELECT json_group_array(trait) FROM "
              "(SELECT trait FROM node_traits "
              "WHERE node_traits.node_id = nodes.id ORDER BY trait)))")

    @staticmethod
    def boolean(col: str, never_null: bool) -> str:
        if never_null:
            return "json(CASE WHEN %s THEN 'true' ELSE 'false' END)" % col
        return (f"json(CASE WHEN {col} IS NULL THEN 'null' WHEN {col} "
                "THEN 'true' ELSE 'false' END)")

    @staticmethod
    def obj(pairs: str) -> str:
        return 'json_object(%s)' % pairs


class _PostgreSQL:
    @staticmethod
    def date(col: str) -> str:
        # timestamp without time zone, in UTC
        return (f"CASE WHEN {col} IS NULL THEN NULL "
                f"WHEN date_trunc('second', {col}) = {col} "
                f"THEN to_char({col}, 'YYYY-MM-DD\"T\"HH24:MI:SS') "
                "|| '+00:00' "
                f"ELSE to_char({col}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
                "|| '+00:00' END")

    traits = ("COALESCE((SELECT json_agg(node_traits.trait ORDER BY "
              "node_traits.trait) FROM node_traits "
              "WHERE node_traits.node_id = nodes.id), '[]'::json)")

    @staticmethod
    def boolean(col: str, never_null: bool) -> str:
        return 'COALESCE(%s, false)' % col if never_null else col

    @staticmethod
    def obj(pairs: str) -> str:
        return 'json_build_object(%s)::text' % pairs


_DIALECTS = {'sqlite': _SQLite, 'postgresql': _PostgreSQL}


def usable() -> bool:
    return db.engine().dialect.name in _DIALECTS


def _value(sql, field: str, hide_available: bool) -> str:
    """The SQL expression of one field's JSON value."""
    if field in node_view.DATETIME_FIELDS:
        return sql.date('nodes.' + field)
    if field == 'traits':
        return sql.traits
    if field == 'chassis_uuid':
        return ("(SELECT chassis.uuid FROM chassis "
                "WHERE chassis.id = nodes.chassis_id)")
    if field == 'allocation_uuid':
        return ("(SELECT allocations.uuid FROM allocations "
                "WHERE allocations.id = nodes.allocation_id)")
    if field == 'provision_state' and hide_available:
        return ("CASE WHEN nodes.provision_state = '%s' THEN NULL "
                "ELSE nodes.provision_state END" % states.AVAILABLE)
    col = 'nodes.' + field
    if isinstance(N.c[field].type, sa.Boolean):
        # BOOL_FIELDS are never null on the wire
        return sql.boolean(col, field in node_view.BOOL_FIELDS)
    return col


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
        sql = _DIALECTS[db.engine().dialect.name]
        fields = list(fields)
        self.columns: list = [N.c.id, N.c.uuid]
        # what the database writes: JSON object texts (their labels)
        self.objects: list[str] = []
        written = [f for f in fields if f not in _PYTHON_FIELDS]
        for i in range(0, len(written), _FIELDS_PER_OBJECT):
            label = '_j%d' % i
            expr = sql.obj(', '.join(
                "'%s', %s" % (f, _value(sql, f, hide))
                for f in written[i:i + _FIELDS_PER_OBJECT]))
            self.columns.append(sa.literal_column(expr).label(label))
            self.objects.append(label)
        # what Python adds, in field order: stored JSON as ('"field":',
        # column label); masked fields as (field, label); the conductor
        self.stored: list[tuple[str, str]] = []
        self.masked: list[tuple[str, str]] = []
        self.conductor = 'conductor' in fields
        if self.conductor:
            self.columns += [N.c.driver, N.c.conductor_group]
        for f in fields:
            if f in _STORED_JSON:
                self.stored.append(('"%s":' % f, '_raw_' + f))
            elif f in _MASKED:
                self.masked.append((f, '_raw_' + f))
        for _, label in self.stored + self.masked:
            self.columns.append(N.c[label[5:]].label(label))
        # selected as stored, not decoded
        self.raw_columns = frozenset(label for _, label in
                                     self.stored + self.masked)
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
