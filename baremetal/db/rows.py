"""Rows of any table: create, get, update, delete, a page of a list and
a count, in SQLAlchemy Core.  Rows cross this boundary as plain dicts;
unique and foreign key violations become baremetal exceptions here.

The db/ modules call these with their tables.  A caller outside db/
never sees a table: it calls the resource module's named functions, or
the resource's ``Rows`` (the table and the error of a missing row,
bound once in that module: ``db.chassis.ROWS``) for a plain get, page,
create, update or delete, which is also what code handling several
resources alike holds (api/resource.py, objects/base.py).
"""

import collections
import datetime
import re
import threading
import uuid as uuidlib
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import NamedTuple

import sqlalchemy as sa
from oslo_db import exception as db_exc

from baremetal.common import exception
from baremetal.db import columns as db_columns
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import read_ahead

NODES = models.TABLES['nodes']


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def new_uuid() -> str:
    return str(uuidlib.uuid4())


# a UUID as str(uuid.UUID(...)) writes it, in either case
_UUID_TEXT = re.compile(r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                        r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')


def is_uuid_like(value: Any) -> bool:
    """Whether ``value`` (or its text) is a UUID in its canonical,
    hyphenated form, in either case (what an ident is looked up by)."""
    return _UUID_TEXT.fullmatch(str(value)) is not None


def _cols(table: sa.Table, columns: Iterable[str] | None):
    if not columns:
        return [table]
    return [table.c[c] for c in columns]


# --------------------------------------------------------------- generic

_INSERT_STMTS = engine.dialect_cache()


def _insert_stmt(table: sa.Table, keys: tuple[str, ...]):
    """INSERT INTO table (<keys>) [RETURNING id], built once per column
    set."""
    stmt = _INSERT_STMTS.get((table.name, keys))
    if stmt is None:
        stmt = table.insert().values(
            {k: sa.bindparam('v_' + k) for k in keys})
        if engine.engine().dialect.insert_returning:
            stmt = stmt.returning(table.c.id)
        _INSERT_STMTS[(table.name, keys)] = stmt
    return stmt


def create(table: sa.Table, values: dict) -> dict:
    """Insert a row; translate unique violations into Conflict errors."""
    with engine.single() as conn:
        return insert(conn, table, values)


def insert(conn: sa.engine.Connection, table: sa.Table,
           values: dict) -> dict:
    """Insert a row on ``conn`` (in the caller's transaction): a UUID made
    when it has none; the row as stored; Conflict errors on unique
    values."""
    values = dict(values)
    if 'uuid' in table.c and not values.get('uuid'):
        values['uuid'] = new_uuid()
    values.setdefault('created_at', utcnow())
    stmt = _insert_stmt(table, tuple(sorted(values)))
    params = {'v_' + k: v for k, v in values.items()}
    try:
        if engine.engine().dialect.insert_returning:
            rows, _ = prepared.run(engine.prepared_cache, conn, stmt,
                                   params)
            values['id'] = rows[0]['id']
        else:
            res = conn.execute(stmt, params)
            values['id'] = res.inserted_primary_key[0]
    except db_exc.DBDuplicateEntry as e:
        raise _duplicate(table, values, e) from None
    except db_exc.DBReferenceError as e:
        raise exception.Invalid(reason=str(e)) from None
    # what was stored: a column's scalar default where no value was given
    full = {c.name: c.default.arg if c.default is not None and
            c.default.is_scalar else None for c in table.c}
    full.update(values)
    return full


def _duplicate(table: sa.Table, values: dict, err) -> Exception:
    cols = set(err.columns or ())
    name = table.name
    if name == 'nodes':
        if 'name' in cols or 'uniq_nodes0name' in cols:
            return exception.DuplicateName(name=values.get('name'))
        if 'instance_uuid' in cols or 'uniq_nodes0instance_uuid' in cols:
            return exception.InstanceAssociated(
                instance_uuid=values.get('instance_uuid'),
                node=values.get('uuid'))
        return exception.NodeAlreadyExists(uuid=values.get('uuid'))
    if name == 'ports' and ('address' in cols or
                            'uniq_ports0address' in cols):
        return exception.MACAlreadyExists(mac=values.get('address'))
    by_uuid = any('uuid' in c for c in cols)
    if name == 'volume_connectors' and not by_uuid:
        return exception.VolumeConnectorAlreadyExists(
            type=values.get('type'), connector_id=values.get('connector_id'))
    if name == 'volume_targets' and not by_uuid:
        return exception.VolumeTargetAlreadyExists(
            boot_index=values.get('boot_index'))
    what = {'ports': 'Port', 'portgroups': 'Portgroup',
            'chassis': 'Chassis', 'allocations': 'Allocation',
            'deploy_templates': 'Deploy template',
            'volume_connectors': 'Volume connector',
            'volume_targets': 'Volume target',
            'conductors': 'Conductor'}.get(name, name)
    detail = ', '.join('%s=%s' % (c, values.get(c)) for c in sorted(cols)
                       if c in values)
    return exception.ResourceAlreadyExists(
        what='%s with %s' % (what, detail or 'these values'))


_GET_STMTS: dict[tuple, Any] = {}


def _get_stmt(table: sa.Table, by: str, columns: tuple | None):
    """SELECT ... WHERE <by> = :ident, built once per shape (statement
    construction costs more than running it on SQLite)."""
    key = (table.name, by, columns)
    stmt = _GET_STMTS.get(key)
    if stmt is None:
        stmt = sa.select(*_cols(table, columns)).where(
            table.c[by] == sa.bindparam('ident'))
        _GET_STMTS[key] = stmt
    return stmt


def ident_column(table: sa.Table, ident: Any) -> tuple[str, Any] | None:
    if isinstance(ident, int):
        return 'id', ident
    if is_uuid_like(ident):
        return 'uuid', str(ident).lower()
    if 'name' in table.c:
        return 'name', ident
    return None


def get(table: sa.Table, ident: Any, not_found: type[Exception],
        columns: Iterable[str] | None = None, **nf_kwargs) -> dict:
    found = ident_column(table, ident)
    row = None
    if found is not None:
        by, value = found
        stmt = _get_stmt(table, by, tuple(columns) if columns else None)
        with engine.reader() as conn:
            rows, _ = prepared.run(engine.prepared_cache, conn, stmt,
                                   {'ident': value})
        row = rows[0] if rows else None
    if row is None:
        raise not_found(**nf_kwargs)
    return row


_UPDATE_STMTS: dict = {}


def _update_stmt(table: sa.Table, keys: tuple[str, ...]):
    """UPDATE table SET <keys> WHERE id = :_row_id, built once per column
    set: a reused statement keeps its compiled form and cache key, which
    on SQLite cost more than running it."""
    stmt = _UPDATE_STMTS.get((table.name, keys))
    if stmt is None:
        stmt = (table.update()
                .where(table.c.id == sa.bindparam('_row_id'))
                .values({k: sa.bindparam('v_' + k) for k in keys}))
        _UPDATE_STMTS[(table.name, keys)] = stmt
    return stmt


def update(table: sa.Table, row_id: int, values: dict,
           where: Iterable = ()) -> int:
    """UPDATE one row by id; returns the number of rows changed."""
    values = dict(values)
    values.setdefault('updated_at', utcnow())
    where = tuple(where)
    try:
        with engine.single() as conn:
            if where:
                return conn.execute(table.update()
                                    .where(table.c.id == row_id, *where)
                                    .values(**values)).rowcount
            params = {'v_' + k: v for k, v in values.items()}
            params['_row_id'] = row_id
            return prepared.run(engine.prepared_cache, conn,
                                _update_stmt(table, tuple(sorted(values))),
                                params)[1]
    except db_exc.DBDuplicateEntry as e:
        raise _duplicate(table, values, e) from None


def delete(table: sa.Table, row_id: int) -> None:
    with engine.single() as conn:
        conn.execute(table.delete().where(table.c.id == row_id))


# conditions built once by a db/ module (``fixed``), by id: a page
# whose conditions are all among them, asked for without a marker, is
# the same statement at every request (the default node list)
_FIXED_CONDITIONS: dict[int, Any] = {}
# those pages' statements (most recently used last), with the objects
# their key names by id, so that the ids stay theirs
FIXED_PAGES = 64
_FIXED_STMTS: 'collections.OrderedDict[tuple, tuple]' = \
    collections.OrderedDict()
_FIXED_LOCK = threading.Lock()
_NOT_FIXED = object()


def fixed(condition):
    """``condition``, built once at import by a db/ module (a module
    constant): a page whose conditions and marker values are all such
    ones (or ``Bound`` ones) keeps its statement (``query``)."""
    _FIXED_CONDITIONS[id(condition)] = condition
    return condition


# conditions built on first use (``fixed_once``), by their maker's key
_BUILT: dict[Any, Any] = {}


def fixed_once(key, build: Callable[[], Any]):
    """The condition ``build()`` makes, built the first time ``key`` (a
    db/ module's name for it) is asked for and ``fixed`` from then on:
    one per field or per table where a module constant cannot be."""
    clause = _BUILT.get(key)
    if clause is None:
        with _FIXED_LOCK:
            clause = _BUILT.get(key)
            if clause is None:
                clause = _BUILT[key] = fixed(build())
    return clause


class Bound(NamedTuple):
    """SQL built once (``fixed``) with parameters, and ``params``, their
    values for this query: a condition, or a marker's value (the node
    of a UUID).  A page whose conditions and marker are such keeps its
    statement and runs it with the values (``query``)."""
    clause: Any
    params: dict


def _unbound(parts: Iterable) -> tuple[tuple, dict | None]:
    """The SQL of ``parts`` and the values of their ``Bound``
    parameters (None: there are none)."""
    clauses, params = [], None
    for f in parts:
        if isinstance(f, Bound):
            clauses.append(f.clause)
            params = {**(params or {}), **f.params}
        else:
            clauses.append(f)
    return tuple(clauses), params


def _fixed_statement(table, filters: tuple, columns, limit, sort_key: str,
                     sort_dir: str, select, marker: dict | None):
    """The kept statement of a page that is the same at every request
    (only ``fixed`` conditions and marker values), built the first
    time; None for any other page.  Building it and finding
    its compiled shape took 0.26 ms of a detail list of 200 nodes that
    takes 3, and a third of the API's CPU for a Nova-like list of every
    node (a page's statement built and its shape found for the page and
    again for the page read ahead)."""
    sql = tuple(marker.values()) if marker is not None else ()
    if any(_FIXED_CONDITIONS.get(id(f), _NOT_FIXED) is not f
           for f in filters + sql):
        return None
    key = (table.name, id(select), tuple(columns) if columns else None,
           limit, sort_key, sort_dir, tuple(id(f) for f in filters),
           tuple((k, id(v)) for k, v in marker.items())
           if marker is not None else None)
    with _FIXED_LOCK:
        kept = _FIXED_STMTS.get(key)
        if kept is not None and kept[0] is select:
            _FIXED_STMTS.move_to_end(key)
            return kept[1]
    stmt = _page(table, filters, columns, limit, marker, sort_key, sort_dir,
                 select)
    with _FIXED_LOCK:
        _FIXED_STMTS[key] = (select, stmt)
        while len(_FIXED_STMTS) > FIXED_PAGES:
            _FIXED_STMTS.popitem(last=False)
    return stmt


def query(table: sa.Table, filters: Iterable = (), columns=None,
          limit: int | None = None, marker: dict | None = None,
          sort_key: str = 'id', sort_dir: str = 'asc',
          json_as_text: Iterable[str] = (),
          select: list | None = None, tuples: bool = False,
          ahead: Callable[[list], dict] | None = None) -> list:
    """One page of ``table``: ``filters`` are SQLAlchemy clauses (or
    ``Bound`` ones); the marker row holds the sort key's value and id of
    the previous page's last row (keyset pagination, one query per
    page), values or ``Bound`` SQL.  The JSON columns in
    ``json_as_text`` may come back as their stored text (prepared: a
    page is rendered without decoding and encoding them again).
    ``select``: column expressions to select instead of ``columns``.
    ``ahead``: the marker of the page after this one from this page's
    rows; when this page is full, that page is read ahead
    (db/read_ahead.py, PostgreSQL), and this one may have been."""
    # built into this page's statement and the next's
    filters, bound = _unbound(filters)

    def statement(marker) -> read_ahead.Statement:
        values = bound
        if marker is not None:
            sql, params = _unbound(marker.values())
            marker = dict(zip(marker, sql, strict=True))
            if params:
                values = {**(values or {}), **params}
        stmt = _fixed_statement(table, filters, columns, limit, sort_key,
                                sort_dir, select, marker)
        if stmt is not None:
            return read_ahead.Statement(stmt, values, True)
        return read_ahead.Statement(
            _page(table, filters, columns, limit, marker, sort_key,
                  sort_dir, select), values, False)
    raw = frozenset(json_as_text)
    page = statement(marker)
    rows = snapshot = None
    with engine.reader() as conn:
        if ahead is not None:
            rows, snapshot = read_ahead.take(conn, page, raw, tuples)
        if rows is None:
            rows = prepared.run_once(engine.prepared_cache, conn, page.stmt,
                                     page.values, raw=raw, tuples=tuples,
                                     kept=page.kept)
    if ahead is not None and limit and len(rows) == limit:
        read_ahead.start(lambda: statement(ahead(rows)), raw, tuples,
                         snapshot)
    return rows


def _page(table: sa.Table, filters: Iterable, columns, limit: int | None,
          marker: dict | None, sort_key: str, sort_dir: str,
          select: list | None):
    """The statement of a page (``query``)."""
    key = table.c[sort_key]
    order = [key.asc() if sort_dir == 'asc' else key.desc()]
    if sort_key != 'id':
        order.append(table.c.id.asc() if sort_dir == 'asc'
                     else table.c.id.desc())
    stmt = sa.select(*(select or _cols(table, columns))).where(*filters)
    if isinstance(select, prepared.TextColumns):
        stmt = stmt.execution_options(**{prepared.TEXT_ONLY: True})
    if marker is not None:
        mval, mid = marker.get(sort_key), marker['id']
        after = (lambda c, v: c > v) if sort_dir == 'asc' else \
            (lambda c, v: c < v)
        if sort_key == 'id':
            stmt = stmt.where(after(table.c.id, mid))
        elif mval is None:
            # NULLs sort first ascending on sqlite/mysql, last on pg: keep
            # it simple and correct by comparing on id among NULLs too
            stmt = stmt.where(sa.or_(
                key.is_not(None) if sort_dir == 'asc' else sa.false(),
                sa.and_(key.is_(None), after(table.c.id, mid))))
        else:
            stmt = stmt.where(sa.or_(
                after(key, mval),
                sa.and_(key == mval, after(table.c.id, mid)),
                (key.is_(None) if sort_dir == 'desc' else sa.false())))
    stmt = stmt.order_by(*order)
    if sort_key != 'id' and sort_dir == 'asc':
        stmt = stmt.order_by(None).order_by(key.is_(None).desc(), *order)
    elif sort_key != 'id':
        stmt = stmt.order_by(None).order_by(key.is_(None).asc(), *order)
    if limit:
        stmt = stmt.limit(limit)
    return stmt


def count(table: sa.Table, filters: Iterable = ()) -> int:
    clauses, params = _unbound(filters)
    with engine.reader() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(table)
                            .where(*clauses), params or {}).scalar_one()


