"""Prepared statements give exactly the rows SQLAlchemy gives (same
types: datetimes, booleans, JSON, NULLs) and errors translated the same
way, on SQLite and on PostgreSQL's autocommit connections; the node
functions built on them behave the same on every database."""

import datetime
import threading
import time

import pytest
import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import engine as db_engine
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import prepared
from baremetal.db import reservations as db_reservations
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits
from tests import harness
from tests import services

NODES = db_nodes.NODES


@pytest.fixture(params=['sqlite', 'postgresql'])
def prepared_db_api(request, tmp_path):
    """The databases where statements run prepared."""
    h = harness.Harness(
        tmp_path, db_url=services.db_url(request.param, schema=True))
    yield h
    h.close()


def _node(api, **fields):
    return db_nodes.get_node(api.create_node(**fields)['uuid'])


def test_rows_match_sqlalchemy(prepared_db_api):
    api = prepared_db_api
    node = _node(api, name='same', properties={'cpus': 4, 'x': [1, None]},
                 extra={'é': 'ü'})
    db_rows.update(NODES, node['id'], {'maintenance': True,
                                       'maintenance_reason': None})
    stmt = sa.select(NODES).where(NODES.c.id == sa.bindparam('i'))
    ran = []
    real = prepared.Prepared.run
    cache = db_engine.prepared_cache
    with db_engine.reader() as conn:
        assert cache.usable(conn)
        prepared.Prepared.run = lambda self, *a: ran.append(1) or real(
            self, *a)
        try:
            fast, count = prepared.run(cache, conn, stmt,
                                       {'i': node['id']})
        finally:
            prepared.Prepared.run = real
        slow = [dict(r) for r in conn.execute(
            stmt, {'i': node['id']}).mappings()]
    assert ran, 'not run prepared'
    assert fast == slow and len(fast) == 1
    row = fast[0]
    assert row['maintenance'] is True
    assert row['properties'] == {'cpus': 4, 'x': [1, None]}
    assert row['extra'] == {'é': 'ü'}
    assert isinstance(row['created_at'], datetime.datetime)
    assert isinstance(row['updated_at'], datetime.datetime)
    assert row['maintenance_reason'] is None


def test_parameters_are_converted(any_db_api):
    api = any_db_api
    node = _node(api, name='params')
    # whole seconds: MySQL's DATETIME (as Ironic's schema) keeps no more
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert db_rows.update(NODES, node['id'], {
        'maintenance': True, 'properties': {'a': [1, 2]},
        'provision_updated_at': when}) == 1
    got = db_nodes.get_node(node['uuid'])
    assert got['maintenance'] is True
    assert got['properties'] == {'a': [1, 2]}
    assert got['provision_updated_at'] == when


def test_driver_errors_are_translated_as_usual(any_db_api):
    api = any_db_api
    taken = _node(api, name='taken')
    other = _node(api, name='free')
    for _ in range(2):   # the connection stays usable after the error
        with pytest.raises(exception.DuplicateName):
            db_rows.update(NODES, other['id'], {'name': 'taken'})
        with pytest.raises(exception.DuplicateName):
            db_rows.create(NODES, {'name': 'taken', 'driver': 'x'})
        with pytest.raises(exception.NodeAlreadyExists):
            db_rows.create(NODES, {'uuid': taken['uuid'], 'driver': 'x'})
    assert db_nodes.get_node(other['uuid'])['name'] == 'free'
    assert db_rows.update(NODES, other['id'], {'name': 'renamed'}) == 1
    assert db_nodes.get_node('renamed')['id'] == other['id']


