"""Scale-out: baremetal-api and two baremetal-conductor processes over
RabbitMQ, on PostgreSQL and on MariaDB.  Nodes split across both
conductors and go through the whole lifecycle."""

import json
import re
import time

from tests import services
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import enroll
from tests.functional.cluster import provision_all
from tests.functional.cluster import wait_all


def _lifecycle(tmp, db_url):
    cluster = Cluster(tmp, db_url, services.rabbit_url())
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep = cluster.api.endpoint
        uuids = enroll(ep, ['n%d' % i for i in range(20)])
        # a heartbeat without this boot's token is refused by the API
        # from the row it read: no conductor is called
        st, body = call(ep, 'POST', '/v1/heartbeat/%s' % uuids[0],
                        {'callback_url': 'http://127.0.0.1:9999',
                         'agent_token': 'not-this-one'})
        assert st == 401, body
        assert 'no token was issued for this boot' in json.loads(
            body['error_message'])['faultstring']
        assert 'heartbeat refused: no agent token' in cluster.api.log(
            tail=None)
        # an error that is the caller's comes back from the conductor
        # as itself, and is no error in the conductor's log; a node's
        # vendor methods over the message bus (the method's name once
        # clashed with oslo.messaging's own argument: a 500)
        st, body = call(ep, 'POST', '/v1/nodes/%s/vendor_passthru/nope'
                        % uuids[0], {})
        assert st == 400, body
        assert 'No handler for method nope' in json.loads(
            body['error_message'])['faultstring']
        st, body = call(ep, 'POST', '/v1/nodes/%s/vendor_passthru/'
                        'first_method' % uuids[0], {'a': 1})
        assert st == 200 and body == {'node': uuids[0], 'args': {'a': 1}}, \
            body
        for verb, state in (('manage', 'manageable'),
                            ('provide', 'available'),
                            ('active', 'active'),
                            ('deleted', 'available')):
            provision_all(ep, uuids, verb)
            wait_all(ep, uuids, state)
        st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,conductor')
        owners = {n['conductor'] for n in body['nodes']}
        assert owners == {'cond-0', 'cond-1'}, owners
        # each conductor really worked on the nodes it owns
        refused = 0
        for name in ('cond-0', 'cond-1'):
            log = cluster.conductors[name].log(tail=None)
            assert 'registered' in log
            assert ' ERROR ' not in log, log
            refused += log.count('heartbeat refused')
            mine = [n['uuid'] for n in body['nodes']
                    if n['conductor'] == name]
            assert any('%s: cleaning finished' % u in log for u in mine)
        assert refused == 0
        for u in uuids:
            st, _ = call(ep, 'DELETE', '/v1/nodes/%s' % u)
            assert st == 204
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()


def test_lifecycle_on_postgresql(tmp_path):
    _lifecycle(tmp_path, services.postgresql_url())


def test_lifecycle_on_mariadb(tmp_path):
    _lifecycle(tmp_path, services.mysql_url())


def test_no_conductor_for_a_driver_is_503(tmp_path):
    cluster = Cluster(tmp_path, services.postgresql_url(),
                      services.rabbit_url(), conductors=1)
    try:
        cluster.wait_conductors(['cond-0'])
        ep = cluster.api.endpoint
        st, body = call(ep, 'POST', '/v1/nodes',
                        {'driver': 'fake-hardware',
                         'conductor_group': 'nobody-here'})
        assert st == 201, body
        st, body = call(ep, 'PUT', '/v1/nodes/%s/states/provision'
                        % body['uuid'], {'target': 'manage'})
        assert st == 503, body
        assert 'nobody-here' in json.loads(body['error_message'])[
            'faultstring']
    finally:
        cluster.stop()




