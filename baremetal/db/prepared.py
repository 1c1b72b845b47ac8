"""The hottest statements, compiled once and run straight on the
database driver.

SQLAlchemy Core spends ~100 us of Python per statement on execution
contexts, events and result rows; SQLite itself needs ~20 us to find a
node by UUID.  A ``Prepared`` statement is still built and compiled by
SQLAlchemy for the dialect, and its parameters and results still go
through SQLAlchemy's own type processors (DateTime, Boolean, JSON), so
rows are the same dicts ``conn.execute`` would give; only the per-call
machinery is skipped (``before_cursor_execute`` listeners are still
called, so statement counters see these too).

Where: on SQLite always; on PostgreSQL and MariaDB on autocommit
connections (one statement, its own transaction), where a failed
statement leaves no aborted transaction behind.  Any driver error
re-runs the statement through SQLAlchemy, which raises it translated
as usual (oslo.db's exception filters).

On PostgreSQL the statements built once are also prepared on the server
(``PREPARE`` once per connection, then ``EXECUTE``): the server parses
and plans them once instead of at every execution.  So are the last
``PAGE_SHAPES`` list pages' statements told apart by their SQL (a page
and the next differ only in their parameters); a shape that falls out
of them is deallocated on each connection at its next use.  Not the
pages that write each node's JSON (``TextColumns``): they run faster as
text.
"""

import collections
import itertools
import re
import threading
import weakref
from typing import Any

import sqlalchemy as sa


class Unsupported(Exception):
    """A statement this module cannot run (SQLAlchemy runs it)."""


class _ServerSide:
    """A statement prepared on the PostgreSQL server: its ``PREPARE``
    (``%(name)s`` parameters numbered ``$1``...) and its ``EXECUTE``."""

    _PARAM = re.compile(r'(?<!%)%\((\w+)\)s')
    _names = itertools.count(1)

    __slots__ = ('name', 'prepare', 'execute', 'order')

    def __init__(self, sql: str) -> None:
        order: list[str] = []

        def number(m) -> str:
            if m.group(1) not in order:
                order.append(m.group(1))
            return '$%d' % (order.index(m.group(1)) + 1)
        text = self._PARAM.sub(number, sql)
        if '%(' in text:
            raise Unsupported('parameters not understood')
        self.name = 'baremetal_%d' % next(self._names)
        self.prepare = 'PREPARE %s AS %s' % (self.name,
                                             text.replace('%%', '%'))
        self.execute = 'EXECUTE ' + self.name + (
            '(%s)' % ', '.join(['%s'] * len(order)) if order else '')
        self.order = tuple(order)


# PostgreSQL's invalid_sql_statement_name: EXECUTE of an unknown name
_NO_SUCH_PREPARED = '26000'

# the statements prepared on each server connection (by name)
_PREPARED_ON: 'weakref.WeakKeyDictionary[Any, set[str]]' = \
    weakref.WeakKeyDictionary()
_PREPARED_LOCK = threading.Lock()


# the page statements prepared on the server, by SQL text (most recently
# used last), and the names of those dropped since: still prepared on
# some connections, deallocated there at their next use
PAGE_SHAPES = 64
_PAGES: 'collections.OrderedDict[str, _ServerSide | None]' = \
    collections.OrderedDict()
_DROPPED: set[str] = set()


def _page_statement(sql: str) -> '_ServerSide | None':
    with _PREPARED_LOCK:
        if sql in _PAGES:
            _PAGES.move_to_end(sql)
            return _PAGES[sql]
    try:
        server = _ServerSide(sql)
    except Unsupported:
        return None
    with _PREPARED_LOCK:
        server = _PAGES.setdefault(sql, server)
        while len(_PAGES) > PAGE_SHAPES:
            dropped = _PAGES.popitem(last=False)[1]
            if dropped is not None:
                _DROPPED.add(dropped.name)
    return server


def _not_on_server(server: '_ServerSide') -> None:
    """A page statement the server could not prepare: its shape runs as
    text from now on (None in _PAGES), not PREPAREd at every page."""
    with _PREPARED_LOCK:
        for sql, known in _PAGES.items():
            if known is server:
                _PAGES[sql] = None
                return


