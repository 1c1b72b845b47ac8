"""On a SQLite file, reader() and writer() reuse open connections instead
of opening one per use; a block nested in another gets its own; every
block ends its transaction, committed or rolled back."""

import threading

import pytest
import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import conductors as db_conductors
from baremetal.db import engine as db_engine
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

NODES = db_nodes.NODES


@pytest.fixture
def opened(api):
    """Counts the DBAPI connections the engine opens from now on."""
    count = []
    sa.event.listen(db_engine.engine(), 'connect', lambda *a: count.append(1))
    yield count


def test_connections_are_reused(api, opened):
    node = db_nodes.get_node(api.create_node(name='reuse')['uuid'])
    for _ in range(50):
        db_nodes.get_node(node['uuid'])
        db_rows.update(NODES, node['id'], {'extra': {'a': 1}})
    assert len(opened) <= 1


def test_nested_block_gets_its_own_connection(api):
    with db_engine.writer() as outer:
        with db_engine.reader() as inner:
            assert inner is not outer
    with db_engine.reader() as a:
        pass
    with db_engine.reader() as b:
        assert b is a   # the one just given back


def test_blocks_end_their_transactions(api):
    node = db_nodes.get_node(api.create_node(name='tx')['uuid'])
    with db_engine.reader() as conn:
        conn.execute(sa.select(NODES.c.id)).all()
        assert conn.in_transaction()
    assert not conn.in_transaction()

    with pytest.raises(RuntimeError):
        with db_engine.writer() as conn:
            conn.execute(NODES.update().where(
                NODES.c.id == node['id']).values(name='changed'))
            raise RuntimeError('abort')
    assert not conn.in_transaction()
    assert db_nodes.get_node(node['uuid'])['name'] == 'tx'   # rolled back

    with pytest.raises(exception.DuplicateName):
        db_rows.create(NODES, {'name': 'tx', 'driver': 'fake-hardware'})
    with db_engine.reader() as again:
        assert again is conn and not again.in_transaction()


def test_threads_use_separate_connections(api):
    api.create_node(name='threads')
    seen, barrier = [], threading.Barrier(4)

    def work():
        with db_engine.reader() as conn:
            barrier.wait(5)
            seen.append(conn)
            conn.execute(sa.select(NODES.c.id)).all()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len({id(c) for c in seen}) == 4


def test_server_database_connection_checked_after_idle(tmp_path,
                                                        monkeypatch):
    """On PostgreSQL kept connections are pinged after being idle; one
    the server dropped meanwhile is replaced, not handed out."""
    from tests import services
    url = services.db_url('postgresql')
    db_engine.configure(url)
    try:
        with db_engine.reader() as conn:
            pid = conn.exec_driver_sql('SELECT pg_backend_pid()').scalar()
        with db_engine.reader() as again:
            assert again is conn            # kept, no ping needed
        admin = sa.create_engine(url, isolation_level='AUTOCOMMIT')
        with admin.connect() as a:
            a.exec_driver_sql('SELECT pg_terminate_backend(%d)' % pid)
        admin.dispose()
        monkeypatch.setattr(db_engine._open_auto, 'ping_after', 0.0)
        with db_engine.reader() as fresh:
            assert fresh.exec_driver_sql(
                'SELECT pg_backend_pid()').scalar() != pid
    finally:
        db_engine.close_connections()
        db_engine.engine().dispose()


def test_registration_deadlock_is_retried(api, monkeypatch):
    """MariaDB may pick a registering conductor as a deadlock victim
    when several start at once: the registration runs again."""
    from oslo_db import exception as db_exc
    real, calls = db_engine.writer, []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise db_exc.DBDeadlock()
        return real()
    monkeypatch.setattr(db_engine, 'writer', flaky)
    db_conductors.register_conductor('deadlocked', '', [])
    assert len(calls) == 2
    assert 'deadlocked' in {c['hostname']
                            for c in db_conductors.list_conductors()}
