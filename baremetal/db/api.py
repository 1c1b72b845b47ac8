"""Database access: every query baremetal runs, in SQLAlchemy Core.

Rows cross this boundary as plain dicts.  Library errors are turned into
baremetal exceptions here.  On SQLite (the embedded server) writes are
serialised by a process lock, so concurrent workers never see "database
is locked"; WAL lets readers run beside the writer.

Three kinds of block: ``writer()`` (a transaction of several
statements), ``single()`` (one write statement, committed on its own)
and ``reader()``.  On PostgreSQL the last two run on autocommit
connections: each is one round trip to the server instead of three
(BEGIN, the statement, COMMIT or ROLLBACK), and under PostgreSQL's READ
COMMITTED isolation every statement of a read block sees its own
snapshot either way.
"""

import contextlib
import datetime
import threading
import time
import uuid as uuidlib
from collections.abc import Iterable, Iterator
from typing import Any

import sqlalchemy as sa
from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters
from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.db import events
from baremetal.db import models
from baremetal.db import prepared

LOG = log.getLogger(__name__)

T = models.TABLES
NODES = T['nodes']
PORTS = T['ports']
PORTGROUPS = T['portgroups']
TRAITS = T['node_traits']
CONDUCTORS = T['conductors']
HW_IFACES = T['conductor_hardware_interfaces']
BIOS = T['bios_settings']

_engine: sa.engine.Engine | None = None
# statements built once run prepared on SQLite and on PostgreSQL's
# autocommit connections (see prepared.py)
_prepared: prepared.Cache | None = None
_write_lock: Any = contextlib.nullcontext()
# whether node events are written from here (else by SQLite's triggers:
# db/events.py)
_events_in_python = True

