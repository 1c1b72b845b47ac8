"""The agent protocol, conductor side: tokens at lookup and heartbeat,
cleaning through the agent's commands, the ramdisk deploy; against a
stand-in for ironic-python-agent's API (tests/agent_double.py)."""

import time
import types

import pytest

from baremetal.drivers.modules.agent import deploy as agent_deploy
from tests import agent_double
from tests import harness

MAC = '52:54:00:12:34:56'
STEPS = '/v1/nodes/%s/cleaning/steps'


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    yield double
    double.stop()


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'deploy.erase_devices_priority': 0,
        'conductor.clean_step_priority_override': []})
    yield h
    h.close()


def _agent_node(api, **fields):
    return api.make_manageable(MAC, deploy_interface='ramdisk', **fields)


def _boot_agent(api, agent, uuid):
    """What IPA does once its ramdisk is up: look up by MAC, heartbeat."""
    status, found, _ = api.request('GET', '/v1/lookup?addresses=%s' % MAC,
                                   version='1.62')
    assert status == 200, found
    agent.token = found['config']['agent_token']
    assert found['config']['agent_token_required'] is True
    status, body, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': agent.url, 'agent_token': agent.token,
         'agent_version': '13.0.0'}, version='1.62')
    assert status == 202, body


def test_lookup_issues_the_token_once_and_no_view_shows_it(api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    # before 1.62 no token is handed out
    status, found, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % MAC, version='1.61')
    assert status == 200 and 'agent_token' not in found['config']
    status, found, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % MAC, version='1.62')
    token = found['config']['agent_token']
    assert len(token) >= 32
    # again before a heartbeat carried it: 409 (its answer may have been
    # lost: the agent looks up again, agent_tokens.in_transit); after
    # one, ******
    status, again, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % MAC, version='1.62')
    assert status == 409, again
    assert 'no heartbeat has carried it yet' in \
        harness.error_message(again)
    assert token not in repr(again)
    agent.token = token
    status, body, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': agent.url, 'agent_token': token}, version='1.62')
    assert status == 202, body
    status, again, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % MAC, version='1.62')
    assert again['config']['agent_token'] == '******'
    for path in ('/v1/nodes/%s' % uuid, '/v1/nodes/detail',
                 '/v1/nodes?fields=uuid,driver_internal_info',
                 '/v1/lookup?addresses=%s' % MAC):
        status, body, _ = api.request('GET', path, version='1.62')
        assert status == 200, (path, body)
        text = repr(body)
        assert token not in text, path
    node = api.node(uuid)
    assert node['driver_internal_info']['agent_secret_token'] == '******'


def test_heartbeat_needs_this_boots_token_and_changes_nothing_without(
        api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    before = api.node(uuid)
    # no lookup yet: no token exists
    for body in ({'callback_url': agent.url},
                 {'callback_url': agent.url, 'agent_token': 'x' * 43}):
        status, err, _ = api.request('POST', '/v1/heartbeat/%s' % uuid,
                                     body, version='1.62')
        assert status == 401, err
        assert 'agent token' in harness.error_message(err)
    status, found, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % MAC, version='1.62')
    token = found['config']['agent_token']
    status, err, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': agent.url, 'agent_token': token[::-1]},
        version='1.62')
    assert status == 401
    # refused for the token even while another task holds the node (a
    # conductor busy with this agent's previous heartbeat): not 409
    from baremetal.db import nodes as db_nodes
    from baremetal.db import reservations as db_reservations
    db_reservations.reserve_node('another-conductor', uuid)
    try:
        status, err, _ = api.request(
            'POST', '/v1/heartbeat/%s' % uuid,
            {'callback_url': agent.url, 'agent_token': 'x' * 43},
            version='1.62')
        assert status == 401, err
        # and with the right token the lock is what stops it
        status, err, _ = api.request(
            'POST', '/v1/heartbeat/%s' % uuid,
            {'callback_url': agent.url, 'agent_token': token},
            version='1.62')
        assert status == 409, err
    finally:
        row = db_nodes.get_node(uuid)
        db_reservations.release_node('another-conductor', row['id'])
    after = api.node(uuid)
    for key in ('agent_url', 'agent_last_heartbeat'):
        assert key not in after['driver_internal_info']
    assert after['provision_state'] == before['provision_state']
    assert agent.received == []
    # a field of a later version is refused at 1.62
    status, err, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': agent.url, 'agent_token': token,
         'agent_verify_ca': 'PEM'}, version='1.62')
    assert status == 400 and 'agent_verify_ca' in \
        harness.error_message(err)
    status, err, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': 'ftp://x', 'agent_token': token}, version='1.62')
    assert status == 400


