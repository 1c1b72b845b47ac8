"""The database connection: the engine, the connections kept open, and
the blocks every query runs in.  Library errors of a lost connection
become ``DatabaseUnavailable`` here.  On SQLite (the embedded server)
writes are serialised by a process lock, so concurrent workers never see
"database is locked"; WAL lets readers run beside the writer.

Three kinds of block: ``writer()`` (a transaction of several
statements), ``single()`` (one write statement, committed on its own)
and ``reader()``.  On PostgreSQL the last two run on autocommit
connections: each is one round trip to the server instead of three
(BEGIN, the statement, COMMIT or ROLLBACK), and under PostgreSQL's READ
COMMITTED isolation every statement of a read block sees its own
snapshot either way.
"""

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters
from oslo_log import log

from baremetal.common import exception
from baremetal.db import prepared

LOG = log.getLogger(__name__)

_engine: sa.engine.Engine | None = None
_write_lock: Any = contextlib.nullcontext()

# Set by configure(); the other db modules read them, never set them.
# Statements built once run prepared on SQLite and on the autocommit
# connections of PostgreSQL and MariaDB (see prepared.py):
prepared_cache: prepared.Cache | None = None

_DIALECT_CACHES: list[dict] = []


def dialect_cache() -> dict:
    """A dict for statements built once that depend on the dialect
    (RETURNING): emptied whenever the engine is configured."""
    cache: dict = {}
    _DIALECT_CACHES.append(cache)
    return cache


# For idempotent delete-then-insert transactions: on MySQL/MariaDB two of
# them at once (conductors registering together) can deadlock on gap
# locks; the loser is rolled back and simply runs again.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, inc_retry_interval=True,
    max_retry_interval=0.5)