# For idempotent delete-then-insert transactions: on MySQL/MariaDB two of
# them at once (conductors registering together) can deadlock on gap
# locks; the loser is rolled back and simply runs again.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, inc_retry_interval=True,
    max_retry_interval=0.5)


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def configure(url: str, synchronous_normal: bool = True,
              max_pool_size: int = 10) -> sa.engine.Engine:
    """Create the engine for ``url``; call once per process."""
    global _engine, _write_lock, _open, _open_auto, _prepared
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
    postgresql = engine.dialect.name == 'postgresql'
    _open_auto = None
    if memory:
        _open = None
    elif sqlite:
        _open = _OpenConnections(engine, max_pool_size)
    else:
        # half the pool stays open with us, and on PostgreSQL the whole
        # pool again in autocommit (most statements are reads and single
        # writes); the pool (twice its size) has room for bursts
        keep = max(1, max_pool_size // 2)
        if postgresql:
            _open_auto = _OpenConnections(engine, max_pool_size,
                                          ping_after=5.0, autocommit=True)
        _open = _OpenConnections(engine, keep, ping_after=5.0)
    _engine = engine
    global _events_in_python
    _events_in_python = events.in_python(engine.dialect.name)
    _prepared = (prepared.Cache(always=True) if sqlite else
                 prepared.Cache(always=False) if postgresql else None)
    # they depend on the dialect (RETURNING)
    _RESERVE_STMTS.clear()
    _INSERT_STMTS.clear()
    return engine


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


@contextlib.contextmanager
def _connection(autocommit: bool = False
                ) -> Iterator[sa.engine.Connection]:
    """A connection for one block: a kept one (``autocommit``: in
    autocommit mode where the database has them), else pooled.  Whatever
    transaction the block leaves open is rolled back (an open read
    transaction would pin SQLite's WAL)."""
    kept = (_open_auto if autocommit and _open_auto is not None
            else _open)
    if kept is None:
        with _unreachable(connecting=True):
            conn = engine().connect()
        with conn, _unreachable():
            yield conn
        return
    with _unreachable(connecting=True):
        conn = kept.take()
    try:
        with _unreachable():
            yield conn
    finally:
        try:
            if conn.in_transaction():
                conn.rollback()
        except Exception:
            # a connection the server dropped cannot roll back; it is
            # invalidated and closed by give()
            LOG.debug('rollback failed', exc_info=True)
            _close_quietly(conn)
        finally:
            kept.give(conn)


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


@contextlib.contextmanager
def _unreachable(connecting: bool = False) -> Iterator[None]:
    """A lost database connection (the server restarting, the network),
    or none to be had -> DatabaseUnavailable; the connections kept open
    are dropped, as they were most likely lost too."""
    try:
        yield
    except Exception as e:
        if not _is_disconnect(e, connecting):
            raise
        close_connections()
        reason = str(getattr(e, 'inner_exception', None) or e)
        reason = reason.strip().splitlines()[0] if reason.strip() \
            else type(e).__name__
        LOG.warning('The database cannot be reached: %s', reason)
        raise exception.DatabaseUnavailable(reason=reason[:200]) from None


@contextlib.contextmanager
def writer() -> Iterator[sa.engine.Connection]:
    """A write transaction (serialised on SQLite)."""
    with _write_lock, _connection() as conn, conn.begin():
        yield conn


@contextlib.contextmanager
def single() -> Iterator[sa.engine.Connection]:
    """One write statement, atomic on its own: in autocommit on
    PostgreSQL (one round trip), a ``writer()`` transaction elsewhere."""
    if _open_auto is None:
        with writer() as conn:
            yield conn
        return
    with _connection(autocommit=True) as conn:
        yield conn


@contextlib.contextmanager
def reader() -> Iterator[sa.engine.Connection]:
    with _connection(autocommit=True) as conn:
        yield conn


def _new_uuid() -> str:
    return str(uuidlib.uuid4())


def is_uuid_like(value: Any) -> bool:
    try:
        return str(uuidlib.UUID(str(value))) == str(value).lower()
    except (TypeError, ValueError, AttributeError):
        return False


def _cols(table: sa.Table, columns: Iterable[str] | None):
    if not columns:
        return [table]
    return [table.c[c] for c in columns]


# --------------------------------------------------------------- generic

_INSERT_STMTS: dict = {}


def _insert_stmt(table: sa.Table, keys: tuple[str, ...]):
    """INSERT INTO table (<keys>) [RETURNING id], built once per column
    set."""
    stmt = _INSERT_STMTS.get((table.name, keys))
    if stmt is None:
        stmt = table.insert().values(
            {k: sa.bindparam('v_' + k) for k in keys})
        if engine().dialect.insert_returning:
            stmt = stmt.returning(table.c.id)
        _INSERT_STMTS[(table.name, keys)] = stmt
    return stmt


def create(table: sa.Table, values: dict) -> dict:
    """Insert a row; translate unique violations into Conflict errors."""
    values = dict(values)
    if 'uuid' in table.c and not values.get('uuid'):
        values['uuid'] = _new_uuid()
    values.setdefault('created_at', utcnow())
    stmt = _insert_stmt(table, tuple(sorted(values)))
    try:
        # a node is created with its "created" event (change feed)
        with_event = table is NODES and _events_in_python
        with writer() if with_event else single() as conn:
            params = {'v_' + k: v for k, v in values.items()}
            if engine().dialect.insert_returning:
                rows, _ = prepared.run(_prepared, conn, stmt, params)
                values['id'] = rows[0]['id']
            else:
                res = conn.execute(stmt, params)
                values['id'] = res.inserted_primary_key[0]
            if with_event:
                events.write(conn, events.lifecycle(
                    values, 'created', values['created_at']), _prepared)
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


def _ident_column(table: sa.Table, ident: Any) -> tuple[str, Any] | None:
    if isinstance(ident, int):
        return 'id', ident
    if is_uuid_like(ident):
        return 'uuid', str(ident).lower()
    if 'name' in table.c:
        return 'name', ident
    return None


def get(table: sa.Table, ident: Any, not_found: type[Exception],
        columns: Iterable[str] | None = None, **nf_kwargs) -> dict:
    found = _ident_column(table, ident)
    row = None
    if found is not None:
        by, value = found
        stmt = _get_stmt(table, by, tuple(columns) if columns else None)
        with reader() as conn:
            rows, _ = prepared.run(_prepared, conn, stmt, {'ident': value})
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
    if table is NODES and _events_in_python and events.touches(values):
        return _update_node_with_events(row_id, values, where)
    try:
        with single() as conn:
            if where:
                return conn.execute(table.update()
                                    .where(table.c.id == row_id, *where)
                                    .values(**values)).rowcount
            params = {'v_' + k: v for k, v in values.items()}
            params['_row_id'] = row_id
            return prepared.run(_prepared, conn,
                                _update_stmt(table, tuple(sorted(values))),
                                params)[1]
    except db_exc.DBDuplicateEntry as e:
        raise _duplicate(table, values, e) from None


def _update_node_with_events(node_id: int, values: dict, where: tuple,
                             stmt=None, params: dict | None = None) -> int:
    """UPDATE a node and write the events of its tracked fields that
    change, in one transaction (see db/events.py): the node is read
    (and locked) first, the UPDATE runs (``stmt`` with ``params``, or
    one built from ``values`` and ``where``), then the events take
    their ids."""
    adhoc = None
    if stmt is None:
        if where:
            # built per call: run through SQLAlchemy (the prepared cache
            # is for statements built once)
            adhoc = (NODES.update().where(NODES.c.id == node_id, *where)
                     .values(**values))
        else:
            stmt = _update_stmt(NODES, tuple(sorted(values)))
            params = {'v_' + k: v for k, v in values.items()}
            params['_row_id'] = node_id
    try:
        with writer() as conn:
            old = events.before(conn, node_id, _prepared)
            if old is None:
                return 0
            n = (conn.execute(adhoc).rowcount if adhoc is not None else
                 prepared.run(_prepared, conn, stmt, params)[1])
            if n:
                events.write(conn, events.changes(
                    old, values, values.get('updated_at') or utcnow()),
                    _prepared)
            return n
    except db_exc.DBDuplicateEntry as e:
        raise _duplicate(NODES, values, e) from None


def delete(table: sa.Table, row_id: int) -> None:
    with single() as conn:
        conn.execute(table.delete().where(table.c.id == row_id))


def query(table: sa.Table, filters: Iterable = (), columns=None,
          limit: int | None = None, marker: dict | None = None,
          sort_key: str = 'id', sort_dir: str = 'asc',
          json_as_text: Iterable[str] = (),
          select: list | None = None, tuples: bool = False) -> list:
    """One page of ``table``: ``filters`` are SQLAlchemy clauses; the
    marker row holds the sort key's value and id of the previous page's
    last row (keyset pagination, one query per page).  The JSON columns
    in ``json_as_text`` may come back as their stored text (prepared: a
    page is rendered without decoding and encoding them again).
    ``select``: column expressions to select instead of ``columns``."""
    key = table.c[sort_key]
    order = [key.asc() if sort_dir == 'asc' else key.desc()]
    if sort_key != 'id':
        order.append(table.c.id.asc() if sort_dir == 'asc'
                     else table.c.id.desc())
    stmt = sa.select(*(select or _cols(table, columns))).where(*filters)
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
    with reader() as conn:
        return prepared.run_once(_prepared, conn, stmt,
                                 raw=frozenset(json_as_text),
                                 tuples=tuples)


def count(table: sa.Table, filters: Iterable = ()) -> int:
    with reader() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(table)
                            .where(*filters)).scalar_one()