def test_cleaning_runs_the_agents_steps_in_band(api, agent):
    uuid = _agent_node(api)
    status, body, headers = api.request('GET', STEPS % uuid)
    assert status == 202 and headers['Retry-Request-After'] == '-1'
    api.provision(uuid, 'provide')
    node = api.wait_for(uuid, 'clean wait')
    assert node['power_state'] == 'power on'
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'available')
    assert node['power_state'] == 'power off'
    # erase_devices is at 0 by [deploy]erase_devices_priority
    assert agent.names() == [
        'clean.get_clean_steps',
        'clean.execute_clean_step:erase_devices_metadata']
    params = agent.received[1]['params']
    assert params['clean_version'] == {'generic': '1.2'}
    assert params['node']['uuid'] == uuid
    assert 'agent_secret_token' not in params['node'][
        'driver_internal_info']
    assert all('agent_token=%s' % agent.token in r
               for r in agent.requests)
    info = node['driver_internal_info']
    assert 'agent_secret_token' not in info and 'agent_url' not in info
    # the listing now serves what the agent reported
    status, body, _ = api.request('GET', STEPS % uuid)
    assert status == 200
    listed = {s['step']: s for s in body['steps']}
    assert listed['erase_devices_metadata']['priority'] == 99
    assert listed['erase_devices']['priority'] == 0
    assert listed['burnin_disk']['args'][0]['name'] == 'runtime'
    # the agent's raid steps are not the deploy interface's to run
    assert [s['interface'] for s in body['steps']
            if s['step'] == 'delete_configuration'] == ['raid']


def test_manual_cleaning_with_an_agent_step_and_arguments(api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'deploy', 'step': 'burnin_disk',
         'args': {'runtime': 5}}])
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'manageable')
    assert agent.names()[1:] == ['clean.execute_clean_step:burnin_disk']
    assert agent.received[1]['params']['step']['args'] == {'runtime': 5}
    assert node['last_error'] is None
    # now that the steps are known, a bad request is a 400 up front
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'clean', 'clean_steps': [
            {'interface': 'deploy', 'step': 'burnin_disk', 'args': {}}]})
    assert status == 400 and 'runtime' in harness.error_message(body)
    assert api.node(uuid)['provision_state'] == 'manageable'


def test_a_step_the_agent_fails_fails_cleaning_with_its_reason(api, agent):
    uuid = _agent_node(api)
    agent.fail = {'clean.execute_clean_step'}
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'deploy.erase_devices_metadata' in node['last_error']
    assert 'the double was told to fail' in node['last_error']
    assert node['maintenance'] is True
    assert node['power_state'] == 'power off'


def test_an_agent_answering_garbage_fails_the_step(api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    agent.answer = (200, b'[1, 2')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'not a JSON object' in node['last_error']


def test_an_agent_answer_nested_too_deep_fails_the_step(api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    agent.answer = (200, b'{"a":' * 40 + b'1' + b'}' * 40)
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'nested deeper than 25 levels' in node['last_error']
    assert 'max_json_body_depth' in node['last_error']


def test_manual_clean_with_a_step_the_agent_lacks_fails_after_boot(
        api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'deploy', 'step': 'no_such_step'}])
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'no_such_step' in node['last_error']
    assert 'clean.execute_clean_step' not in ' '.join(agent.names())


def test_abort_while_waiting_for_the_agent_fails_cleaning(api, agent):
    """Before the agent's first heartbeat no step is planned yet: abort
    is allowed and ends in clean failed (it used to answer 500)."""
    uuid = _agent_node(api)
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'deploy', 'step': 'erase_devices_metadata'}])
    api.wait_for(uuid, 'clean wait')
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'abort'})
    assert status == 202, body
    node = api.wait_for(uuid, 'clean failed')
    assert node['last_error'] == \
        'Clean operation aborted for node %s' % uuid
    assert node['reservation'] is None


def test_ramdisk_deploy_is_active_once_the_agent_heartbeats(api, agent):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    api.provision(uuid, 'active')
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'deploy'
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['power_state'] == 'power on'


