"""The change feed loses nothing across API processes: two baremetal-api
processes and two conductors on one PostgreSQL, 1,000 nodes changing
state concurrently, and a client that streams from API A, goes away
mid-stream and comes back to API B with Last-Event-ID.  What it got is
the history written, read back from the database: in order, none twice.
"""

import concurrent.futures
import http.client
import json
import threading
import time

import sqlalchemy as sa

from tests import services
from tests.functional import processes
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import wait_all

NODES = 1000


class Reader:
    """An SSE client: reads events into ``got`` until told to stop or
    until it has ``until`` (an id)."""

    def __init__(self, endpoint_port: int, last_id: int | None,
                 since: int | None = None) -> None:
        self.conn = http.client.HTTPConnection('127.0.0.1', endpoint_port,
                                               timeout=60)
        headers = {'Accept': 'text/event-stream'}
        if last_id is not None:
            headers['Last-Event-ID'] = str(last_id)
        path = '/events' if since is None else '/events?since=%d' % since
        self.conn.request('GET', path, headers=headers)
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200, self.resp.read()
        self.got: list[dict] = []

    def read(self, stop) -> None:
        block = {}
        while not stop(self.got):
            line = self.resp.fp.readline()
            assert line, 'stream ended'
            line = line.decode().rstrip('\n')
            if line.startswith(':'):
                continue
            if line:
                key, _, value = line.partition(': ')
                block[key] = value
                continue
            if 'data' in block:
                ev = json.loads(block['data'])
                assert str(ev['id']) == block['id']
                self.got.append(ev)
            block = {}

    def close(self) -> None:
        self.conn.close()


def _drive(ep, uuids, verb, state):
    def one(u):
        for _ in range(200):
            st, body = call(ep, 'PUT', '/v1/nodes/%s/states/provision' % u,
                            {'target': verb})
            if st not in (409, 503):
                break
            time.sleep(0.1)
        assert st == 202, body
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(one, uuids))
    wait_all(ep, uuids, state, timeout=600)


def _history(conn):
    rows = conn.execute(sa.text(
        'SELECT id, node_uuid, field, old, new FROM node_events '
        'ORDER BY id')).all()
    conn.rollback()
    return [(r.id, r.node_uuid, r.field,
             json.loads(r.old) if r.old is not None else None,
             json.loads(r.new) if r.new is not None else None)
            for r in rows]


def test_stream_resumed_on_another_api_misses_nothing(tmp_path):
    db_url = services.postgresql_url()
    # the test's own connection, taken first: the PostgreSQL server is
    # shared with other tests
    engine = sa.create_engine(db_url)
    reader = engine.connect()
    cluster = Cluster(tmp_path, db_url, services.rabbit_url(),
                      events={'poll_interval': 0.2,
                              'keepalive_interval': 2},
                      # four processes on a PostgreSQL other tests share
                      database={'max_pool_size': 4})
    api_b = processes.Service(
        'baremetal-api', tmp_path, 'api-b',
        processes.base_conf(tmp_path, **cluster.conf),
        port=processes.free_port())
    api_b.start()
    readers = []
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep_a, ep_b = cluster.api.endpoint, api_b.endpoint
        first = Reader(cluster.api.port, None, since=0)
        readers.append(first)
        # the first reader follows while the nodes are created and
        # managed, and goes away half-way through
        half = threading.Event()
        reading = threading.Thread(target=first.read, args=(
            lambda got: half.is_set() and len(got) >= 1500,))
        reading.start()

        def create(i):
            st, body = call(ep_b, 'POST', '/v1/nodes',
                            {'driver': 'fake-hardware', 'name': 'ev%d' % i})
            assert st == 201, body
            return body['uuid']
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            uuids = list(pool.map(create, range(NODES)))
        half.set()
        _drive(ep_a, uuids, 'manage', 'manageable')
        reading.join(120)
        assert not reading.is_alive()
        first.close()
        last = first.got[-1]['id']
        # changes go on while no one listens; the client comes back to
        # the other API process with the last id it saw
        changing = threading.Thread(target=_drive, args=(
            ep_b, uuids, 'provide', 'available'))
        changing.start()
        time.sleep(2)
        second = Reader(api_b.port, last, since=0)
        readers.append(second)
        changing.join(900)
        assert not changing.is_alive()
        history = _history(reader)
        end = history[-1][0]
        second.read(lambda got: got and got[-1]['id'] >= end)
        got = first.got + second.got
        seen = [(e['id'], e['node'], e['field'], e['old'], e['new'])
                for e in got]
        assert len(seen) == len(history)
        assert seen == history
        # every node's whole story is in it
        per_node = {}
        for _, node, field, _old, new in history:
            if field == 'provision_state':
                per_node.setdefault(node, []).append(new)
        assert set(per_node) == set(uuids)
        assert all(states[-1] == 'available' for states in
                   per_node.values())
        st, page = call(ep_a, 'GET', '/events?since=%d&limit=5' % last)
        assert st == 200 and [e['id'] for e in page['events']] == [
            last + i for i in range(1, 6)]
    except Exception:
        print(cluster.logs())
        print('--- api-b\n' + api_b.log())
        raise
    finally:
        for r in readers:
            r.close()
        api_b.stop()
        cluster.stop()
        reader.close()
        engine.dispose()