def configure(url: str, synchronous_normal: bool = True,
              max_pool_size: int = 10) -> sa.engine.Engine:
    """Create the engine for ``url``; call once per process."""
    global _engine, _write_lock, _open, _open_auto, prepared_cache
    sqlite = url.startswith('sqlite')
    memory = sqlite and (':memory:' in url or
                         url in ('sqlite://', 'sqlite:///'))
    if sqlite:
        # a file database keeps its open connections in _OpenConnections
        # (below) rather than in a SQLAlchemy pool; WAL lets readers run
        # beside the one writer the lock below admits
        pool = ({'poolclass': sa.pool.StaticPool} if memory else
                {'poolclass': sa.pool.NullPool})
        engine = sa.create_engine(
            url, connect_args={'check_same_thread': False, 'timeout': 30},
            **pool)
        exc_filters.register_engine(engine)

        @sa.event.listens_for(engine, 'connect')
        def _sqlite_pragmas(dbapi_conn, record):
            cur = dbapi_conn.cursor()
            if not memory:
                cur.execute('PRAGMA journal_mode=WAL')
            if synchronous_normal:
                cur.execute('PRAGMA synchronous=NORMAL')
            cur.execute('PRAGMA busy_timeout=30000')
            # a statement that fires a trigger (the change feed's, see
            # events.py) keeps a statement journal; in a temporary file
            # (SQLite's default) that doubles the cost of a node write
            cur.execute('PRAGMA temp_store=MEMORY')
            cur.close()
        _write_lock = threading.Lock()
    else:
        # oslo.db's engine set-up (and the ~0.1 s of imports behind it)
        # only where it is used: the embedded server on SQLite starts
        # without it
        from oslo_db.sqlalchemy import engines
        engine = engines.create_engine(url, max_pool_size=max_pool_size,
                                       max_overflow=max_pool_size,
                                       pool_timeout=30)
        _write_lock = contextlib.nullcontext()
    close_connections()
    _open_auto = None
    if memory:
        _open = None
    elif sqlite:
        _open = _OpenConnections(engine, max_pool_size)
    else:
        # half the pool stays open with us, and the whole pool again in
        # autocommit (most statements are reads and single writes: one
        # round trip each, no COMMIT or ROLLBACK after it); the pool
        # (twice its size) has room for bursts
        keep = max(1, max_pool_size // 2)
        _open_auto = _OpenConnections(engine, max_pool_size,
                                      ping_after=5.0, autocommit=True)
        # a block in autocommit ends with no ROLLBACK sent (the MySQL
        # drivers send one whatever the mode: a round trip a statement)
        engine.dialect.skip_autocommit_rollback = True
        _open = _OpenConnections(engine, keep, ping_after=5.0)
    _engine = engine
    prepared_cache = prepared.Cache(always=sqlite)
    for cache in _DIALECT_CACHES:
        cache.clear()
    return engine


class Unusable(Exception):
    """The database cannot be used at all (``first_use``)."""


@contextlib.contextmanager
def first_use(url: str) -> Iterator[None]:
    """A process's first statements on the database at ``url``: one it
    cannot use at all (a server that cannot be reached, credentials
    refused, a file that cannot be opened) is Unusable, with the
    driver's reason in one line."""
    try:
        yield
    except (sa.exc.OperationalError, sa.exc.InterfaceError,
            db_exc.DBConnectionError, db_exc.DBNonExistentDatabase) as e:
        reason = str(getattr(e, 'orig', None) or e).strip()
        raise Unusable('the database at %s cannot be used: %s' % (
            safe_url(url), reason.splitlines()[0] if reason
            else type(e).__name__)) from None


def safe_url(url: str) -> str:
    """``url`` as a log may show it: without its password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:
        return '<database>'


def engine() -> sa.engine.Engine:
    if _engine is None:
        raise RuntimeError('database not configured')
    return _engine


def close_connections() -> None:
    """Close the connections kept open (shutdown, tests)."""
    for kept in (_open, _open_auto):
        if kept is not None:
            kept.close_all()


class _OpenConnections:
    """Connections kept open between uses.

    Checking a connection out of SQLAlchemy's pool and back in costs more
    than running a statement on SQLite, and on PostgreSQL/MySQL oslo.db's
    pool also pings the server at every checkout.  Here a block takes an
    open connection from a stack and puts it back: the most recently used
    (warm) ones go first, and only as many stay open as were ever in use
    at once (at most ``keep``).  On a server database a connection idle
    for longer than ``ping_after`` seconds is pinged before use, and
    dropped if the server has gone, as the pool's pre-ping would.
    """

    def __init__(self, eng: sa.engine.Engine | None = None,
                 keep: int = 0, ping_after: float | None = None,
                 autocommit: bool = False) -> None:
        self.engine = eng
        self.keep = keep
        self.ping_after = ping_after
        self.autocommit = autocommit
        self._stack: list[tuple[sa.engine.Connection, float]] = []

    def take(self) -> sa.engine.Connection:
        while True:
            try:
                conn, used = self._stack.pop()
            except IndexError:
                conn = self.engine.connect()
                if self.autocommit:
                    conn.execution_options(isolation_level='AUTOCOMMIT')
                return conn
            if conn.closed or conn.invalidated:
                continue
            if self.ping_after is not None and \
                    time.monotonic() - used > self.ping_after:
                try:
                    conn.exec_driver_sql('SELECT 1')
                    conn.rollback()
                except Exception:
                    _close_quietly(conn)
                    continue
            return conn

    def give(self, conn: sa.engine.Connection) -> None:
        if conn.closed or conn.invalidated or \
                len(self._stack) >= self.keep:
            _close_quietly(conn)
        else:
            self._stack.append((conn, time.monotonic()))

    def close_all(self) -> None:
        while self._stack:
            _close_quietly(self._stack.pop()[0])


def _close_quietly(conn: sa.engine.Connection) -> None:
    try:
        conn.close()
    except Exception:  # e.g. the engine was disposed meanwhile
        LOG.debug('closing a database connection failed', exc_info=True)


_open: _OpenConnections | None = None
_open_auto: _OpenConnections | None = None   # PostgreSQL only


class _Block:
    """A connection for one ``with`` block: a kept one (``autocommit``:
    in autocommit mode where the database has them), else pooled.
    Whatever transaction the block leaves open is rolled back (an open
    read transaction would pin SQLite's WAL); a lost connection becomes
    DatabaseUnavailable (``_raise_unreachable``), a value the database
    cannot hold InvalidParameterValue (``_raise_data_error``).  A class,
    not a generator: every read of the API and the conductor enters
    one."""

    __slots__ = ('_kept', '_conn')

    def __init__(self, autocommit: bool = False) -> None:
        self._kept = (_open_auto if autocommit and _open_auto is not None
                      else _open)

    def __enter__(self) -> sa.engine.Connection:
        try:
            if self._kept is None:
                self._conn = engine().connect()
            else:
                self._conn = self._kept.take()
        except Exception as e:
            _raise_unreachable(e, connecting=True)
            raise
        return self._conn

    def __exit__(self, typ, error, tb) -> None:
        conn = self._conn
        try:
            if isinstance(error, Exception):
                _raise_unreachable(error)
                _raise_data_error(error)
        finally:
            if self._kept is None:
                conn.close()
            else:
                try:
                    if conn.in_transaction():
                        conn.rollback()
                except Exception:
                    # a connection the server dropped cannot roll back;
                    # it is invalidated and closed by give()
                    LOG.debug('rollback failed', exc_info=True)
                    _close_quietly(conn)
                finally:
                    self._kept.give(conn)


def _is_disconnect(e: Exception, connecting: bool = False) -> bool:
    if connecting and isinstance(e, (sa.exc.OperationalError,
                                     db_exc.DBError)):
        return True     # no connection could be made
    if isinstance(e, db_exc.DBConnectionError):
        return True
    if isinstance(e, sa.exc.DBAPIError) and e.connection_invalidated:
        return True
    inner = getattr(e, 'inner_exception', None)
    return isinstance(inner, sa.exc.DBAPIError) and \
        inner.connection_invalidated


def _raise_data_error(e: Exception) -> None:
    """A value the database refuses to hold (a string longer than its
    column, a number out of its range: PostgreSQL and MySQL check them,
    SQLite only an integer beyond 64 bits, which its driver cannot bind:
    OverflowError) -> InvalidParameterValue with the database's words,
    a 400 where it came with a request.  Returns for any other error."""
    inner = getattr(e, 'inner_exception', None)
    if not (isinstance(e, (sa.exc.DataError, db_exc.DBDataError,
                           OverflowError))
            or isinstance(inner, (sa.exc.DataError, OverflowError))
            or isinstance(getattr(e, 'orig', None), OverflowError)):
        return
    reason = str(getattr(inner or e, 'orig', None) or inner or e).strip()
    reason = reason.splitlines()[0] if reason else type(e).__name__
    raise exception.InvalidParameterValue(
        err='A value does not fit the database: %s' % reason[:200]) from e


def _raise_unreachable(e: Exception, connecting: bool = False) -> None:
    """A lost database connection (the server restarting, the network),
    or none to be had -> DatabaseUnavailable; the connections kept open
    are dropped, as they were most likely lost too.  Returns for any
    other error."""
    if not _is_disconnect(e, connecting):
        return
    close_connections()
    reason = str(getattr(e, 'inner_exception', None) or e)
    reason = reason.strip().splitlines()[0] if reason.strip() \
        else type(e).__name__
    LOG.warning('The database cannot be reached: %s', reason)
    raise exception.DatabaseUnavailable(reason=reason[:200]) from None


@contextlib.contextmanager
def writer() -> Iterator[sa.engine.Connection]:
    """A write transaction (serialised on SQLite)."""
    with _write_lock, _Block() as conn, conn.begin():
        yield conn


@contextlib.contextmanager
def single() -> Iterator[sa.engine.Connection]:
    """One write statement, atomic on its own: in autocommit on a
    database server (one round trip), a ``writer()`` transaction on
    SQLite."""
    if _open_auto is None:
        with writer() as conn:
            yield conn
        return
    with _Block(autocommit=True) as conn:
        yield conn


def reader() -> _Block:
    """A connection to read with (in autocommit where the database has
    it): ``with reader() as conn``."""
    return _Block(autocommit=True)