def test_a_lifecycle_runs_without_falling_back(prepared_db_api,
                                              monkeypatch):
    """The statements of a node's whole lifecycle run prepared as they
    are (a statement the driver refused would be run again through
    SQLAlchemy: correct, but twice the work)."""
    api = prepared_db_api
    refused = []
    real = prepared._after_error
    monkeypatch.setattr(prepared, '_after_error', lambda conn, stmt, v: (
        refused.append(str(stmt)), real(conn, stmt, v))[1])
    node = api.make_available(name='life', properties={'cpus': 2})
    api.provision(node['uuid'], 'active')
    api.wait_for(node['uuid'], 'active')
    api.provision(node['uuid'], 'deleted')
    api.wait_for(node['uuid'], 'available')
    assert api.request('DELETE', '/v1/nodes/life')[0] == 204
    assert refused == []
    # and errors do (a node is created in a transaction, with its event
    # in the change feed: a chassis here)
    chassis = models.TABLES['chassis']
    uuid = db_rows.create(chassis, {})['uuid']
    with pytest.raises(exception.ResourceAlreadyExists):
        db_rows.create(chassis, {'uuid': uuid})
    assert len(refused) == 1


def test_reserve_and_release_through_prepared_statements(any_db_api):
    api = any_db_api
    node = _node(api, name='lock')
    row = db_reservations.reserve_node('host-a', node['uuid'])
    assert row['reservation'] == 'host-a' and row['name'] == 'lock'
    with pytest.raises(exception.NodeLocked):
        db_reservations.reserve_node('host-b', 'lock')
    assert db_reservations.release_node('host-a', node['id'],
                                        {'extra': {'k': 'v'}})
    got = db_nodes.get_node(node['uuid'])
    assert got['reservation'] is None and got['extra'] == {'k': 'v'}
    assert not db_reservations.release_node('host-a', node['id'])


def test_postgresql_reads_and_single_writes_are_one_round_trip(tmp_path):
    """On PostgreSQL a read block and a single() write run in autocommit:
    no BEGIN before and no COMMIT/ROLLBACK after the statement (each
    statement is its own transaction), and a write is visible to others
    as soon as it ran."""
    api = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    try:
        node = _node(api, name='auto')
        with db_engine.reader() as conn:
            first = conn.exec_driver_sql('SELECT now()').scalar()
            time.sleep(0.01)
            second = conn.exec_driver_sql('SELECT now()').scalar()
            assert second > first    # not one transaction: two
        with db_engine.single() as conn:
            conn.execute(NODES.update().where(
                NODES.c.id == node['id']).values(description='seen'))
            with db_engine.reader() as other:
                assert other is not conn
                assert other.execute(
                    sa.select(NODES.c.description).where(
                        NODES.c.id == node['id'])).scalar() == 'seen'
        with db_engine.writer() as conn:   # several statements: a transaction
            first = conn.exec_driver_sql('SELECT now()').scalar()
            time.sleep(0.01)
            assert conn.exec_driver_sql('SELECT now()').scalar() == first
    finally:
        api.close()


def test_postgresql_prepares_hot_statements_on_the_server(tmp_path):
    """On PostgreSQL the statements built once are PREPAREd once per
    connection and EXECUTEd after: a node's lifecycle leaves them in the
    connection's pg_prepared_statements, none had to fall back to text,
    and their results are the ones SQLAlchemy gives."""
    api = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    try:
        node = api.make_available(name='srv', extra={'a': [1]})
        api.provision('srv', 'active')
        api.wait_for('srv', 'active')
        cached = list(db_engine.prepared_cache._by_id.values())
        assert cached and all(p.server is not None for p in cached)
        with db_engine.reader() as conn:
            names = {r[0] for r in conn.exec_driver_sql(
                'SELECT name FROM pg_prepared_statements')}
            assert any(n.startswith('baremetal_') for n in names)
            row, _ = db_traits.get_node_with_traits(node['uuid'])
            stmt = sa.select(NODES).where(NODES.c.id == row['id'])
            slow = dict(conn.execute(stmt).mappings().one())
        slow.pop('_trait', None)
        assert {k: row[k] for k in slow} == slow
        assert row['provision_state'] == 'active'
        # prepared statements dropped behind our back: answered anyway
        # (through SQLAlchemy once), then prepared again
        # prepared on the connection kept last
        db_nodes.get_node(node['uuid'])
        with db_engine.reader() as conn:   # which is this one
            conn.exec_driver_sql('DEALLOCATE ALL')
        for _ in range(2):
            assert db_nodes.get_node(node['uuid'])['name'] == 'srv'
        with db_engine.reader() as again:
            assert again is conn
            assert again.exec_driver_sql(
                'SELECT count(*) FROM pg_prepared_statements').scalar()
    finally:
        api.close()


