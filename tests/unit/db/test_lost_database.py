"""A database that goes away: connections the server dropped and
servers that refuse connections become DatabaseUnavailable (503 with
Retry-After at the API), the kept connections are dropped, and the next
block works once the server answers."""

import pytest
import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import engine as db_engine
from baremetal.db import nodes as db_nodes
from tests import harness
from tests import services


@pytest.fixture
def pg_api(tmp_path):
    h = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    yield h
    h.close()


def _drop_our_connections(url):
    """What a server restart does to every open session."""
    admin = sa.create_engine(url.rsplit('/', 1)[0] + '/postgres',
                             isolation_level='AUTOCOMMIT')
    name = url.rsplit('/', 1)[1]
    with admin.connect() as c:
        killed = c.execute(sa.text(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity '
            'WHERE datname = :n AND pid <> pg_backend_pid()'),
            {'n': name}).fetchall()
    admin.dispose()
    return len(killed)


def test_connections_dropped_by_the_server_are_a_503_once(pg_api):
    uuid = pg_api.create_node(name='lost')['uuid']
    for _ in range(3):
        db_nodes.get_node(uuid)       # kept connections, warm
    assert _drop_our_connections(str(db_engine.engine().url)) >= 1
    with pytest.raises(exception.DatabaseUnavailable) as e:
        with db_engine.reader() as conn:
            conn.execute(sa.text('SELECT 1')).fetchall()
    assert 'terminat' in str(e.value) or 'closed' in str(e.value), e.value
    # the kept connections were dropped: the next block gets a new one
    assert db_nodes.get_node(uuid)['name'] == 'lost'
    status, body, _ = pg_api.request('GET', '/v1/nodes/%s' % uuid)
    assert status == 200, body


def test_an_unreachable_database_is_503_with_retry_after(api, monkeypatch):
    uuid = api.create_node()['uuid']
    dead = sa.create_engine('postgresql+psycopg2://nobody@127.0.0.1:1/x')
    monkeypatch.setattr(db_engine, '_engine', dead)
    monkeypatch.setattr(db_engine, '_open', None)
    monkeypatch.setattr(db_engine, '_open_auto', None)
    status, body, headers = api.request('GET', '/v1/nodes/%s' % uuid)
    assert status == 503, body
    assert headers['Retry-After'] == '5'
    assert 'database cannot be reached' in harness.error_message(body)
    status, body, headers = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'manage'})
    assert status == 503, body