# ----------------------------------------------------------------- nodes

def get_node(ident: Any, columns: Iterable[str] | None = None) -> dict:
    return get(NODES, ident, exception.NodeNotFound, columns, node=ident)


_RESERVE_STMTS: dict = {}


def _reserve_stmts(by: str):
    """(UPDATE ... SET reservation WHERE <by> AND unreserved [RETURNING
    the node where the database can], SELECT the node), built once per
    identifier kind."""
    stmts = _RESERVE_STMTS.get(by)
    if stmts is None:
        match = NODES.c[by] == sa.bindparam('ident')
        take = (NODES.update()
                .where(match, NODES.c.reservation.is_(None))
                .values(reservation=sa.bindparam('host')))
        returning = engine().dialect.update_returning
        if returning:
            take = take.returning(*NODES.c)
        stmts = (take, sa.select(NODES).where(match), returning)
        _RESERVE_STMTS[by] = stmts
    return stmts


def reserve_node(host: str, ident: Any) -> dict:
    """Take the exclusive lock on a node: one atomic UPDATE (which also
    returns the node on SQLite and PostgreSQL)."""
    found = _ident_column(NODES, ident)
    if found is None:
        raise exception.NodeNotFound(node=ident)
    by, value = found
    take, read, returning = _reserve_stmts(by)
    # with RETURNING the UPDATE alone decides and answers; the SELECT
    # after it only tells why not (or, without RETURNING, reads the node
    # the UPDATE took in the same transaction)
    with single() if returning else writer() as conn:
        rows, count = prepared.run(_prepared, conn, take,
                                   {'ident': value, 'host': host})
        if returning:
            if rows:
                return rows[0]
            taken = False
        else:
            taken = count == 1
        rows, _ = prepared.run(_prepared, conn, read, {'ident': value})
    row = rows[0] if rows else None
    if row is None:
        raise exception.NodeNotFound(node=ident)
    if not taken:
        raise exception.NodeLocked(node=row['uuid'] if
                                   is_uuid_like(ident) else ident,
                                   host=row['reservation'])
    return dict(row)