def _prepared_on(dbapi_conn) -> set[str]:
    with _PREPARED_LOCK:
        names = _PREPARED_ON.get(dbapi_conn)
        if names is None:
            names = _PREPARED_ON[dbapi_conn] = set()
        return names


# the execution option of a page statement that PostgreSQL runs as text
TEXT_ONLY = 'baremetal_text_only'


class TextColumns(list):
    """The columns of a page statement that runs as text on PostgreSQL,
    never PREPAREd on the server (``rows.query`` marks its statement
    ``TEXT_ONLY``): the pages whose statement writes each node's JSON
    (db/node_json.py).  Prepared, with its texts cast so that the server
    can type them, Nova's list of 100,000 nodes took PostgreSQL 0.27-0.28
    s of CPU against 0.22-0.26 s as text, with custom plans too (lists
    alternating on one machine); and as ``concat()``'s arguments are of
    any type, an uncast one made the server refuse to PREPARE it at all
    (an error in its log for every shape)."""

    __slots__ = ()


def _text_only(stmt) -> bool:
    return bool(stmt.get_execution_options().get(TEXT_ONLY))


class Prepared:
    __slots__ = ('stmt', 'sql', 'binds', 'positional', 'keys', 'convert',
                 'server', 'compiled')

    def __init__(self, stmt, dialect, raw: frozenset = frozenset(),
                 server_side: bool = False, page: bool = False,
                 cache_key=None) -> None:
        compiled = stmt.compile(dialect=dialect, cache_key=cache_key)
        # with a cache key, the values of another statement of the same
        # shape can be found (page_shape)
        self.compiled = compiled if cache_key is not None else None
        if any(b.expanding or b.literal_execute
               for b in compiled.binds.values()):
            raise Unsupported('rendered per execution (IN lists, literal '
                              'parameters)')
        self.stmt = stmt
        self.sql = compiled.string
        # qmark (sqlite3): a tuple in order; pyformat (psycopg2): a dict
        # keyed by the names in the SQL text
        self.positional = dialect.positional
        names = (compiled.positiontup if self.positional
                 else list(compiled.binds))
        escaped = compiled.escaped_bind_names or {}
        # columns SQLAlchemy fills from their Python-side default (an
        # INSERT) or onupdate (an UPDATE) at each execution
        defaults = {}
        for col, default in (
                [(c, c.default) for c in compiled.insert_prefetch] +
                [(c, c.onupdate) for c in compiled.update_prefetch]):
            if not default.is_scalar:
                raise Unsupported('column %s: default computed per row'
                                  % col.key)
            defaults[col.key] = default.arg
        # (name in the statement's values, name in the SQL, type
        # processor, the value the statement carries itself)
        self.binds = tuple(
            (name, escaped.get(name, name),
             compiled.binds[name].type.dialect_impl(dialect)
             .bind_processor(dialect),
             defaults.get(name, compiled.binds[name].effective_value))
            for name in names or ())
        if isinstance(stmt, sa.Select):
            cols = [(k, c.type) for k, c in
                    stmt.selected_columns.items()]
        elif isinstance(stmt, sa.sql.dml.UpdateBase) and \
                stmt.returning_column_descriptions:
            cols = [(d['name'], d['type'])
                    for d in stmt.returning_column_descriptions]
        else:
            cols = []
        self.keys = tuple(k for k, _ in cols)
        # (column, SQLAlchemy's result processor) for the columns that
        # need one; ``raw`` columns are returned as stored (JSON text)
        procs = ((k, None if k in raw else
                  t.dialect_impl(dialect).result_processor(dialect, None))
                 for k, t in cols)
        self.convert = tuple((k, p) for k, p in procs if p is not None)
        self.server: _ServerSide | None = None
        if dialect.name == 'postgresql':
            if page:
                if not _text_only(stmt):
                    self.server = _page_statement(self.sql)
            elif server_side:
                try:
                    self.server = _ServerSide(self.sql)
                except Unsupported:
                    pass

    def params(self, values: dict) -> tuple | dict:
        if self.positional:
            out = []
            for name, _, proc, default in self.binds:
                v = values.get(name, default)
                out.append(proc(v) if proc is not None else v)
            return tuple(out)
        named = {}
        for name, key, proc, default in self.binds:
            v = values.get(name, default)
            named[key] = proc(v) if proc is not None else v
        return named

    def run(self, conn: sa.engine.Connection, values: dict,
            tuples: bool = False):
        """Execute; return (rows as dicts, rowcount); with ``tuples``,
        rows that need no conversion come as the driver's tuples."""
        dbapi = conn.connection.driver_connection
        params = self.params(values)
        listeners = conn.dispatch.before_cursor_execute
        if listeners:   # statement counters, profilers: they still see it
            listeners(conn, None, self.sql, params, None, False)
        error = conn.dialect.loaded_dbapi.Error
        cur = dbapi.cursor()
        try:
            server = self.server
            if server is not None:
                done = _prepared_on(dbapi)
                if _DROPPED:
                    with _PREPARED_LOCK:
                        stale = done & _DROPPED
                    for name in stale:
                        cur.execute('DEALLOCATE ' + name)
                        done.discard(name)
                if server.name not in done:
                    try:
                        cur.execute(server.prepare)
                    except error:
                        # the server could not prepare it (a parameter
                        # type it cannot infer): run it as text from now
                        _not_on_server(server)
                        self.server = server = None
                    else:
                        done.add(server.name)
            if server is not None:
                cur.execute(server.execute,
                            tuple(params[k] for k in server.order))
            else:
                cur.execute(self.sql, params)
            raw = cur.fetchall() if self.keys else ()
            rowcount = cur.rowcount
        except error as e:
            if getattr(e, 'pgcode', None) == _NO_SUCH_PREPARED:
                # someone (DEALLOCATE ALL, a pooler in transaction mode)
                # dropped them: prepare again on next use
                _prepared_on(dbapi).clear()
            return _after_error(conn, self.stmt, values)
        finally:
            cur.close()
        keys, convert = self.keys, self.convert
        if tuples and not convert:
            return list(raw), rowcount
        rows = []
        for row in raw:
            d = dict(zip(keys, row, strict=True))
            for k, p in convert:
                v = d[k]
                if v is not None:
                    d[k] = p(v)
            rows.append(d)
        return rows, rowcount


