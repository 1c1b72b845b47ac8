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