def test_concurrent_calls_are_batched_and_answered_one_by_one(tmp_path):
    """48 clients at once: the API coalesces the calls to each conductor
    (common/rpc_batch.py), and every client gets its own answer: 202 for
    its verb or power action, 400 naming its step for a manual cleaning
    the conductor refuses (the node stays as it was)."""
    import concurrent.futures
    cluster = Cluster(tmp_path, services.postgresql_url(),
                      services.rabbit_url(), DEFAULT={'debug': 'true'})
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep = cluster.api.endpoint
        uuids = enroll(ep, ['c%d' % i for i in range(39)])

        def provision(ask):
            u, body = ask
            return call(ep, 'PUT', '/v1/nodes/%s/states/provision' % u,
                        body)

        def power(u):
            return call(ep, 'PUT', '/v1/nodes/%s/states/power' % u,
                        {'target': 'power on'})
        with concurrent.futures.ThreadPoolExecutor(48) as pool:
            answers = list(pool.map(provision, [(u, {'target': 'manage'})
                                                for u in uuids]))
        assert [a[0] for a in answers] == [202] * 39, answers
        wait_all(ep, uuids, 'manageable')
        bad_step = [{'interface': 'deploy', 'step': 'no_such_step'}]
        with concurrent.futures.ThreadPoolExecutor(48) as pool:
            provided = pool.map(provision, [(u, {'target': 'provide'})
                                            for u in uuids[:20]])
            powered = pool.map(power, uuids[20:30])
            refused = pool.map(provision, [
                (u, {'target': 'clean', 'clean_steps': bad_step})
                for u in uuids[30:]])
            assert [a[0] for a in provided] == [202] * 20
            assert [a[0] for a in powered] == [202] * 10
            for st, body in refused:
                assert st == 400, body
                assert 'no_such_step' in json.loads(
                    body['error_message'])['faultstring']
        wait_all(ep, uuids[:20], 'available')
        deadline = time.monotonic() + 30
        while True:
            st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,power_state,'
                            'provision_state&limit=1000')
            nodes = {n['uuid']: n for n in body['nodes']}
            if all(nodes[u]['power_state'] == 'power on'
                   for u in uuids[20:30]) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [nodes[u]['power_state'] for u in uuids[20:30]] == \
            ['power on'] * 10
        assert [nodes[u]['provision_state'] for u in uuids[30:]] == \
            ['manageable'] * 9
        # every call went in a batch, and some carried more than one
        sizes = []
        for svc in cluster.conductors.values():
            with open(svc.log_file) as f:
                sizes += [int(m) for m in re.findall(
                    r'Running a batch of (\d+) calls', f.read())]
        assert sum(sizes) == 39 + 20 + 10 + 9, sizes
        assert max(sizes) > 1, sizes
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()


# the fields Nova's ironic driver lists nodes with
NOVA_FIELDS = ('uuid', 'power_state', 'target_power_state',
               'provision_state', 'target_provision_state', 'last_error',
               'maintenance', 'properties', 'instance_uuid', 'traits',
               'resource_class')


def test_nova_walks_the_node_list_read_ahead(tmp_path):
    """Nova's node list through openstacksdk, pages of two
    ([api]max_limit): the API reads each next page while the client
    reads the one before (db/read_ahead.py); the pages are the same as
    read one by one, and a node changed after its page was read ahead
    shows its change."""
    import openstack.connection
    from tests.functional.test_metrics import sample
    from tests.functional.test_metrics import scrape
    # the conductor's heartbeat (its one regular commit) seldom
    cluster = Cluster(tmp_path, services.postgresql_url(),
                      services.rabbit_url(), conductors=1,
                      api={'max_limit': '2'},
                      conductor={'heartbeat_interval': 10,
                                 'heartbeat_timeout': 60})
    try:
        cluster.wait_conductors(['cond-0'])
        ep = cluster.api.endpoint
        uuids = enroll(ep, ['r%d' % i for i in range(9)])
        conn = openstack.connection.Connection(
            auth_type='none', baremetal_endpoint_override=ep,
            baremetal_api_version='1.115')

        def walk():
            return [n.to_dict(computed=False)
                    for n in conn.baremetal.nodes(fields=NOVA_FIELDS)]
        first = walk()
        assert [n['id'] for n in first] == uuids

        def count(samples, event):
            return sample(samples, 'baremetal_api_list_read_ahead_pages'
                          '_total', event=event)
        # five pages a walk; the 3rd, 4th and 5th are read ahead (the
        # 2nd, 3rd and 4th came with a marker and full) and each asked
        # for.  A commit anywhere on the PostgreSQL server between a
        # read and its page's request (this conductor's heartbeat, the
        # other tests' databases) makes the page stale, and fewer pages
        # are read ahead after it: walk until one was used
        before = scrape(ep + '/metrics')
        for _ in range(30):
            assert walk() == first
            after = scrape(ep + '/metrics')
            read, used, stale = (count(after, e) - count(before, e)
                                 for e in ('read', 'used', 'stale'))
            assert read == used + stale
            if used:
                break
        assert used >= 1

        # a node of the third page changes after that page was read
        # ahead (the client is still on the second one)
        nodes = conn.baremetal.nodes(fields=NOVA_FIELDS)
        got = [next(nodes) for _ in range(4)]
        time.sleep(1)
        st, body = call(ep, 'PATCH', '/v1/nodes/%s' % uuids[4], [
            {'op': 'add', 'path': '/properties/cpus', 'value': 96}])
        assert st == 200, body
        got += list(nodes)
        assert [n.id for n in got] == uuids
        assert got[4].properties == {'cpus': 96}
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()
