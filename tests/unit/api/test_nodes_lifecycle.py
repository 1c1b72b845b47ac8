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
