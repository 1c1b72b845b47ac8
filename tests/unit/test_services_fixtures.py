"""The service helpers give private, working resources."""

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
