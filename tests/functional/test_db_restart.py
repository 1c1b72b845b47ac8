"""The database restarting under load: baremetal-api and two
baremetal-conductor processes over RabbitMQ on a private PostgreSQL
(tests/private_postgres.py), which is stopped and started again while
nodes are being cleaned.  During the outage the API answers 503 with
Retry-After (never another 5xx, never a hang); afterwards every node
ends in a stable or failed state with the reason, no lock is left, and
the nodes go on through their lifecycle."""

import json
import time
import urllib.error
import urllib.request

import pytest

from tests import private_postgres
from tests import services
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import provision_all
from tests.functional.cluster import wait_all

NODES = 10
OUTAGE = 3
# states a node may rest in
RESTING = {'manageable', 'available', 'active', 'clean failed',
           'deploy failed', 'enroll', 'error'}


def _request(endpoint, method, path, body=None):
    """(status, headers, body) of one request."""
    req = urllib.request.Request(
        endpoint + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={'X-OpenStack-Ironic-API-Version': '1.61',
                 'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, json.loads(r.read() or b'null')
    except urllib.error.HTTPError as e:
        return e.code, e.headers, json.loads(e.read() or b'null')


@pytest.fixture
def postgres():
    pg = private_postgres.PrivatePostgres()
    yield pg
    pg.remove()


def _nodes(endpoint):
    st, body = call(endpoint, 'GET', '/v1/nodes?fields=uuid,'
                    'provision_state,target_provision_state,reservation,'
                    'last_error,maintenance&limit=1000')
    assert st == 200, body
    return body['nodes']


def _wait_resting(endpoint, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            nodes = _nodes(endpoint)
        except AssertionError:
            nodes = None
        if nodes and all(n['provision_state'] in RESTING and
                         n['reservation'] is None for n in nodes):
            return nodes
        assert time.monotonic() < deadline, nodes
        time.sleep(0.3)


def test_database_restart_while_nodes_are_cleaned(tmp_path, postgres):
    cluster = Cluster(tmp_path, postgres.url, services.rabbit_url())
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep = cluster.api.endpoint
        uuids = []
        for i in range(NODES):
            st, body = call(ep, 'POST', '/v1/nodes', {
                'driver': 'fake-hardware', 'name': 'db-%d' % i,
                'driver_info': {'fake_step_seconds': 0.5}})
            assert st == 201, body
            uuids.append(body['uuid'])
        provision_all(ep, uuids, 'manage')
        wait_all(ep, uuids, 'manageable')

        provision_all(ep, uuids, 'provide')
        time.sleep(0.3)
        postgres.stop()
        seen = []
        t = time.monotonic()
        while time.monotonic() - t < OUTAGE:
            started = time.monotonic()
            for method, path, body in (
                    ('GET', '/v1/nodes/%s' % uuids[0], None),
                    ('GET', '/v1/nodes?limit=5', None),
                    ('PUT', '/v1/nodes/%s/states/provision' % uuids[1],
                     {'target': 'manage'})):
                status, headers, got = _request(ep, method, path, body)
                seen.append(status)
                if status >= 500:
                    assert status == 503, (status, got)
                    assert headers.get('Retry-After'), dict(headers)
                    assert 'database' in json.dumps(got).lower(), got
            assert time.monotonic() - started < 20, 'the API hung'
            time.sleep(0.2)
        assert 503 in seen, seen
        postgres.start()

        nodes = _wait_resting(ep, timeout=90)
        logs = '\n'.join(c.log(tail=None) for c in
                         cluster.conductors.values())
        # the outage did interrupt work in flight, and it was picked up:
        # locks released once the database answered, nodes resumed
        assert logs.count('the database was lost') >= 1, logs[-3000:]
        assert logs.count('lock released, the database answers again') \
            >= 1
        for n in nodes:
            if n['provision_state'] != 'available':
                assert n['last_error'], n
        # the nodes go on: failed ones back to manageable, then all on
        for n in nodes:
            if n['provision_state'] == 'clean failed':
                provision_all(ep, [n['uuid']], 'manage')
        for n in _wait_resting(ep, timeout=60):
            if n['maintenance']:
                st, _ = call(ep, 'DELETE', '/v1/nodes/%s/maintenance'
                             % n['uuid'])
                assert st == 202
            if n['provision_state'] == 'manageable':
                provision_all(ep, [n['uuid']], 'provide')
        wait_all(ep, uuids, 'available', timeout=90)
        provision_all(ep, uuids, 'active')
        wait_all(ep, uuids, 'active', timeout=90)
        assert all(n['reservation'] is None for n in _nodes(ep))
        for name, svc in [('api', cluster.api)] + list(
                cluster.conductors.items()):
            assert svc.proc.poll() is None, '%s died:\n%s' % (
                name, svc.log())
    except Exception:
        print(cluster.logs())
        print(postgres.log())
        raise
    finally:
        cluster.stop()
