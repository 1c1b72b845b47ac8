import json

from baremetal.conductor import task_manager
from tests import harness


def test_node_goes_through_the_whole_lifecycle(api):
    n = api.create_node(name='node-1')
    assert n['provision_state'] == 'enroll'
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'available')
    api.provision('node-1', 'active')
    node = api.wait_for(n['uuid'], 'active')
    assert node['power_state'] == 'power on'
    assert node['deploy_step'] == {}
    api.provision(n['uuid'], 'deleted')
    api.wait_for(n['uuid'], 'available')
    status, _, _ = api.request('DELETE', '/v1/nodes/node-1')
    assert status == 204
    status, body, _ = api.request('GET', '/v1/nodes/node-1')
    assert status == 404
    assert 'node-1' in harness.error_message(body)


def test_new_nodes_start_available_before_1_11(api):
    status, body, _ = api.request('POST', '/v1/nodes',
                                  {'driver': 'fake-hardware'},
                                  version='1.10')
    assert status == 201
    assert body['provision_state'] == 'available'


def test_patch_is_refused_during_a_transition_as_in_ironic(api):
    """409 while a state transition is in progress (clean wait here),
    except in Ironic's UPDATE_ALLOWED_STATES (clean failed); removing
    instance_uuid from a node in maintenance always works."""
    n = api.create_node(driver_info={
        'fake_async_steps': ['bios.factory_reset']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    api.wait_for(n['uuid'], 'clean wait')
    before = api.node(n['uuid'])
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/extra/k', 'value': 1}])
    assert status == 409, body
    assert 'state transition is in progress' in \
        json.loads(body['error_message'])['faultstring']
    assert api.node(n['uuid']) == before
    # the BMC reports the step failed: clean failed allows updates again
    with task_manager.acquire(api.conductor, n['uuid'], shared=False) as t:
        t.resume_steps('the BMC reported a failure')
    api.wait_for(n['uuid'], 'clean failed')
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/extra/k', 'value': 1}])
    assert status == 200 and body['extra'] == {'k': 1}