class Cache:
    """Prepared forms of statement objects built once elsewhere.

    ``always``: every connection runs them (SQLite); otherwise only
    autocommit connections do (PostgreSQL), the others go through
    SQLAlchemy."""

    def __init__(self, always: bool = True) -> None:
        self.always = always
        self._by_id: dict[int, Prepared] = {}

    def usable(self, conn: sa.engine.Connection) -> bool:
        return self.always or conn.get_execution_options().get(
            'isolation_level') == 'AUTOCOMMIT'

    def get(self, stmt, dialect) -> Prepared:
        p = self._by_id.get(id(stmt))
        if p is None or p.stmt is not stmt:
            p = self._by_id[id(stmt)] = Prepared(stmt, dialect,
                                                 server_side=True)
        return p


def run(cache: Cache | None, conn: sa.engine.Connection, stmt,
        values: dict) -> tuple[list[dict[str, Any]], int]:
    """Rows and rowcount of ``stmt`` (built once): prepared where the
    ``cache`` allows it on ``conn``, through SQLAlchemy otherwise."""
    if cache is not None and cache.usable(conn):
        return cache.get(stmt, conn.dialect).run(conn, values)
    return _through_sqlalchemy(conn, stmt, values)


def driver_scalar(conn: sa.engine.Connection, sql: str) -> Any:
    """The first column of the first row of ``sql`` (fixed text, no
    parameters), run on the driver's cursor: SQLAlchemy's execution of
    a text statement took 0.3-0.4 ms of Python each time (the read-ahead
    asks PostgreSQL for its snapshot twice a page).  A driver error runs
    it again through SQLAlchemy, which raises it translated."""
    listeners = conn.dispatch.before_cursor_execute
    if listeners:   # statement counters see it, as a prepared one
        listeners(conn, None, sql, (), None, False)
    cur = conn.connection.driver_connection.cursor()
    try:
        cur.execute(sql)
        row = cur.fetchone()
    except conn.dialect.loaded_dbapi.Error:
        pass
    else:
        return row[0] if row else None
    finally:
        cur.close()
    return conn.exec_driver_sql(sql).scalar()


