"""Prometheus metrics scraped over HTTP from real processes: the embedded
server through a fake-hardware lifecycle and against the Redfish
emulator, and a scale-out deployment whose conductors serve their own
metrics on their listeners.  Each scrape is parsed with
prometheus_client's text parser and checked against what happened."""

import base64
import collections
import time
import urllib.error
import urllib.request
import uuid

import bcrypt
import pytest
from prometheus_client import parser

from tests import services
from tests.bmc import fixtures
from tests.functional import bmc_server as bs
from tests.functional import cluster as cl
from tests.functional import processes


def scrape(url: str) -> dict:
    """{(sample name, frozenset of labels): value} of GET ``url``."""
    with urllib.request.urlopen(url, timeout=30) as r:
        assert r.status == 200
        assert r.headers['Content-Type'].startswith('text/plain')
        text = r.read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in parser.text_string_to_metric_families(text)
            for s in f.samples}


def sample(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def by_label(samples: dict, name: str, label: str) -> dict:
    """{label value: sample} of the samples of ``name`` with a non-zero
    value, summed over their other labels."""
    out: dict = collections.Counter()
    for (n, labels), v in samples.items():
        if n == name and v:
            out[dict(labels)[label]] += v
    return dict(out)


def steps(samples: dict) -> collections.Counter:
    """Steps run: {(kind, interface.step, outcome): count}."""
    out: collections.Counter = collections.Counter()
    for (n, labels), v in samples.items():
        if n == 'baremetal_step_duration_seconds_count':
            d = dict(labels)
            out[(d['kind'], '%s.%s' % (d['interface'], d['step']),
                 d['outcome'])] += v
    return out


def node_list(endpoint: str) -> list[dict]:
    st, body = cl.call(endpoint, 'GET', '/v1/nodes?fields=uuid,'
                       'provision_state,power_state,maintenance&limit=1000')
    assert st == 200, body
    return body['nodes']


def check_gauges(samples: dict, nodes: list[dict]) -> None:
    assert sample(samples, 'baremetal_node_stats_up') == 1
    assert sample(samples, 'baremetal_nodes') == len(nodes)
    assert by_label(samples, 'baremetal_nodes_by_provision_state',
                    'provision_state') == collections.Counter(
        n['provision_state'] for n in nodes)
    assert by_label(samples, 'baremetal_nodes_by_power_state',
                    'power_state') == collections.Counter(
        n['power_state'] or 'none' for n in nodes)
    assert sample(samples, 'baremetal_nodes_maintenance') == sum(
        1 for n in nodes if n['maintenance'])


FAKE_CLEAN = ('deploy.erase_devices_metadata', 'deploy.erase_devices')
FAKE_DEPLOY = ('deploy.deploy', 'deploy.write_image',
               'deploy.prepare_instance_boot', 'deploy.boot_instance')


def test_embedded_lifecycle_is_what_the_metrics_say(server):
    ep = server.endpoint
    before = scrape(ep + '/metrics')
    uuids = cl.enroll(ep, ['m-%d' % i for i in range(5)])
    cl.provision_all(ep, uuids[:4], 'manage')
    cl.wait_all(ep, uuids[:4], 'manageable')
    cl.provision_all(ep, uuids[:3], 'provide')
    cl.wait_all(ep, uuids[:3], 'available')
    cl.provision_all(ep, uuids[:2], 'active')
    cl.wait_all(ep, uuids[:2], 'active')
    st, body = cl.call(ep, 'PUT', '/v1/nodes/%s/maintenance' % uuids[3],
                       {'reason': 'metrics test'})
    assert st == 202, body
    for u in uuids:
        cl.call(ep, 'GET', '/v1/nodes/%s' % u)
    after = scrape(ep + '/metrics')

    check_gauges(after, node_list(ep))
    assert by_label(after, 'baremetal_nodes_by_provision_state',
                    'provision_state') == {'active': 2, 'available': 1,
                                           'manageable': 1, 'enroll': 1}
    ran = steps(after) - steps(before)
    assert ran == collections.Counter(
        {('clean', s, 'succeeded'): 3 for s in FAKE_CLEAN} |
        {('deploy', s, 'succeeded'): 2 for s in FAKE_DEPLOY})

    def requests(samples, route, method):
        return sample(samples, 'baremetal_api_request_duration_seconds_'
                      'count', route=route, method=method,
                      status_class='2xx')
    # the route template, never the path
    assert requests(after, '/v1/nodes/{node}', 'GET') >= \
        requests(before, '/v1/nodes/{node}', 'GET') + 5
    assert requests(after, '/v1/nodes/{node}/states/provision', 'PUT') \
        >= requests(before, '/v1/nodes/{node}/states/provision',
                    'PUT') + 9
    assert requests(after, '/v1/nodes', 'POST') == \
        requests(before, '/v1/nodes', 'POST') + 5
    assert not any(u in str(k) for k in after for u in uuids)
    # each provisioning action took its node's lock
    name = 'baremetal_lock_wait_seconds_count'
    assert sample(after, name, mode='exclusive', outcome='acquired') >= \
        sample(before, name, mode='exclusive', outcome='acquired') + 9
    # the periodic tasks run every second here: measured once one ran
    # (the lifecycle above may take less than a second)
    deadline = time.monotonic() + 15
    while sample(after, 'baremetal_periodic_task_duration_seconds_count',
                 task='check_timeouts') < 1:
        assert time.monotonic() < deadline, 'check_timeouts never measured'
        time.sleep(0.5)
        after = scrape(ep + '/metrics')
    assert sample(after, 'process_resident_memory_bytes') > 0


def test_unauthenticated_scrapes_are_refused_under_http_basic(tmp_path):
    htpasswd = tmp_path / 'htpasswd'
    htpasswd.write_text('prometheus:%s\n' % bcrypt.hashpw(
        b'scrape', bcrypt.gensalt(4)).decode())
    conf = processes.base_conf(tmp_path)
    conf['DEFAULT'].update(auth_strategy='http_basic',
                           http_basic_auth_user_file=str(htpasswd))
    svc = processes.Service('baremetal-server', tmp_path, 'basic', conf,
                            port=processes.free_port()).start()
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(svc.endpoint + '/metrics', timeout=30)
        assert e.value.code == 401
        req = urllib.request.Request(svc.endpoint + '/metrics', headers={
            'Authorization': 'Basic ' + base64.b64encode(
                b'prometheus:scrape').decode()})
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
        names = {f.name for f in
                 parser.text_string_to_metric_families(text)}
        assert 'baremetal_nodes_by_provision_state' in names
    finally:
        assert svc.stop() == 0, svc.log()


SYSTEMS = [{'uuid': str(uuid.uuid4()), 'name': 'metrics-0',
            'power_state': 'Off', 'external_notifier': False,
            'memory_gib': 8, 'cpus': 4, 'disks': [40],
            'nics': [{'mac': '52:54:00:aa:bb:01', 'ip': '10.0.9.1'}]}]


def test_redfish_requests_and_steps_are_measured(tmp_path_factory):
    bmc = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'), SYSTEMS)
    server = bs.start(tmp_path_factory.mktemp('redfish-metrics'))
    try:
        system = SYSTEMS[0]
        node = bs.create(server, driver='redfish',
                         driver_info=bmc.driver_info(system['uuid']))['uuid']
        conn = bs.sdk(server)
        conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                                timeout=60)
        conn.baremetal.set_node_power_state(node, 'power on', wait=True,
                                            timeout=60)
        assert bmc.system(system['uuid'])['PowerState'] == 'On'
        step = {'interface': 'bios', 'step': 'apply_configuration',
                'args': {'settings': [{'name': 'ProcTurboMode',
                                       'value': 'Disabled'}]}}
        st, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': 'clean', 'clean_steps': [step],
                                    'disable_ramdisk': True}, version='1.70')
        assert st == 202, body
        got = bs.wait(server, node, lambda n: n['provision_state'] in (
            'manageable', 'clean failed') and not n['reservation'],
            timeout=60, what='end of cleaning')
        assert got['provision_state'] == 'manageable', got['last_error']

        samples = scrape(server.endpoint + '/metrics')
        ops = by_label(samples, 'baremetal_bmc_request_duration_seconds_'
                       'count', 'operation')
        assert ops, samples
        assert {'connect', 'get system', 'read power state'} <= set(ops)
        assert by_label(samples, 'baremetal_bmc_request_duration_seconds_'
                        'count', 'protocol') == {'redfish': sum(
                            ops.values())}
        assert steps(samples)[('clean', 'bios.apply_configuration',
                               'succeeded')] == 1
        check_gauges(samples, node_list(server.endpoint))
    finally:
        try:
            assert server.stop() == 0, server.log()
        finally:
            bmc.stop()


