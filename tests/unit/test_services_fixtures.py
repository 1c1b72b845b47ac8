"""The service helpers give private, working resources."""

import pytest
import sqlalchemy as sa

from tests import services


def test_fresh_postgresql_database_is_empty_and_writable():
    engine = sa.create_engine(services.postgresql_url())
    with engine.begin() as c:
        assert sa.inspect(c).get_table_names() == []
        c.execute(sa.text('CREATE TABLE t (x int)'))
    engine.dispose()


def test_fresh_mysql_database_is_empty_and_writable():
    engine = sa.create_engine(services.mysql_url())
    with engine.begin() as c:
        assert sa.inspect(c).get_table_names() == []
        c.execute(sa.text('CREATE TABLE t (x int)'))
    engine.dispose()


def test_rabbit_vhost_accepts_a_connection():
    import kombu
    url = services.rabbit_url().replace('rabbit://', 'amqp://')
    with kombu.Connection(url, connect_timeout=10) as conn:
        conn.connect()
        assert conn.connected


def test_what_killed_test_processes_left_is_found_and_dropped():
    import os
    import subprocess
    import sys
    gone = subprocess.Popen([sys.executable, '-c', 'pass'])
    gone.wait()
    alive = subprocess.Popen([sys.executable, '-c',
                              'import time; time.sleep(60)'])
    try:
        names = ['bmtest_gw0_%d_0a1b2c' % gone.pid,
                 'bmtest_main_%d_0a1b2c' % alive.pid,
                 'bmtest_gw1_%d_ffffff' % os.getpid(),
                 'bmtest_gw0_%d_0a1b2c_more' % gone.pid, 'nova', 'bmtest']
        assert services.orphans(names) == [names[0]]
    finally:
        alive.kill()
        alive.wait()
    # a database of a process that is gone is dropped by the next
    # process's first use of the server
    admin = services._pg_admin()
    name = 'bmtest_gw0_%d_0a1b2c' % gone.pid
    with admin.connect() as c:
        c.execute(sa.text('CREATE DATABASE "%s"' % name))
    services._pg_drop_orphans.cache_clear()
    services.postgresql_url()
    with admin.connect() as c:
        assert c.execute(sa.text(
            'SELECT count(*) FROM pg_database WHERE datname = :n'),
            {'n': name}).scalar() == 0


@pytest.mark.parametrize('kind', ['postgresql', 'mysql'])
def test_a_database_given_back_is_empty_as_a_new_one(kind, tmp_path):
    from baremetal.db import engine as db_engine
    from tests import harness
    h = harness.Harness(tmp_path, db_url=services.db_url(kind, schema=True))
    url = h._db_url
    for name in ('a', 'b'):
        h.create_node(name=name)
    # a connection the test left open does not keep it from being reused
    stray = sa.create_engine(url).connect()
    stray.execute(sa.text('SELECT 1'))
    h.close()
    assert services.db_url(kind, schema=True) == url
    h = harness.Harness(tmp_path, db_url=url)
    try:
        with db_engine.reader() as c:
            counts = {t: c.execute(sa.text('SELECT count(*) FROM %s' % t))
                      .scalar() for t in ('nodes', 'node_events',
                                          'conductors')}
        # the harness registered its conductor again; nothing else left
        assert counts == {'nodes': 0, 'node_events': 0, 'conductors': 1}
        node = h.create_node(name='c')
        with db_engine.reader() as c:
            assert c.execute(sa.text(
                "SELECT id FROM nodes WHERE name = 'c'")).scalar() == 1
            # event ids start again too (the counter's row is back)
            assert c.execute(sa.text(
                'SELECT min(id) FROM node_events')).scalar() == 1
        assert h.node(node['uuid'])['name'] == 'c'
    finally:
        h.close()
    stray.invalidate()