def run_once(cache: Cache | None, conn: sa.engine.Connection, stmt,
             values: dict | None = None, raw: frozenset = frozenset(),
             tuples: bool = False, kept: bool = False) -> list:
    """Rows of an ad-hoc ``stmt`` (a page of a list: compiling it costs
    less than SQLAlchemy's per-row work on a large page).  The ``raw``
    columns may come back as stored, not decoded (when run prepared).
    ``tuples``: rows as tuples of the selected columns, not dicts (a
    dict per row was 0.5 ms of a page of 1,000), for columns that need
    no conversion.  ``kept``: the caller keeps ``stmt`` and runs it
    again (its shape is remembered by the object, not looked for)."""
    rows = None
    if cache is not None and cache.usable(conn):
        try:
            p, shaped = page_shape(stmt, conn.dialect, raw, kept)
        except Unsupported:
            pass
        else:
            rows = p.run(conn, {**shaped, **(values or {})}, tuples)[0]
    if rows is None:
        rows = _through_sqlalchemy(conn, stmt, values or {})[0]
    if tuples and rows and isinstance(rows[0], dict):
        rows = [tuple(r.values()) for r in rows]
    return rows


# the last PAGE_SHAPES page statements compiled, by shape (the dialect,
# SQLAlchemy's cache key, the raw columns; most recently used last)
_SHAPES: 'collections.OrderedDict[tuple, Prepared]' = \
    collections.OrderedDict()


# the shapes of statements their callers keep (page_shape's ``kept``),
# by the statement's id, with the statement (its id stays its own)
_KEPT: 'collections.OrderedDict[tuple, tuple]' = collections.OrderedDict()


def page_shape(stmt, dialect, raw: frozenset,
               kept: bool = False) -> tuple[Prepared, dict]:
    """The compiled form of a page statement and the values of its
    parameters: compiled once per shape (a page and the next differ in
    their values only; compiling a detail page's statement took 0.5 ms,
    finding its shape 0.06-0.09 ms).  ``kept``: the caller runs this
    very statement again; what was found is remembered by the object."""
    if kept:
        memo = (id(stmt), dialect.name, raw)
        with _PREPARED_LOCK:
            hit = _KEPT.get(memo)
            if hit is not None and hit[0] is stmt:
                _KEPT.move_to_end(memo)
        if hit is not None and hit[0] is stmt:
            return _on_server_now(hit[1], dialect), hit[2]
        p, shaped = page_shape(stmt, dialect, raw)
        with _PREPARED_LOCK:
            _KEPT[memo] = (stmt, p, shaped)
            while len(_KEPT) > PAGE_SHAPES:
                _KEPT.popitem(last=False)
        return p, shaped
    key = stmt._generate_cache_key()
    if key is None:         # a construct SQLAlchemy cannot cache
        return Prepared(stmt, dialect, raw, page=True), {}
    shape = (dialect.name, key.key, raw)
    with _PREPARED_LOCK:
        p = _SHAPES.get(shape)
        if p is not None:
            _SHAPES.move_to_end(shape)
    if p is None:
        p = Prepared(stmt, dialect, raw, page=True, cache_key=key)
        with _PREPARED_LOCK:
            _SHAPES[shape] = p
            while len(_SHAPES) > PAGE_SHAPES:
                _SHAPES.popitem(last=False)
        return p, {}
    return _on_server_now(p, dialect), p.compiled.construct_params(
        extracted_parameters=key.bindparams, escape_names=False)


def _on_server_now(p: Prepared, dialect) -> Prepared:
    """``p`` with the server's statement of its SQL now (one dropped
    from _PAGES since is prepared again under a new name)."""
    if (p.server is not None or dialect.name == 'postgresql') and \
            not _text_only(p.stmt):
        p.server = _page_statement(p.sql)
    return p


def _after_error(conn, stmt, values):
    """The driver refused the statement (a duplicate, a lost
    connection): SQLAlchemy runs it again and raises the error the way
    the rest of the code expects (oslo.db's translations)."""
    return _through_sqlalchemy(conn, stmt, values)


def _through_sqlalchemy(conn, stmt, values):
    res = conn.execute(stmt, values)
    rows = [dict(r) for r in res.mappings()] if res.returns_rows else []
    return rows, res.rowcount