_RELEASE_STMTS: dict = {}


def release_node(host: str, node_id: int, values: dict | None = None) -> bool:
    """Drop our reservation (and save ``values`` in the same UPDATE)."""
    vals = dict(values or {})
    if vals:
        vals.setdefault('updated_at', utcnow())
    vals['reservation'] = None
    keys = tuple(sorted(vals))
    stmt = _RELEASE_STMTS.get(keys)
    if stmt is None:
        stmt = (NODES.update()
                .where(NODES.c.id == sa.bindparam('_row_id'),
                       NODES.c.reservation == sa.bindparam('_host'))
                .values({k: sa.bindparam('v_' + k) for k in keys}))
        _RELEASE_STMTS[keys] = stmt
    params = {'v_' + k: v for k, v in vals.items()}
    params.update(_row_id=node_id, _host=host)
    if _events_in_python and events.touches(vals):
        return _update_node_with_events(node_id, vals, (), stmt,
                                        params) == 1
    with single() as conn:
        return prepared.run(_prepared, conn, stmt, params)[1] == 1


def release_reservations_of(hosts: Iterable[str]) -> list[dict]:
    """Clear reservations held by (dead) ``hosts``; return those nodes."""
    hosts = list(hosts)
    if not hosts:
        return []
    with writer() as conn:
        rows = [dict(r) for r in conn.execute(
            sa.select(NODES.c.id, NODES.c.uuid, NODES.c.reservation,
                      NODES.c.provision_state)
            .where(NODES.c.reservation.in_(hosts))).mappings()]
        if rows:
            conn.execute(NODES.update()
                         .where(NODES.c.reservation.in_(hosts))
                         .values(reservation=None))
    return rows


_DESTROY_STMTS: list = []
_DESTROY_ONE: dict = {}


def _destroy_stmts() -> list:
    """DELETE the node (any / only if unreserved), DELETE what hangs off
    it, unlink its allocations: built once."""
    if not _DESTROY_STMTS:
        nid = sa.bindparam('_node')
        _DESTROY_STMTS.append(NODES.delete().where(NODES.c.id == nid))
        _DESTROY_STMTS.append(NODES.delete().where(
            NODES.c.id == nid, NODES.c.reservation.is_(None)))
        for t in _node_children():
            _DESTROY_STMTS.append(t.delete().where(t.c.node_id == nid))
        allocs = T['allocations']
        _DESTROY_STMTS.append(allocs.update()
                              .where(allocs.c.node_id == nid)
                              .values(node_id=None))
    return _DESTROY_STMTS


