"""The SQL of node list pages whose JSON the database writes itself
(api/controllers/v1/node_json_sql.py renders them; it explains why).

Each node is one text: its plain fields written as JSON by the database
(SQLite as ``json_object`` members, PostgreSQL each value quoted by
``to_json``), its stored JSON fields as stored, the links' texts bound as
parameters; all put together by one call (SQLite's ``printf``,
PostgreSQL's ``concat``) per 90 values or arguments.
"""

from collections.abc import Iterable

import sqlalchemy as sa

from baremetal.common import states
from baremetal.db import engine
from baremetal.db import nodes as db_nodes
from baremetal.db import prepared

N = db_nodes.NODES


class _SQLite:
    format_function = 'printf'
    # json_object() of its values takes a third of the time of
    # json_quote() on each (a function call per value)
    objects = True

    @staticmethod
    def obj(pairs: str) -> str:
        # none of the values ends with '}' (no stored JSON among them):
        # the members are the object's text without its braces
        return 'json_object(%s)' % pairs

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


class _PostgreSQL:
    # concat() of the segments and the values costs PostgreSQL less than
    # format() (which reads its format at every call and writes each
    # value through a conversion): its CPU for a list of 100,000 nodes
    # through the API 0.33 against 0.40 s with Nova's fields, 1.5
    # against 1.9 s for the detail list (lists alternating on one
    # machine)
    format_function = None
    # to_json() on each value takes half the time of
    # json_build_object() (1.1 against 2.1 ms a page of 1,000)
    objects = False

    @staticmethod
    def date(col: str) -> str:
        # timestamp without time zone, in UTC
        return (f"CASE WHEN {col} IS NULL THEN NULL "
                f"WHEN date_trunc('second', {col}) = {col} "
                f"THEN to_char({col}, 'YYYY-MM-DD\"T\"HH24:MI:SS') "
                "|| '+00:00' "
                f"ELSE to_char({col}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
                "|| '+00:00' END")

    # an ARRAY subquery costs less than an aggregate's (0.8 -> 0.3 ms a
    # page of 1,000); where no node has a trait, the planner scans the
    # empty table and sorts nothing for each node, 1.2 ms a page of
    # 1,000: a look at the table once a page skips it (0.5 ms)
    traits = ("CASE WHEN (SELECT EXISTS (SELECT FROM node_traits)) "
              "THEN array_to_json(ARRAY(SELECT node_traits.trait FROM "
              "node_traits WHERE node_traits.node_id = nodes.id "
              "ORDER BY node_traits.trait))::text ELSE '[]' END")
    # the fields whose expression is already JSON text
    as_text = frozenset(('traits',))

    @staticmethod
    def boolean(col: str, never_null: bool) -> str:
        return 'COALESCE(%s, false)' % col if never_null else col

    @staticmethod
    def quote(value: str) -> str:
        return "COALESCE(to_json(%s)::text, 'null')" % value


_DIALECTS = {'sqlite': _SQLite, 'postgresql': _PostgreSQL}


def usable() -> bool:
    """Whether the database writes JSON here (SQLite, PostgreSQL)."""
    return engine.engine().dialect.name in _DIALECTS


def dialect() -> str:
    return engine.engine().dialect.name


def _value(sql, field: str, hide_available: bool, date_fields,
           never_null) -> str:
    """The SQL expression of one field's JSON value."""
    if field in date_fields:
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
        # the never_null booleans are never null on the wire
        return sql.boolean(col, field in never_null)
    return col


