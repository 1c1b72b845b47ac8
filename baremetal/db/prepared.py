"""The hottest statements, compiled once and run straight on the SQLite
driver.

SQLAlchemy Core spends ~100 us of Python per statement on execution
contexts, events and result rows; SQLite itself needs ~20 us to find a
node by UUID.  A ``Prepared`` statement is still built and compiled by
SQLAlchemy for the dialect, and its parameters and results still go
through SQLAlchemy's own type processors (DateTime, Boolean, JSON), so
rows are the same dicts ``conn.execute`` would give; only the per-call
machinery is skipped (``before_cursor_execute`` listeners are still
called, so statement counters see these too).  Only on SQLite; any
driver error re-runs the statement through SQLAlchemy, which raises it
translated as usual.
"""

import sqlite3
from typing import Any

import sqlalchemy as sa


class Unsupported(Exception):
    """A statement this module cannot run (SQLAlchemy runs it)."""


class Prepared:
    __slots__ = ('stmt', 'sql', 'binds', 'keys', 'convert')

    def __init__(self, stmt, dialect, raw: frozenset = frozenset()
                 ) -> None:
        compiled = stmt.compile(dialect=dialect)
        if any(b.expanding for b in compiled.binds.values()):
            raise Unsupported('IN lists are rendered per execution')
        self.stmt = stmt
        self.sql = compiled.string
        # (name, type processor, the value the statement carries itself)
        self.binds = tuple(
            (name, compiled.binds[name].type.dialect_impl(dialect)
             .bind_processor(dialect), compiled.binds[name].effective_value)
            for name in compiled.positiontup or ())
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

    def params(self, values: dict) -> tuple:
        out = []
        for name, proc, default in self.binds:
            v = values.get(name, default)
            out.append(proc(v) if proc is not None else v)
        return tuple(out)

    def run(self, conn: sa.engine.Connection, values: dict):
        """Execute; return (rows as dicts, rowcount)."""
        dbapi = conn.connection.driver_connection
        params = self.params(values)
        listeners = conn.dispatch.before_cursor_execute
        if listeners:   # statement counters, profilers: they still see it
            listeners(conn, None, self.sql, params, None, False)
        try:
            cur = dbapi.execute(self.sql, params)
            raw = cur.fetchall() if self.keys else ()
        except sqlite3.Error:
            # SQLAlchemy runs it again and raises the error the way the
            # rest of the code expects (oslo.db's translations)
            res = conn.execute(self.stmt, values)
            rows = [dict(r) for r in res.mappings()] if self.keys else []
            return rows, res.rowcount
        keys, convert = self.keys, self.convert
        rows = []
        for row in raw:
            d = dict(zip(keys, row, strict=True))
            for k, p in convert:
                v = d[k]
                if v is not None:
                    d[k] = p(v)
            rows.append(d)
        return rows, cur.rowcount


class Cache:
    """Prepared forms of statement objects built once elsewhere."""

    def __init__(self) -> None:
        self._by_id: dict[int, Prepared] = {}

    def clear(self) -> None:
        self._by_id.clear()

    def get(self, stmt, dialect) -> Prepared:
        p = self._by_id.get(id(stmt))
        if p is None or p.stmt is not stmt:
            p = self._by_id[id(stmt)] = Prepared(stmt, dialect)
        return p


def run(cache: Cache | None, conn: sa.engine.Connection, stmt,
        values: dict) -> tuple[list[dict[str, Any]], int]:
    """Rows and rowcount of ``stmt`` (built once): prepared on SQLite
    (``cache`` set), through SQLAlchemy otherwise."""
    if cache is not None:
        return cache.get(stmt, conn.dialect).run(conn, values)
    return _through_sqlalchemy(conn, stmt, values)


def run_once(sqlite: bool, conn: sa.engine.Connection, stmt,
             values: dict | None = None, raw: frozenset = frozenset()
             ) -> list[dict[str, Any]]:
    """Rows of an ad-hoc ``stmt`` (a page of a list: compiling it costs
    less than SQLAlchemy's per-row work on a large page).  On SQLite the
    ``raw`` columns come back as stored, not decoded."""
    if sqlite:
        try:
            p = Prepared(stmt, conn.dialect, raw)
        except Unsupported:
            pass
        else:
            return p.run(conn, values or {})[0]
    return _through_sqlalchemy(conn, stmt, values or {})[0]


def _through_sqlalchemy(conn, stmt, values):
    res = conn.execute(stmt, values)
    rows = [dict(r) for r in res.mappings()] if res.returns_rows else []
    return rows, res.rowcount