def _node_children() -> tuple:
    return (PORTS, PORTGROUPS, TRAITS, BIOS, T['volume_connectors'],
            T['volume_targets'], T['node_history'], T['node_inventory'],
            T['firmware_information'])


def _destroy_one(only_unreserved: bool):
    """PostgreSQL: the whole destroy as one statement (one round trip):
    the node's DELETE ... RETURNING feeds the DELETEs of what hangs off
    it and the unlinking of its allocations, all data-modifying WITH
    queries of one statement; the foreign keys are checked at its end."""
    stmt = _DESTROY_ONE.get(only_unreserved)
    if stmt is None:
        cond = [NODES.c.id == sa.bindparam('_node')]
        if only_unreserved:
            cond.append(NODES.c.reservation.is_(None))
        gone = (NODES.delete().where(*cond).returning(NODES.c.id)
                .cte('gone'))
        ids = sa.select(gone.c.id).scalar_subquery()
        stmt = sa.select(gone.c.id)
        for t in _node_children():
            stmt = stmt.add_cte(t.delete().where(t.c.node_id == ids)
                                .cte('del_' + t.name))
        allocs = T['allocations']
        stmt = stmt.add_cte(allocs.update().where(allocs.c.node_id == ids)
                            .values(node_id=None).cte('unlink_allocations'))
        _DESTROY_ONE[only_unreserved] = stmt
    return stmt


@retry_on_deadlock
def destroy_node(node_id: int, only_unreserved: bool = False) -> int:
    """Delete a node and everything hanging off it at once (``only_
    unreserved``: not while someone holds its lock)."""
    params = {'_node': node_id}
    if _open_auto is not None:
        with writer() as conn:
            old = events.before(conn, node_id, _prepared)
            gone = len(prepared.run(_prepared, conn,
                                    _destroy_one(only_unreserved),
                                    params)[0])
            if gone and old is not None:
                events.write(conn, events.lifecycle(old, 'deleted',
                                                    utcnow()), _prepared)
            return gone
    any_, unreserved, *rest = _destroy_stmts()
    try:
        with writer() as conn:
            old = (events.before(conn, node_id, _prepared)
                   if _events_in_python else None)
            # what references the node first (foreign keys are checked
            # per statement), then the node; undone if it is locked
            for stmt in rest:
                prepared.run(_prepared, conn, stmt, params)
            if not prepared.run(_prepared, conn,
                                unreserved if only_unreserved else any_,
                                params)[1]:
                raise _NothingDeleted()
            if old is not None:
                events.write(conn, events.lifecycle(old, 'deleted',
                                                    utcnow()), _prepared)
    except _NothingDeleted:
        return 0
    return 1


class _NothingDeleted(Exception):
    """Rolls a destroy back: the node was gone or locked."""


_TRAITS_OF_ONE = sa.select(TRAITS.c.trait).where(
    TRAITS.c.node_id == sa.bindparam('node_id')).order_by(TRAITS.c.trait)


_NODE_TRAITS_STMTS: dict = {}