def _available(api, agent, **fields):
    uuid = _agent_node(api, **fields)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    return uuid


def test_live_iso_deploy_is_active_without_an_agent(api, agent):
    """A live ISO runs no agent: active once booted, no heartbeat."""
    uuid = _available(api, agent)
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info/boot_iso',
         'value': 'http://127.0.0.1:9/live.iso'}])
    api.provision(uuid, 'active')
    node = api.wait_for(uuid, 'active')
    assert node['power_state'] == 'power on'
    assert 'agent_secret_token' not in node['driver_internal_info']


def test_live_iso_refused_at_validate_by_ipxe(api, agent):
    uuid = _available(api, agent)
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'replace', 'path': '/boot_interface', 'value': 'ipxe'}])
    assert status == 200, body
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info/boot_iso',
         'value': 'http://127.0.0.1:9/live.iso'}])
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400, body
    assert 'cannot boot instance_info boot_iso' in \
        harness.error_message(body)
    assert api.node(uuid)['provision_state'] == 'available'
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['deploy']['result'] is False
    assert 'boot_iso' in v['deploy']['reason']


@pytest.mark.parametrize('field', ['kernel', 'boot_iso'])
def test_ramdisk_deploy_refuses_an_instance_file_outside_allowed_paths(
        api, agent, field):
    uuid = _agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info/%s' % field,
         'value': 'file:///etc/shadow'}])
    assert status == 200, body
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400, body
    text = harness.error_message(body)
    assert 'instance_info %s' % field in text, text
    assert '[conductor]file_url_allowed_paths' in text, text
    assert api.node(uuid)['provision_state'] == 'available'


def test_fake_heartbeat_no_longer_resumes_another_interfaces_step(api):
    n = api.create_node(driver_info={
        'fake_async_steps': ['bios.apply_configuration']},
        bios_interface='fake')
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'apply_configuration',
         'args': {'settings': [{'name': 'A', 'value': 'B'}]}}])
    api.wait_for(n['uuid'], 'clean wait')
    status, _, _ = api.heartbeat(n['uuid'])
    assert status == 202
    node = api.node(n['uuid'])
    assert node['provision_state'] == 'clean wait'


def test_vendor_hardware_listing_classes_runs_its_in_band_step(
        tmp_path, agent):
    h = harness.Harness(tmp_path, overrides={
        'enabled_hardware_types': ['fake-hardware',
                                   'vendor-agent-hardware'],
        'enabled_deploy_interfaces': ['fake', 'ramdisk',
                                      'vendor-agent-deploy']})
    try:
        n = h.create_node(driver='vendor-agent-hardware')
        # classes were matched to their entry points
        assert (n['deploy_interface'], n['boot_interface'],
                n['power_interface']) == ('vendor-agent-deploy', 'fake',
                                          'fake')
        uuid = n['uuid']
        status, body, _ = h.request(
            'POST', '/v1/ports', {'address': MAC, 'node_uuid': uuid})
        h.provision(uuid, 'manage')
        h.wait_for(uuid, 'manageable')
        h.provision(uuid, 'clean', clean_steps=[
            {'interface': 'deploy', 'step': 'vendor_flash_nic',
             'args': {'level': 2}}])
        h.wait_for(uuid, 'clean wait')
        _boot_agent(h, agent, uuid)
        h.wait_for(uuid, 'manageable')
        assert agent.names()[1:] == [
            'clean.execute_clean_step:vendor_flash_nic']
        assert agent.received[1]['params']['step']['args'] == {'level': 2}
    finally:
        h.close()


def test_a_class_without_an_entry_point_is_refused_naming_it():
    from baremetal.common import exception
    from baremetal.drivers import registry

    class Unregistered:
        pass

    with pytest.raises(exception.DriverLoadError) as e:
        registry._entry_point_name('vendor-x', 'deploy', Unregistered)
    assert 'supported_deploy_interfaces' in str(e.value)
    assert 'Unregistered' in str(e.value)


def _active_agent_node(api, agent, **fields):
    uuid = _agent_node(api, **fields)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'active')
    agent.received.clear()
    return uuid