def test_postgresql_prepares_list_pages_and_drops_old_shapes(
        tmp_path, monkeypatch):
    """List pages run prepared on the server, told apart by their SQL
    (a page and the next page of the same shape share a statement); only
    the last PAGE_SHAPES shapes stay prepared, the others are
    deallocated on a connection when it is next used."""
    api = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    monkeypatch.setattr(prepared, 'PAGE_SHAPES', 2)
    try:
        for i in range(3):
            _node(api, name='n%d' % i)

        def page(*columns, marker=None):
            return db_rows.query(NODES, columns=columns, limit=2,
                                 marker=marker)

        first = page('id', 'name')
        assert [r['name'] for r in first] == ['n0', 'n1']
        assert [r['name'] for r in page('id', 'name', marker=first[-1])
                ] == ['n2']
        assert [r['name'] for r in page('id', 'name', marker=first[-1])
                ] == ['n2']
        kept = list(prepared._PAGES.values())
        # a third shape: the first drops out of the kept ones
        assert [r['uuid'] for r in page('id', 'uuid')]
        assert kept[0] not in prepared._PAGES.values()
        assert kept[0].name in prepared._DROPPED
        live = {s.name for s in prepared._PAGES.values() if s is not None}
        assert len(live) == 2
        with db_engine.reader() as conn:
            names = {r[0] for r in conn.exec_driver_sql(
                'SELECT name FROM pg_prepared_statements')}
        assert kept[0].name not in names
        assert live & names
        # and their rows are SQLAlchemy's
        with db_engine.reader() as conn:
            slow = [dict(r) for r in conn.execute(
                sa.select(NODES.c.id, NODES.c.uuid)
                .order_by(NODES.c.id).limit(2)).mappings()]
        assert page('id', 'uuid') == slow
    finally:
        api.close()


def test_node_json_pages_run_as_text_on_postgresql(tmp_path, monkeypatch):
    """The pages whose statement writes each node's JSON (Nova's field
    list, the detail list) run as text on PostgreSQL: never offered to
    PREPARE (as ``concat()`` takes any type, the server refused them,
    with an error in its log for each shape), the next page read ahead
    as before, and the same nodes."""
    api = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    offered = []
    real = prepared._page_statement
    monkeypatch.setattr(prepared, '_page_statement',
                        lambda sql: offered.append(sql) or real(sql))
    try:
        uuids = sorted(api.create_node(name='j%d' % i,
                                       properties={'cpus': i})['uuid']
                       for i in range(5))
        for path in ('/v1/nodes?fields=uuid,properties,traits&limit=2',
                     '/v1/nodes/detail?limit=2'):
            seen = []
            while path:
                status, body, _ = api.request('GET', path)
                assert status == 200, body
                seen += [n['uuid'] for n in body['nodes']]
                nxt = body.get('next')
                path = nxt[nxt.index('/v1/'):] if nxt else None
            assert sorted(seen) == uuids, path
        assert offered == [], offered
        assert not [sql for sql in prepared._PAGES if 'concat(' in sql]
        # plain pages still are
        assert len(db_rows.query(NODES, columns=('id', 'name'), limit=2,
                                 marker={'id': 0})) == 2
        assert offered
    finally:
        api.close()


def test_pages_as_tuples(any_db_api):
    """A page asked for as tuples holds the same values, in the order
    selected, prepared or not (MariaDB: through SQLAlchemy)."""
    for i in range(3):
        _node(any_db_api, name='t%d' % i)
    columns = [NODES.c.id, NODES.c.name, NODES.c.uuid]
    dicts = db_rows.query(NODES, select=columns, limit=2)
    tuples = db_rows.query(NODES, select=columns, limit=2, tuples=True)
    assert [r['name'] for r in dicts] == ['t0', 't1']
    assert tuples == [(r['id'], r['name'], r['uuid']) for r in dicts]