def node_text(written: list[str], *, hide_available: bool,
              date_fields: Iterable[str], never_null: Iterable[str],
              stored: list[str], tail: list[str], whole: bool = True,
              also: Iterable[str] = ()) -> list:
    """The SELECT's columns of a page of nodes: ``id``, ``uuid`` and
    ``_node``, each node's JSON text, written by the database: the
    ``written`` fields (dates in ``date_fields`` as ISO 8601 in UTC,
    booleans in ``never_null`` false rather than null,
    ``provision_state`` 'available' as null when ``hide_available``);
    then each ``stored`` JSON column as it is stored (``{}`` when
    empty); then ``tail``'s texts (JSON, from the request: bound as
    parameters, never written into the SQL) with the node's UUID
    between each two.  Unless ``whole``, the text lacks the opening
    ``{`` (the caller puts members of its own first), and the columns
    in ``also`` follow, as stored.

    The text is one call of SQLite's ``printf`` per up to ``_ARGS``
    values: its format (the keys, the separators, the tail; a bound
    parameter) and the values; on PostgreSQL one ``concat`` per up to
    ``_ARGS`` arguments: the same texts, each a bound parameter, between
    the values.  A chain of ``||`` copied the growing text at each step
    (quadratic: 3 ms of a detail page of 200 nodes on SQLite)."""
    sql = _DIALECTS[engine.engine().dialect.name]
    # the text: segments[0] value[0] segments[1] value[1] ...
    segments, values = ['{' if whole else ''], []

    def member(name: str | None, value: str) -> None:
        """``"name":value``; with no name, members the value writes"""
        segments[-1] += (',' if values else '') + (
            '"%s":' % name if name else '')
        values.append(value)
        segments.append('')

    pairs = [(f, _value(sql, f, hide_available, date_fields, never_null))
             for f in written]
    if sql.objects:
        # SQLite writes plain values fastest as objects: their members
        for i in range(0, len(pairs), _ARGS // 2):
            member(None, "ltrim(rtrim(%s, '}'), '{')" % sql.obj(', '.join(
                "'%s', %s" % p for p in pairs[i:i + _ARGS // 2])))
    else:
        for f, value in pairs:
            member(f, value if f in sql.as_text else sql.quote(value))
    for column in stored:
        col = "COALESCE(NULLIF(nodes.%s, ''), '{}')" % N.c[column].name
        member(column, col)
    if not values and whole and tail and tail[0].startswith(','):
        # no field asked for (an empty ?fields=): the tail's first
        # member (the links) opens the object
        tail = [tail[0][1:], *tail[1:]]
    for i, text in enumerate(tail):
        if i:
            values.append('nodes.uuid')
            segments.append('')
        segments[-1] += text
    return prepared.TextColumns(
        [N.c.id, N.c.uuid, _formatted(sql, segments, values)
         .label('_node')] + [N.c[column] for column in also])


# values per printf call (the format is one more) or arguments per concat
# call: SQLite allows 127 arguments, PostgreSQL 100
_ARGS = 90


def _formatted(sql, segments: list[str], values: list[str]):
    """SQL of the text ``segments[0] values[0] segments[1] ...``: the
    segments (which may hold the request's texts) go into bound
    formats or parameters, never into the SQL."""
    if sql.format_function is None:
        return _concatenated(segments, values)
    calls = []
    for n, start in enumerate(range(0, max(len(values), 1), _ARGS)):
        chunk = values[start:start + _ARGS]
        fmt = (segments[0].replace('%', '%%') if not start else '') + \
            ''.join('%s' + segments[start + i + 1].replace('%', '%%')
                    for i in range(len(chunk)))
        calls.append(sa.func.__getattr__(sql.format_function)(
            sa.bindparam('_fmt%d' % n, fmt, sa.Text),
            *[sa.literal_column(v) for v in chunk], type_=sa.Text))
    out = calls[0]
    for call in calls[1:]:
        out = out.concat(call)
    return out


def _concatenated(segments: list[str], values: list[str]):
    """``_formatted``'s text as ``concat()`` calls of at most ``_ARGS``
    arguments each: the segments bound as parameters, the values (never
    null: each is written as JSON or COALESCEd) between them."""
    args = []
    for i, segment in enumerate(segments):
        if segment:
            args.append(sa.bindparam('_seg%d' % i, segment, sa.Text))
        if i < len(values):
            args.append(sa.literal_column(values[i]))
    calls = [sa.func.concat(*args[i:i + _ARGS], type_=sa.Text)
             for i in range(0, max(len(args), 1), _ARGS)]
    return calls[0] if len(calls) == 1 else sa.func.concat(*calls,
                                                           type_=sa.Text)