def test_scale_out_conductors_serve_their_own_metrics(tmp_path):
    cluster = cl.Cluster(tmp_path, services.postgresql_url(),
                         services.rabbit_url(), conductors=0)
    listeners = {}
    try:
        for name in ('cond-0', 'cond-1'):
            listeners[name] = processes.free_port()
            cluster.conf['metrics'] = {
                'conductor_listen_port': listeners[name]}
            cluster.add_conductor(name)
        cluster.wait_conductors(['cond-0', 'cond-1'])
        ep = cluster.api.endpoint
        uuids = cl.enroll(ep, ['s%d' % i for i in range(6)])
        for verb, state in (('manage', 'manageable'),
                            ('provide', 'available'),
                            ('active', 'active')):
            cl.provision_all(ep, uuids, verb)
            cl.wait_all(ep, uuids, state)
        cl.provision_all(ep, uuids[:2], 'deleted')
        cl.wait_all(ep, uuids[:2], 'available')

        api = scrape(ep + '/metrics')
        check_gauges(api, node_list(ep))
        assert by_label(api, 'baremetal_nodes_by_provision_state',
                        'provision_state') == {'active': 4, 'available': 2}
        # the API runs no steps; its requests are its own
        assert not steps(api)
        assert sample(api, 'baremetal_api_request_duration_seconds_count',
                      route='/v1/nodes', method='POST',
                      status_class='2xx') == 6

        _, body = cl.call(ep, 'GET', '/v1/nodes?fields=uuid,conductor')
        owners = collections.Counter(n['conductor'] for n in body['nodes'])
        total: collections.Counter = collections.Counter()
        for name, port in listeners.items():
            mine = scrape('http://127.0.0.1:%d/metrics' % port)
            # the fleet's gauges come from the API alone
            assert ('baremetal_nodes', frozenset()) not in mine
            ran = steps(mine)
            # each conductor ran the steps of the nodes it owns (the
            # second cleaning of the two undeployed nodes included)
            assert sum(ran.values()) >= owners[name] * (
                len(FAKE_CLEAN) + len(FAKE_DEPLOY)), (name, ran)
            # measured once its first run ended (a fast lifecycle may
            # be scraped before)
            deadline = time.monotonic() + 15
            while sample(mine, 'baremetal_periodic_task_duration_'
                         'seconds_count', task='heartbeat') < 1:
                assert time.monotonic() < deadline, (name, 'no heartbeat')
                time.sleep(0.5)
                mine = scrape('http://127.0.0.1:%d/metrics' % port)
            total += ran
        assert total == collections.Counter(
            {('clean', s, 'succeeded'): 8 for s in FAKE_CLEAN} |
            {('deploy', s, 'succeeded'): 6 for s in FAKE_DEPLOY})
        # a conductor with a listener stops cleanly
        for name in listeners:
            assert cluster.conductors[name].stop() == 0, \
                cluster.conductors[name].log()
    except Exception:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()
