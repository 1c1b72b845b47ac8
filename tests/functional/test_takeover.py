"""Conductor failure: three conductors share 300 nodes; one is killed
with SIGKILL while the nodes are being cleaned with a multi-step plan.
Every node ends owned by a live conductor, in ``available`` or ``clean
failed`` with a reason; none stays reserved by the dead conductor; no
step marked non-idempotent runs twice; the restarted conductor rejoins
and the ring rebalances.  On PostgreSQL and on MariaDB."""

import collections
import time

import pytest

from tests import services
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import provision_all
from tests.functional.cluster import wait_all

N = 300
HEARTBEAT_TIMEOUT = 5
STEP_SECONDS = 1.5


def _nodes(ep):
    st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,name,provision_state,'
                    'target_provision_state,last_error,reservation,'
                    'conductor,driver_internal_info&limit=1000')
    assert st == 200, body
    return body['nodes']


def _wait_for_step(log, line, timeout=60):
    deadline = time.monotonic() + timeout
    while not (log.exists() and line in log.read_text().splitlines()):
        assert time.monotonic() < deadline, 'never started: %s' % line
        time.sleep(0.05)


@pytest.mark.parametrize('database', ['postgresql', 'mysql'])
def test_sigkill_during_cleaning_loses_nothing(tmp_path, database):
    cluster = Cluster(tmp_path, services.db_url(database),
                      services.rabbit_url(), conductors=3, conductor={
                          'heartbeat_timeout': HEARTBEAT_TIMEOUT,
                          'workers_pool_size': 150})
    log = tmp_path / 'steps.log'
    try:
        cluster.wait_conductors(['cond-0', 'cond-1', 'cond-2'])
        ep = cluster.api.endpoint
        uuids = []
        for i in range(N):
            info = {'fake_step_log': str(log)}
            if i % 2:
                # odd nodes: the first clean step must never run twice
                info['fake_non_idempotent'] = [
                    'deploy.erase_devices_metadata']
            st, body = call(ep, 'POST', '/v1/nodes', {
                'driver': 'fake-hardware', 'name': 'tk-%03d' % i,
                'driver_info': info})
            assert st == 201, body
            uuids.append(body['uuid'])
        provision_all(ep, uuids, 'manage')
        wait_all(ep, uuids, 'manageable')
        owners = collections.Counter(n['conductor'] for n in _nodes(ep))
        assert set(owners) == {'cond-0', 'cond-1', 'cond-2'}, owners
        # slow steps from now on, so cleaning is caught mid-way
        for u in uuids:
            st, body = call(ep, 'PATCH', '/v1/nodes/%s' % u, [
                {'op': 'add', 'path': '/driver_info/fake_step_seconds',
                 'value': STEP_SECONDS}])
            assert st == 200, body
        victim = 'cond-1'
        held = [n['uuid'] for n in _nodes(ep) if n['conductor'] == victim]
        # the victim's nodes go last, and the kill comes as soon as the
        # last of its odd nodes is inside its first (non-idempotent)
        # step: a fixed sleep came too late on a loaded machine
        last = [u for u in held if u in set(uuids[1::2])][-1]
        provision_all(ep, [u for u in uuids if u not in set(held)] + held,
                      'provide')
        _wait_for_step(log, '%s clean deploy.erase_devices_metadata' % last)
        cluster.conductors[victim].kill()
        killed_at = time.monotonic()

        # every node settles, within the heartbeat timeout plus one
        # takeover pass plus the steps still to run (and slack for a busy
        # 2-core machine): available, or clean failed with a reason
        deadline = killed_at + HEARTBEAT_TIMEOUT + 1 + 2 * STEP_SECONDS + 15
        while True:
            nodes = _nodes(ep)
            pending = [n for n in nodes if n['provision_state'] not in
                       ('available', 'clean failed')
                       or n['target_provision_state'] and
                       n['provision_state'] != 'clean failed'
                       or n['reservation']]
            if not pending:
                break
            assert time.monotonic() < deadline, (len(pending), pending[:3])
            time.sleep(0.5)
        failed = [n for n in nodes if n['provision_state'] ==
                  'clean failed']
        for n in failed:
            assert 'lost' in n['last_error'], n
        assert all(n['reservation'] is None for n in nodes)
        assert {n['conductor'] for n in nodes} <= {'cond-0', 'cond-2'}
        # the victim was mid-way through a third of the nodes: some were
        # resumed, odd ones (non-idempotent first step) failed instead
        runs = collections.Counter()
        for line in log.read_text().splitlines():
            uuid, kind, step = line.split()
            runs[(uuid, step)] += 1
        odd = set(uuids[1::2])
        for (uuid, step), count in runs.items():
            if uuid in odd and step == 'deploy.erase_devices_metadata':
                assert count <= 1, (uuid, step, count)
        assert any(count > 1 for count in runs.values()), \
            'no step was resumed: the kill came too late to test takeover'
        assert failed, 'no non-idempotent step was interrupted'

        # the victim comes back and takes its share again
        cluster.conductors[victim].start(wait=False)
        cluster.wait_conductors(['cond-0', 'cond-1', 'cond-2'])
        deadline = time.monotonic() + 30
        while True:
            owners = collections.Counter(n['conductor']
                                         for n in _nodes(ep))
            if owners.get(victim):
                break
            assert time.monotonic() < deadline, owners
            time.sleep(0.5)
        # and the cluster still works: provide the failed nodes again
        stuck = [n['uuid'] for n in failed]
        for u in stuck:
            call(ep, 'DELETE', '/v1/nodes/%s/maintenance' % u)
        provision_all(ep, stuck, 'manage')
        wait_all(ep, stuck, 'manageable')
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()