_IDENT = object()


class Rows:
    """The rows of one table through the calls above, with the error a
    missing row raises (``not_found(**{not_found_key: ident})``): what
    a caller outside db/ holds instead of the table (an API resource, a
    record class).  Each resource's db module makes its own
    (``db.chassis.ROWS``)."""

    __slots__ = ('table', 'not_found', 'not_found_key')

    def __init__(self, table: sa.Table, not_found: type[Exception],
                 not_found_key: str) -> None:
        self.table = table          # for the db/ modules only
        self.not_found = not_found
        self.not_found_key = not_found_key

    def __repr__(self) -> str:
        return 'Rows(%s)' % self.table.name

    @property
    def columns(self) -> frozenset[str]:
        """The names of the table's columns."""
        return db_columns.names(self.table)

    @property
    def required(self) -> frozenset[str]:
        """The names of the columns that cannot be NULL."""
        return db_columns.required(self.table)

    def kind(self, column: str) -> str | None:
        """``'boolean'`` or ``'integer'`` for a column of that type,
        else None; KeyError for a name that is no column."""
        return db_columns.kind(self.table, column)

    @property
    def json_columns(self) -> frozenset[str]:
        """The names of the columns that hold JSON."""
        return db_columns.json_names(self.table)

    def missing(self, ident: Any) -> Exception:
        """The error of no row ``ident`` (also raised for a row the
        caller may not see)."""
        return self.not_found(**{self.not_found_key: ident})

    def get(self, ident: Any, columns: Iterable[str] | None = None,
            shown_as: Any = _IDENT) -> dict:
        """The row of this id, UUID (or name, where the table has one);
        ``not_found`` naming ``shown_as`` (by default ``ident``) when
        there is none."""
        return get(self.table, ident, self.not_found, columns,
                   **{self.not_found_key:
                      ident if shown_as is _IDENT else shown_as})

    def list_page(self, filters: Iterable = (), limit: int | None = None,
                  marker: dict | None = None, sort_key: str = 'id',
                  sort_dir: str = 'asc') -> list[dict]:
        """One page of the rows matching ``filters`` (conditions the
        resource's db module builds): see ``query``."""
        return query(self.table, filters, None, limit, marker, sort_key,
                     sort_dir)

    def create(self, values: dict) -> dict:
        """Insert a row (a UUID made when it has none); the row as
        stored.  Conflict errors on unique values."""
        return create(self.table, values)

    def update(self, row_id: int, values: dict, where: Iterable = ()
               ) -> int:
        """UPDATE the row of ``row_id`` (and ``where``); the number of
        rows changed."""
        return update(self.table, row_id, values, where)

    def delete(self, row_id: int) -> None:
        delete(self.table, row_id)
