"""A conductor killed (SIGKILL) answers nothing, and until the others
find it dead ([conductor]heartbeat_timeout) the API still sends it the
requests for its nodes, each waiting [DEFAULT]rpc_response_timeout_api
seconds.  baremetal-api lets at most [api]max_waiting_per_conductor of
its threads wait on one conductor: the next request for the dead one's
nodes is a 503 at once, saying why, and the API goes on answering for
every other node (here with 6 threads, 10 requests for the dead
conductor's nodes: without the bound all ten waited for the timeout, six
at a time, with every other request queued behind them).  Once its
heartbeat is [api]conductor_silent_after old, its nodes' requests go to
another conductor.  Over RabbitMQ and PostgreSQL."""

import concurrent.futures
import time

from tests import services
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import enroll
from tests.functional.cluster import provision_all
from tests.functional.cluster import wait_all

WORKERS = 6
SHARE = 3
RPC_TIMEOUT = 10
REQUESTS = 10


def test_a_dead_conductor_holds_at_most_its_share_of_threads(tmp_path):
    cluster = Cluster(
        tmp_path, services.postgresql_url(), services.rabbit_url(),
        conductors=2,
        DEFAULT={'rpc_response_timeout_api': RPC_TIMEOUT},
        # routed to it all along (the bound is for the time before
        # [api]conductor_silent_after, and for a conductor that hangs
        # while its heartbeat goes on)
        api={'api_workers': WORKERS, 'max_waiting_per_conductor': SHARE,
             'conductor_silent_after': 300},
        # nobody finds the killed conductor dead within the test
        conductor={'heartbeat_timeout': 300})
    pool = concurrent.futures.ThreadPoolExecutor(REQUESTS + 2)
    try:
        ep = cluster.api.endpoint
        owner = _manageable(cluster, 'wt', 20)
        dead = [u for u in owner if owner[u] == 'cond-0']
        live = [u for u in owner if owner[u] == 'cond-1']

        cluster.conductors['cond-0'].kill()

        def validate(uuid):
            st, body = call(ep, 'GET', '/v1/nodes/%s/validate' % uuid)
            return st, body, time.monotonic()

        sent = [pool.submit(validate, dead[i % len(dead)])
                for i in range(REQUESTS)]
        # the refused ones come back while the others wait
        refused = []
        for f in concurrent.futures.as_completed(sent, timeout=60):
            refused.append(f.result())
            if len(refused) == REQUESTS - SHARE:
                break
        # the API still answers for the live conductor's nodes, and
        # reads, while the dead one's requests wait
        st, body, live_at = validate(live[0])
        assert st == 200, body
        st, body = call(ep, 'GET', '/v1/nodes/%s' % dead[0])
        assert st == 200, body
        read_at = time.monotonic()
        outcomes = [f.result(timeout=RPC_TIMEOUT + 60) for f in sent]
        waited = [o for o in outcomes if 'did not answer' in str(o[1])]
        assert len(waited) == SHARE, outcomes
        assert all(o[0] == 503 for o in outcomes), outcomes
        for _, body, _at in refused:
            assert 'Conductor cond-0 has not answered the %d requests ' \
                'waiting on it yet ([api]max_waiting_per_conductor)' \
                % SHARE in body['error_message'], body
        first_timeout = min(at for _, _, at in waited)
        assert max(at for _, _, at in refused) < first_timeout
        assert live_at < first_timeout and read_at < first_timeout
        # counted, by conductor, on GET /metrics
        st, text = _metrics(ep)
        assert 'baremetal_api_conductor_calls_refused_total{conductor=' \
            '"cond-0"} %d.0' % (REQUESTS - SHARE) in text, text[-3000:]
    except Exception:
        print(cluster.logs())
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        cluster.stop()


def _manageable(cluster, prefix: str, count: int) -> dict:
    """``count`` fake-hardware nodes, manageable, shared by cond-0 and
    cond-1: each node's conductor by its UUID."""
    cluster.wait_conductors(['cond-0', 'cond-1'])
    ep = cluster.api.endpoint
    uuids = enroll(ep, ['%s-%02d' % (prefix, i) for i in range(count)])
    provision_all(ep, uuids, 'manage')
    wait_all(ep, uuids, 'manageable')
    st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,conductor')
    owner = {n['uuid']: n['conductor'] for n in body['nodes']}
    assert set(owner.values()) == {'cond-0', 'cond-1'}, owner
    return owner


def test_a_silent_conductors_nodes_are_served_by_another(tmp_path):
    """[api]conductor_silent_after seconds after its last heartbeat, a
    killed conductor's nodes are routed to the conductor that will take
    them over, before the others find it dead: a request for one is
    answered, where it waited [DEFAULT]rpc_response_timeout_api (here
    longer than the client waits) and was answered 503."""
    cluster = Cluster(
        tmp_path, services.postgresql_url(), services.rabbit_url(),
        conductors=2,
        DEFAULT={'rpc_response_timeout_api': 300},
        api={'conductor_silent_after': 3},
        conductor={'heartbeat_timeout': 300})
    try:
        ep = cluster.api.endpoint
        owner = _manageable(cluster, 'sil', 12)
        dead = [u for u in owner if owner[u] == 'cond-0']

        cluster.conductors['cond-0'].kill()
        deadline = time.monotonic() + 60
        while True:
            st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,conductor')
            owners = {n['conductor'] for n in body['nodes']}
            if owners == {'cond-1'}:
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.5)
        # served by cond-1: a synchronous call, and a verb carried out
        st, body = call(ep, 'GET', '/v1/nodes/%s/validate' % dead[0])
        assert st == 200, body
        provision_all(ep, dead, 'provide')
        wait_all(ep, dead, 'available')
        st, body = call(ep, 'GET', '/v1/conductors/cond-0')
        assert st == 200 and body['alive'] is True, body
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()


def _metrics(ep):
    import urllib.request
    with urllib.request.urlopen(ep + '/metrics', timeout=30) as r:
        return r.status, r.read().decode()
