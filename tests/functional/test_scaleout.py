"""Scale-out: baremetal-api and two baremetal-conductor processes over
RabbitMQ, on PostgreSQL and on MariaDB.  Nodes split across both
conductors and go through the whole lifecycle."""

import json

from tests import services
from tests.functional.cluster import Cluster
from tests.functional.cluster import call
from tests.functional.cluster import provision_all
from tests.functional.cluster import wait_all


def _lifecycle(tmp, db_url):
    cluster = Cluster(tmp, db_url, services.rabbit_url())
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep = cluster.api.endpoint
        uuids = []
        for i in range(20):
            st, body = call(ep, 'POST', '/v1/nodes',
                            {'driver': 'fake-hardware', 'name': 'n%d' % i})
            assert st == 201, body
            uuids.append(body['uuid'])
        for verb, state in (('manage', 'manageable'),
                            ('provide', 'available'),
                            ('active', 'active'),
                            ('deleted', 'available')):
            provision_all(ep, uuids, verb)
            wait_all(ep, uuids, state)
        st, body = call(ep, 'GET', '/v1/nodes?fields=uuid,conductor')
        owners = {n['conductor'] for n in body['nodes']}
        assert owners == {'cond-0', 'cond-1'}, owners
        # each conductor really worked on its nodes
        for name in ('cond-0', 'cond-1'):
            assert 'registered' in cluster.conductors[name].log()
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