def get_node_with_traits(ident: Any, columns: Iterable[str] | None = None
                         ) -> tuple[dict, list[str]]:
    """A node and its traits in one statement (the single-node GET):
    the node LEFT JOINed to its traits, one row per trait."""
    found = _ident_column(NODES, ident)
    rows = []
    if found is not None:
        by, value = found
        key = (by, tuple(columns) if columns else None)
        stmt = _NODE_TRAITS_STMTS.get(key)
        if stmt is None:
            # the node is found first, on its own (LIMIT 1: the column is
            # unique): a subquery with a LIMIT is planned apart, so that
            # PostgreSQL looks it up by its unique index even before it
            # has statistics on the table (joined directly, it may walk
            # the primary key instead, every row of a fresh table)
            cols = [NODES.c[c] for c in key[1] or NODES.c.keys()]
            node = (sa.select(*cols, *([] if 'id' in (key[1] or ('id',))
                                       else [NODES.c.id]))
                    .where(NODES.c[by] == sa.bindparam('ident'))
                    .limit(1).subquery('node'))
            stmt = (sa.select(*[node.c[c.name] for c in cols],
                              TRAITS.c.trait.label('_trait'))
                    .select_from(node.outerjoin(
                        TRAITS, TRAITS.c.node_id == node.c.id))
                    .order_by(TRAITS.c.trait))
            _NODE_TRAITS_STMTS[key] = stmt
        with reader() as conn:
            rows, _ = prepared.run(_prepared, conn, stmt, {'ident': value})
    if not rows:
        raise exception.NodeNotFound(node=ident)
    row = dict(rows[0])
    row.pop('_trait')
    return row, [r['_trait'] for r in rows if r['_trait'] is not None]


def traits_for_nodes(node_ids: list[int]) -> dict[int, list[str]]:
    """Traits of many nodes in one query."""
    out: dict[int, list[str]] = {}
    if not node_ids:
        return out
    with reader() as conn:
        if len(node_ids) == 1:
            traits = [r['trait'] for r in prepared.run(
                _prepared, conn, _TRAITS_OF_ONE,
                {'node_id': node_ids[0]})[0]]
            return {node_ids[0]: traits} if traits else {}
        stmt = sa.select(TRAITS.c.node_id, TRAITS.c.trait)
        if len(node_ids) < 5000:
            stmt = stmt.where(TRAITS.c.node_id.in_(node_ids))
        for nid, trait in conn.execute(stmt.order_by(TRAITS.c.trait)):
            out.setdefault(nid, []).append(trait)
    return out


@retry_on_deadlock
def set_node_traits(node_id: int, traits: list[str]) -> None:
    now = utcnow()
    with writer() as conn:
        conn.execute(TRAITS.delete().where(TRAITS.c.node_id == node_id))
        if traits:
            conn.execute(TRAITS.insert(), [
                {'node_id': node_id, 'trait': t, 'created_at': now}
                for t in sorted(set(traits))])


def add_node_trait(node_id: int, trait: str) -> None:
    with writer() as conn:
        exists = conn.execute(sa.select(TRAITS.c.trait).where(
            TRAITS.c.node_id == node_id, TRAITS.c.trait == trait)).first()
        if not exists:
            conn.execute(TRAITS.insert().values(node_id=node_id, trait=trait,
                                                created_at=utcnow()))


def delete_node_trait(node_id: int, trait: str) -> int:
    with single() as conn:
        return conn.execute(TRAITS.delete().where(
            TRAITS.c.node_id == node_id, TRAITS.c.trait == trait)).rowcount


# ------------------------------------------------------------ conductors

@retry_on_deadlock
def register_conductor(hostname: str, group: str,
                       interfaces: list[dict]) -> dict:
    """Register (or re-register) a conductor and what it offers."""
    now = utcnow()
    hw_types = sorted({i['hardware_type'] for i in interfaces})
    with writer() as conn:
        row = conn.execute(sa.select(CONDUCTORS).where(
            CONDUCTORS.c.hostname == hostname)).mappings().first()
        vals = {'online': True, 'conductor_group': group,
                'drivers': hw_types, 'updated_at': now}
        if row is None:
            cid = conn.execute(CONDUCTORS.insert().values(
                hostname=hostname, created_at=now, **vals)
            ).inserted_primary_key[0]
        else:
            cid = row['id']
            conn.execute(CONDUCTORS.update().where(CONDUCTORS.c.id == cid)
                         .values(**vals))
        conn.execute(HW_IFACES.delete().where(
            HW_IFACES.c.conductor_id == cid))
        if interfaces:
            conn.execute(HW_IFACES.insert(), [
                dict(i, conductor_id=cid, created_at=now)
                for i in interfaces])
    return {'id': cid, 'hostname': hostname}


