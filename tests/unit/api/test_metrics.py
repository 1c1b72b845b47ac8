"""GET /metrics through the API app: node counts equal to the node
list, route templates as labels, steps, locks and agent callbacks seen
as they happen, policy and authentication."""

import base64
import collections

import bcrypt
import pytest
from oslo_context import context as oslo_context
from prometheus_client import parser

from baremetal.api import policy
from baremetal.api.controllers import metrics as metrics_controller
from baremetal.common import exception
from baremetal.conductor import periodics
from baremetal.db import node_stats
from tests import harness


def scrape(api, **headers) -> dict:
    """{(sample name, frozenset of labels): value} of one scrape."""
    status, body, resp_headers = api.request('GET', '/metrics',
                                             headers=headers)
    assert status == 200, body
    assert resp_headers['Content-Type'].startswith('text/plain')
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in parser.text_string_to_metric_families(body.decode())
            for s in f.samples}


def sample(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def labelled(samples: dict, name: str, label: str) -> dict:
    return {dict(k[1])[label]: v for k, v in samples.items()
            if k[0] == name}


def test_node_gauges_equal_the_node_list(api):
    nodes = [api.create_node(name='n%d' % i) for i in range(5)]
    for n in nodes[:3]:
        api.provision(n['uuid'], 'manage')
        api.wait_for(n['uuid'], 'manageable')
    api.provision(nodes[0]['uuid'], 'provide')
    api.wait_for(nodes[0]['uuid'], 'available')
    status, _, _ = api.request(
        'PUT', '/v1/nodes/%s/maintenance' % nodes[1]['uuid'],
        {'reason': 'test'})
    assert status == 202

    samples = scrape(api)
    _, listed, _ = api.request(
        'GET', '/v1/nodes?fields=provision_state,power_state,maintenance,'
               'fault', version='1.42')
    listed = listed['nodes']
    assert sample(samples, 'baremetal_node_stats_up') == 1
    assert sample(samples, 'baremetal_nodes') == len(listed) == 5
    by_state = labelled(samples, 'baremetal_nodes_by_provision_state',
                        'provision_state')
    expected = collections.Counter(n['provision_state'] for n in listed)
    assert {k: v for k, v in by_state.items() if v} == expected
    assert expected == {'enroll': 2, 'manageable': 2, 'available': 1}
    # every state is shown, at 0 where no node is
    assert by_state['active'] == 0 and by_state['clean wait'] == 0
    by_power = labelled(samples, 'baremetal_nodes_by_power_state',
                        'power_state')
    assert {k: v for k, v in by_power.items() if v} == \
        collections.Counter(n['power_state'] or 'none' for n in listed)
    assert sample(samples, 'baremetal_nodes_maintenance') == 1
    assert labelled(samples, 'baremetal_nodes_by_fault', 'fault') == \
        {'power failure': 0, 'clean failure': 0,
         'rescue abort failure': 0, 'service failure': 0}


def test_requests_are_labelled_with_their_route_template(api):
    n = api.create_node()
    before = scrape(api)
    for _ in range(3):
        api.node(n['uuid'])
    api.request('GET', '/v1/nodes/no-such-node')
    api.request('GET', '/v1/no/such/path')
    after = scrape(api)

    def count(route, status_class):
        return [sample(s, 'baremetal_api_request_duration_seconds_count',
                       route=route, method='GET',
                       status_class=status_class)
                for s in (before, after)]
    got = count('/v1/nodes/{node}', '2xx')
    assert got[1] == got[0] + 3
    got = count('/v1/nodes/{node}', '4xx')
    assert got[1] == got[0] + 1
    got = count('unmatched', '4xx')
    assert got[1] == got[0] + 1
    # no path is a label: the UUID appears nowhere
    routes = {dict(k[1]).get('route') for k in after}
    assert not any(r and n['uuid'] in r for r in routes)
    assert '/metrics' in routes


def test_steps_and_locks_of_a_lifecycle_are_measured(api):
    def steps(samples):
        return {(dict(k[1])['kind'], dict(k[1])['step'],
                 dict(k[1])['outcome']): v for k, v in samples.items()
                if k[0] == 'baremetal_step_duration_seconds_count'}

    before = scrape(api)
    n = api.create_node(driver_info={
        'fake_async_steps': ['deploy.erase_devices']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    # the asynchronous step has started, not ended
    mid = steps(scrape(api))
    assert mid.get(('clean', 'erase_devices', 'succeeded'), 0) == \
        steps(before).get(('clean', 'erase_devices', 'succeeded'), 0)
    status, _, _ = api.heartbeat(n['uuid'])
    assert status == 202
    api.wait_for(n['uuid'], 'available')
    # a read the conductor answers under a shared lock
    status, _, _ = api.request(
        'GET', '/v1/nodes/%s/vendor_passthru/methods' % n['uuid'])
    assert status == 200
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'active')
    # a failing deploy step
    n2 = api.make_available(driver_info={
        'fake_fail_steps': ['deploy.write_image']})
    api.provision(n2['uuid'], 'active')
    api.wait_for(n2['uuid'], 'deploy failed')
    after = scrape(api)

    grown = {k: v - steps(before).get(k, 0)
             for k, v in steps(after).items()}
    assert grown[('clean', 'erase_devices_metadata', 'succeeded')] == 2
    assert grown[('clean', 'erase_devices', 'succeeded')] == 2
    # both nodes ran the first deploy step; the second failed on one
    assert grown[('deploy', 'deploy', 'succeeded')] == 2
    for step in ('prepare_instance_boot', 'boot_instance'):
        assert grown[('deploy', step, 'succeeded')] == 1, step
    assert grown[('deploy', 'write_image', 'succeeded')] == 1
    assert grown[('deploy', 'write_image', 'failed')] == 1
    # the steps of this test's nodes (other tests in this process may
    # have run steps of other interfaces)
    for (name, labels), value in after.items():
        if name == 'baremetal_step_duration_seconds_count' and \
                value > before.get((name, labels), 0):
            assert dict(labels)['interface'] == 'deploy', labels

    def locks(samples, mode):
        return sample(samples, 'baremetal_lock_wait_seconds_count',
                      mode=mode, outcome='acquired')
    # manage, provide, heartbeat, deploy... each took the node's lock;
    # the vendor methods' read a shared one
    assert locks(after, 'exclusive') >= locks(before, 'exclusive') + 6
    assert locks(after, 'shared') > locks(before, 'shared')


def test_heartbeats_and_lookups_are_measured(api):
    n = api.create_node(driver_info={'fake_async_steps': [
        'deploy.erase_devices_metadata', 'deploy.erase_devices']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    before = scrape(api)
    # lookup (found) and the first heartbeat of the boot: no interval
    assert api.heartbeat(n['uuid'])[0] == 202
    api.wait_for(n['uuid'], 'clean wait')
    middle = scrape(api)
    # the second: one interval
    assert api.heartbeat(n['uuid'])[0] == 202
    api.wait_for(n['uuid'], 'available')
    status, _, _ = api.request('GET', '/v1/lookup?addresses=00:00:00:'
                                      '00:00:01', version='1.62')
    assert status == 404
    after = scrape(api)

    name = 'baremetal_agent_heartbeat_interval_seconds_count'
    assert sample(middle, name) == sample(before, name)
    assert sample(after, name) == sample(before, name) + 1
    name = 'baremetal_agent_lookups_total'
    assert sample(after, name, outcome='found') == \
        sample(before, name, outcome='found') + 1
    assert sample(after, name, outcome='not_found') == \
        sample(before, name, outcome='not_found') + 1


def test_periodic_tasks_are_measured_under_their_names(api):
    worker = periodics.build(api.conductor)
    before = scrape(api)
    names = set()
    for watcher in worker.iter_watchers():
        watcher.work.callback()
        names.add(watcher.work.name)
    after = scrape(api)
    tasks = ('heartbeat', 'check_timeouts', 'poll_async_steps',
             'take_over_dead', 'sync_power_states', 'purge_events')
    # futurist's logs name them too
    assert names == {'baremetal.conductor.periodics.' + t for t in tasks}
    for task in tasks:
        name = 'baremetal_periodic_task_duration_seconds_count'
        assert sample(after, name, task=task) == \
            sample(before, name, task=task) + 1, task


def test_openmetrics_when_asked_for(api):
    status, body, headers = api.request('GET', '/metrics', headers={
        'Accept': 'application/openmetrics-text;version=1.0.0'})
    assert status == 200
    assert headers['Content-Type'].startswith(
        'application/openmetrics-text')
    assert body.endswith(b'# EOF\n')


def test_without_the_database_the_process_metrics_still_answer(
        api, monkeypatch):
    def lost():
        raise exception.DatabaseUnavailable(reason='gone')
    monkeypatch.setattr(node_stats, 'count_nodes', lost)
    samples = scrape(api)
    assert sample(samples, 'baremetal_node_stats_up') == 0
    assert not labelled(samples, 'baremetal_nodes_by_provision_state',
                        'provision_state')
    assert any(k[0] == 'baremetal_api_request_duration_seconds_count'
               for k in samples)


def test_fleet_collector_answers_without_a_request(api):
    api.create_node()
    names = {m.name for m in metrics_controller.FleetCollector().collect()}
    assert {'baremetal_nodes', 'baremetal_nodes_by_provision_state',
            'baremetal_nodes_by_power_state', 'baremetal_nodes_by_fault',
            'baremetal_nodes_maintenance'} <= names


class _Req:
    def __init__(self, **ctx):
        self.context = oslo_context.RequestContext(**ctx)


@pytest.mark.parametrize('ctx,allowed', [
    ({'roles': ['reader'], 'system_scope': 'all'}, True),
    # Keystone's implied roles: an admin's token also says member, reader
    ({'roles': ['admin', 'member', 'reader'], 'system_scope': 'all'},
     True),
    ({'roles': ['service'], 'system_scope': 'all'}, True),
    # the fleet's figures are not a project's (secure RBAC, as Ironic's
    # fleet-wide reads)
    ({'roles': ['admin'], 'project_id': 'p1'}, False),
    ({'roles': ['reader', 'member'], 'project_id': 'p1'}, False),
])
def test_policy_lets_system_readers_read_metrics(api, ctx, allowed):
    req = _Req(**ctx)
    if allowed:
        policy.authorize(req, 'baremetal:metrics:get')
    else:
        with pytest.raises(exception.NotAuthorized):
            policy.authorize(req, 'baremetal:metrics:get')


def test_metrics_need_credentials_under_http_basic(tmp_path):
    htpasswd = tmp_path / 'htpasswd'
    htpasswd.write_text('prom:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'http_basic',
        'http_basic_auth_user_file': str(htpasswd)})
    try:
        status, body, _ = h.request('GET', '/metrics')
        assert status == 401
        assert 'Authorization required' in harness.error_message(body)
        token = base64.b64encode(b'prom:secret').decode()
        samples = scrape(h, Authorization='Basic ' + token)
        assert sample(samples, 'baremetal_node_stats_up') == 1
        # the refused scrape is in the API's figures, before routing
        assert sample(samples, 'baremetal_api_request_duration_seconds_'
                               'count', route='unmatched', method='GET',
                      status_class='4xx') >= 1
    finally:
        h.close()
