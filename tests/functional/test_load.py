"""Load with correctness (tools/load.py), briefly: 256 clients against
the embedded server, 128 against the scale-out cluster (baremetal-api
and two conductors over RabbitMQ and PostgreSQL). No 5xx but 503 with
Retry-After, no lost update, every node at rest at the end; the figures
are printed."""

import importlib.util
import os

from tests import services
from tests.functional.cluster import Cluster

_SPEC = importlib.util.spec_from_file_location(
    'load', os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                         'load.py'))
load = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(load)


def _check(result):
    print('load: %(clients)d clients, %(requests)d requests in '
          '%(seconds)s s, %(requests_per_s)s req/s, p99 %(p99_ms)s ms, '
          'status codes %(status)s' % result)
    assert not result['problems'], result['problems']
    assert result['nodes'] == result['clients']
    assert result['latency_ms']['patch']['n'] > result['clients']
    assert result['latency_ms']['provision']['n'] > result['clients']


def test_embedded_server_under_256_clients(server):
    _check(load.run(server.endpoint, clients=256, seconds=8,
                    per_client=1, tidy=False))


def test_scale_out_cluster_under_load(tmp_path):
    # small pools: the suite's other worker shares the PostgreSQL server
    # (max_connections 100) while 128 clients keep these processes busy
    cluster = Cluster(tmp_path, services.postgresql_url(),
                      services.rabbit_url(),
                      database={'max_pool_size': 4})
    try:
        cluster.wait_conductors(['cond-0', 'cond-1'])
        _check(load.run(cluster.api.endpoint, clients=128, seconds=8,
                        per_client=1, settle=120, tidy=False))
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()