def test_servicing_boots_the_agent_and_runs_its_step_in_band(api, agent):
    """API 1.87 with an agent service step: the instance gives way to the
    ramdisk, the agent reports its service steps at its first heartbeat,
    the step runs as an agent command, the instance boots again."""
    uuid = _active_agent_node(api, agent, driver_info={
        'agent_burnin_cpu_timeout': 5, 'fake_password': 'S3cret'})
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'service', 'service_steps': [
            {'interface': 'deploy', 'step': 'burnin_cpu'}]},
        version='1.87')
    assert status == 202, body
    node = api.wait_for(uuid, 'service wait')
    assert node['power_state'] == 'power on'
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert agent.names() == ['service.get_service_steps',
                             'service.execute_service_step:burnin_cpu']
    params = agent.received[1]['params']
    assert params['service_version'] == {'generic': '1.2'}
    # the agent reads its options from driver_info; secrets stay masked
    assert params['node']['driver_info'] == {
        'agent_burnin_cpu_timeout': 5, 'fake_password': '******'}
    info = node['driver_internal_info']
    assert 'servicing_ramdisk' not in info and 'agent_url' not in info
    assert node['power_state'] == 'power on'     # the instance again


def test_a_service_step_the_agent_lacks_fails_after_boot(api, agent):
    uuid = _active_agent_node(api, agent)
    api.request('PUT', '/v1/nodes/%s/states/provision' % uuid,
                {'target': 'service', 'service_steps': [
                    {'interface': 'deploy', 'step': 'no_such_step'}]},
                version='1.87')
    api.wait_for(uuid, 'service wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'service failed')
    assert 'no_such_step' in node['last_error']
    # abort: the ramdisk goes, the instance boots, active again
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'abort'},
        version='1.87')
    assert status == 202, body
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert 'servicing_ramdisk' not in node['driver_internal_info']


def test_out_of_band_service_steps_boot_no_ramdisk(api, agent):
    uuid = _active_agent_node(api, agent)
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'service', 'service_steps': [
            {'interface': 'power', 'step': 'reboot'}]}, version='1.87')
    assert status == 202, body
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert agent.received == []


def test_an_agent_slow_to_answer_a_poll_locks_nobody_out(api, agent):
    """While the conductor waits on an agent to answer a status poll, the
    node is not locked: the agent's heartbeat and an operator's request
    go through (neither waits on the agent)."""
    import threading

    from baremetal.conductor import periodics
    uuid = _agent_node(api)
    agent.polls_until_done = 10 ** 6
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'clean wait')
    while 'clean.execute_clean_step:erase_devices_metadata' not in \
            agent.names():
        threading.Event().wait(0.02)
    agent.hang = True
    poll = threading.Thread(target=periodics.poll_async_steps,
                            args=(api.conductor,))
    poll.start()
    while not agent.hung:
        threading.Event().wait(0.02)
    node = api.node(uuid)
    assert node['reservation'] is None
    status, body, _ = api.request(
        'POST', '/v1/heartbeat/%s' % uuid,
        {'callback_url': agent.url, 'agent_token': agent.token},
        version='1.62')
    assert status == 202, body
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/traits/CUSTOM_STILL_MINE' % uuid,
        version='1.37')
    assert status == 204, body
    agent.unhang()      # the held request is dropped; the retry works
    poll.join(30)
    assert not poll.is_alive()
    agent.polls_until_done = 0
    api.wait_for(uuid, 'available')
    status, body, _ = api.request('GET', '/v1/nodes/%s/traits' % uuid,
                                  version='1.37')
    assert body['traits'] == ['CUSTOM_STILL_MINE']


class _Boot:
    def __init__(self, calls):
        self.calls = calls

    def clean_up_ramdisk(self, task):
        self.calls.append('clean_up_ramdisk')


def _ending_task(fast_track: bool, provision_state='cleaning'):
    calls = []
    node = types.SimpleNamespace(
        uuid='n1', provision_state=provision_state, disable_power_off=False,
        driver_info={'fast_track': fast_track},
        driver_internal_info={'agent_secret_token': 't',
                              'agent_url': 'http://a:9999'})
    conf = types.SimpleNamespace(deploy=types.SimpleNamespace(
        fast_track=False, fast_track_timeout=300))
    return types.SimpleNamespace(
        node=node, driver=types.SimpleNamespace(boot=_Boot(calls)),
        conductor=types.SimpleNamespace(conf=conf),
        power_action=lambda state: calls.append(state)), calls