def test_a_page_the_server_cannot_prepare_runs_as_text(tmp_path):
    """A page statement PostgreSQL cannot prepare (a parameter whose
    type it cannot infer) runs as text, and its shape is not offered to
    PREPARE again at every page."""
    api = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    try:
        node = _node(api, name='text')
        columns = [NODES.c.id,
                   sa.bindparam('maybe', None).is_(None).label('unset')]
        for _ in range(2):
            assert db_rows.query(NODES, select=columns) == [
                {'id': node['id'], 'unset': True}]
        shapes = [sql for sql, s in prepared._PAGES.items()
                  if ' IS NULL AS unset' in sql]
        assert len(shapes) == 1
        assert prepared._PAGES[shapes[0]] is None
    finally:
        api.close()


def test_a_page_shape_is_compiled_once(prepared_db_api, monkeypatch):
    """Pages that differ only in their values (marker, limit, filter,
    a bound text) share one compiled statement, each with its own
    values; a shape pushed out of the last PAGE_SHAPES is compiled
    again when it comes back (and, on PostgreSQL, prepared again on the
    server under a new name)."""
    compiled = []

    class Counting(prepared.Prepared):
        __slots__ = ()

        def __init__(self, stmt, *args, **kwargs):
            if kwargs.get('page'):
                compiled.append(stmt)
            super().__init__(stmt, *args, **kwargs)

    monkeypatch.setattr(prepared, 'Prepared', Counting)
    monkeypatch.setattr(prepared, 'PAGE_SHAPES', 2)
    prepared._SHAPES.clear()
    for i in range(4):
        _node(prepared_db_api, name='p%d' % i)
    N = NODES

    def page(limit, marker=None, name_not='', label='x'):
        return [tuple(r.values()) for r in db_rows.query(
            N, [N.c.name != name_not], limit=limit, marker=marker,
            select=[N.c.id, N.c.name,
                    sa.bindparam('label', label, sa.Text).label('l')])]

    first = page(2)
    assert [r[1:] for r in first] == [('p0', 'x'), ('p1', 'x')]
    assert [r[1:] for r in page(3, {'id': first[-1][0]}, 'p3', 'y')] == [
        ('p2', 'y')]
    assert [r[1:] for r in page(1, {'id': first[0][0]}, label='z')] == [
        ('p1', 'z')]
    # one shape without a marker, one with
    assert len(compiled) == 2
    # a third shape pushes out the first, which comes back compiled anew
    assert [r['name'] for r in db_rows.query(N, columns=('id', 'name'),
                                             limit=1)] == ['p0']
    assert len(compiled) == 3
    assert [r[1:] for r in page(4, name_not='p0')] == [
        ('p1', 'x'), ('p2', 'x'), ('p3', 'x')]
    assert len(compiled) == 4
    if db_engine.engine().dialect.name == 'postgresql':
        with db_engine.reader() as conn:
            names = {r[0] for r in conn.exec_driver_sql(
                'SELECT name FROM pg_prepared_statements')}
        assert {s.name for s in prepared._PAGES.values() if s} <= names


def test_a_driver_scalar_is_seen_and_its_errors_translated(
        prepared_db_api):
    """``driver_scalar`` (the read-ahead's snapshot) runs on the
    driver's cursor: statement listeners still see it, and an error is
    raised as SQLAlchemy raises it, the connection usable after."""
    seen = []
    me = threading.get_ident()

    def listen(conn, cursor, statement, *args):
        # this thread's (a harness's conductor may run periodic tasks)
        if threading.get_ident() == me:
            seen.append(statement)
    sa.event.listen(db_engine.engine(), 'before_cursor_execute', listen)
    try:
        with db_engine.reader() as conn:
            assert prepared.driver_scalar(conn, 'SELECT 40 + 2') == 42
            assert seen == ['SELECT 40 + 2']
            bad = 'SELECT no_such_function()'
            with pytest.raises(Exception) as through_sqlalchemy:
                conn.exec_driver_sql(bad)
            with pytest.raises(Exception) as driver:
                prepared.driver_scalar(conn, bad)
            assert type(driver.value) is type(through_sqlalchemy.value)
            raw = conn.dialect.loaded_dbapi.Error
            assert not isinstance(driver.value, raw)
            assert prepared.driver_scalar(conn, 'SELECT 7') == 7
    finally:
        sa.event.remove(db_engine.engine(), 'before_cursor_execute', listen)