def touch_conductor(hostname: str) -> bool:
    with single() as conn:
        res = conn.execute(CONDUCTORS.update()
                           .where(CONDUCTORS.c.hostname == hostname)
                           .values(updated_at=utcnow(), online=True))
    return res.rowcount == 1


def unregister_conductor(hostname: str) -> None:
    with single() as conn:
        conn.execute(CONDUCTORS.update()
                     .where(CONDUCTORS.c.hostname == hostname)
                     .values(online=False, updated_at=utcnow()))


def list_conductors() -> list[dict]:
    with reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(CONDUCTORS).order_by(CONDUCTORS.c.hostname)
        ).mappings()]


def live_conductors(timeout: int) -> list[dict]:
    limit = utcnow() - datetime.timedelta(seconds=timeout)
    with reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(CONDUCTORS).where(CONDUCTORS.c.online.is_(True),
                                        CONDUCTORS.c.updated_at >= limit)
            .order_by(CONDUCTORS.c.hostname)).mappings()]


def dead_conductor_hosts(timeout: int) -> list[str]:
    limit = utcnow() - datetime.timedelta(seconds=timeout)
    with reader() as conn:
        return [r[0] for r in conn.execute(
            sa.select(CONDUCTORS.c.hostname).where(sa.or_(
                CONDUCTORS.c.online.is_(False),
                CONDUCTORS.c.updated_at < limit)))]


def hardware_interfaces(conductor_ids: list[int] | None = None
                        ) -> list[dict]:
    stmt = sa.select(HW_IFACES)
    if conductor_ids is not None:
        stmt = stmt.where(HW_IFACES.c.conductor_id.in_(conductor_ids))
    with reader() as conn:
        return [dict(r) for r in conn.execute(stmt).mappings()]


# ------------------------------------------------------------- periodics

def nodes_in_states(provision_states: Iterable[str],
                    columns: Iterable[str] = ('id', 'uuid', 'driver',
                                              'conductor_group',
                                              'provision_state',
                                              'provision_updated_at',
                                              'reservation', 'maintenance'),
                    extra: Iterable = ()) -> list[dict]:
    with reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(*[NODES.c[c] for c in columns]).where(
                NODES.c.provision_state.in_(list(provision_states)),
                *extra)).mappings()]


# what a BIOS registry says of a setting (API 1.74)
BIOS_REGISTRY_FIELDS = ('attribute_type', 'allowable_values', 'lower_bound',
                        'max_length', 'min_length', 'read_only',
                        'reset_required', 'unique', 'upper_bound')

_BIOS_OF_ONE = sa.select(BIOS).where(
    BIOS.c.node_id == sa.bindparam('node_id')).order_by(BIOS.c.name)


def bios_settings(node_id: int) -> list[dict]:
    with reader() as conn:
        return prepared.run(_prepared, conn, _BIOS_OF_ONE,
                            {'node_id': node_id})[0]


@retry_on_deadlock
def replace_bios_settings(node_id: int, settings: list[dict]) -> None:
    now = utcnow()
    with writer() as conn:
        conn.execute(BIOS.delete().where(BIOS.c.node_id == node_id))
        if settings:
            conn.execute(BIOS.insert(), [
                dict({k: s.get(k) for k in BIOS_REGISTRY_FIELDS},
                     node_id=node_id, name=s['name'],
                     value=None if s.get('value') is None
                     else str(s['value']), created_at=now)
                for s in settings])


def nodes_for_sensors(only_active: bool) -> list[dict]:
    """Nodes whose sensors a conductor may read: not in maintenance, not
    held by a task (it may be talking to the same BMC), in ``active``
    unless ``only_active`` is False."""
    where = [NODES.c.maintenance.is_(False), NODES.c.reservation.is_(None)]
    if only_active:
        where.append(NODES.c.provision_state == states.ACTIVE)
    cols = ('id', 'uuid', 'name', 'driver', 'conductor_group',
            'instance_uuid', 'provision_state')
    with reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(*[NODES.c[c] for c in cols]).where(*where)
        ).mappings()]