def test_end_of_an_agent_boot_with_fast_track_keeps_it_but_ejects():
    """As Ironic's tear-down: the node stays on with its agent and token,
    what booted the ramdisk (virtual media, iPXE files) is cleaned up."""
    task, calls = _ending_task(True)
    agent_deploy.end_agent_boot(task)
    assert calls == ['clean_up_ramdisk']
    assert task.node.driver_internal_info['agent_secret_token'] == 't'


@pytest.mark.parametrize('fast_track, state', [(False, 'cleaning'),
                                               (True, 'clean failed')])
def test_end_of_an_agent_boot_otherwise_shuts_it_down(fast_track, state):
    task, calls = _ending_task(fast_track, state)
    agent_deploy.end_agent_boot(task)
    assert calls == ['power off', 'clean_up_ramdisk']
    assert 'agent_secret_token' not in task.node.driver_internal_info


def test_a_token_no_heartbeat_carried_is_issued_again(api, agent):
    """The answer of the lookup that got the token was lost (the
    conductor died after issuing it, or the API before answering; seen in
    ``tools/bench-fleet --lose-conductor undeploy``): once no heartbeat
    has carried it for [DEFAULT]rpc_response_timeout_api seconds, the
    agent's next lookup gets a new token and the first one is void.
    Before that, 409 (Ironic answers ``******``, which leaves an agent
    whose answer was lost without a token: IPA stops); once a heartbeat
    carried it, ``******`` (as Ironic)."""
    api_conf = harness.CONF
    api_conf.set_override('rpc_response_timeout_api', 1)
    try:
        uuid = _agent_node(api)
        api.provision(uuid, 'provide')
        api.wait_for(uuid, 'clean wait')
        path = '/v1/lookup?addresses=%s' % MAC

        def lookup():
            status, found, _ = api.request('GET', path, version='1.62')
            assert status == 200, found
            return found['config']['agent_token']

        lost = lookup()
        assert len(lost) >= 32
        status, again, _ = api.request('GET', path, version='1.62')
        assert status == 409, again
        time.sleep(1.1)
        token = lookup()
        assert token not in (lost, '******') and len(token) >= 32
        status, _, _ = api.request(
            'POST', '/v1/heartbeat/%s' % uuid,
            {'callback_url': agent.url, 'agent_token': lost},
            version='1.62')
        assert status == 401
        agent.token = token         # the agent's own, from this lookup
        status, body, _ = api.request(
            'POST', '/v1/heartbeat/%s' % uuid,
            {'callback_url': agent.url, 'agent_token': token},
            version='1.62')
        assert status == 202, body
        api.wait_for(uuid, 'available')
    finally:
        api_conf.clear_override('rpc_response_timeout_api')


def test_which_tokens_count_as_lost_in_transit():
    """The rule behind the test above: a token a lookup handed out,
    older than the time, that no heartbeat carried; never one on the
    boot medium."""
    from baremetal.common import agent_tokens
    node = types.SimpleNamespace(driver_internal_info={})
    agent_tokens.issue(node)
    info = node.driver_internal_info
    assert not agent_tokens.lost_in_transit(info, 60)
    assert agent_tokens.in_transit(info, 60)
    assert agent_tokens.lost_in_transit(info, 0)
    assert not agent_tokens.in_transit(info, 0)
    carried = dict(info, agent_last_heartbeat='2026-12-06T06:00:00')
    assert not agent_tokens.lost_in_transit(carried, 0)
    assert not agent_tokens.in_transit(carried, 60)
    old = dict(info, agent_secret_token_issued_at='2026-12-06T06:00:00')
    assert agent_tokens.lost_in_transit(old, 60)
    for odd in (None, 'yesterday', 42):
        odd_info = dict(info, agent_secret_token_issued_at=odd)
        assert not agent_tokens.lost_in_transit(odd_info, 0)
        assert not agent_tokens.in_transit(odd_info, 60)
    medium = types.SimpleNamespace(driver_internal_info={})
    agent_tokens.pregenerate(medium)
    assert not agent_tokens.lost_in_transit(medium.driver_internal_info, 0)
    assert not agent_tokens.in_transit(medium.driver_internal_info, 60)
    agent_tokens.wipe(node)
    assert node.driver_internal_info == {}
    assert not agent_tokens.lost_in_transit(node.driver_internal_info, 0)
    assert not agent_tokens.in_transit(node.driver_internal_info, 60)
