"""The fake deploy writes and erases nothing: it runs on fake-hardware
nodes only.  A node of any other driver that still names it (enrolled
before the ipmi, redfish and manual-management types stopped offering
it) is refused: over the API with a 400 that leaves the node as it was,
and by the conductor itself when the API is bypassed."""

import pytest

from baremetal.common import exception

from baremetal.api import auth
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests import harness

REAL = {
    'enabled_hardware_types': ['fake-hardware', 'manual-management',
                               'ipmi', 'redfish'],
    'enabled_power_interfaces': ['fake', 'ipmi', 'redfish'],
    'enabled_management_interfaces': ['fake', 'noop', 'ipmi', 'redfish'],
}
DRIVERS = ['ipmi', 'redfish', 'manual-management']


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path, overrides=REAL)
    yield h
    h.close()


def _legacy(api, driver, state, **fields):
    """A node as an older release let it be: the fake deploy (and, for
    manual-management, the fake boot: its only ones then)."""
    n = api.create_node(driver=driver, **fields)
    values = {'deploy_interface': 'fake', 'provision_state': state}
    if driver == 'manual-management':
        values['boot_interface'] = 'fake'
    db_rows.update(db_nodes.NODES, db_nodes.get_node(n['uuid'])['id'], values)
    return api.node(n['uuid'])


def _refused(api, node, verb, **extra):
    before = api.node(node['uuid'])
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % node['uuid'],
        dict(target=verb, **extra))
    assert status == 400, (verb, status, body)
    msg = harness.error_message(body)
    assert 'fake deploy interface writes no image and erases no disk' \
        in msg and node['driver'] in msg, msg
    after = api.node(node['uuid'])
    for f in ('provision_state', 'target_provision_state', 'last_error',
              'maintenance', 'reservation', 'driver_internal_info',
              'clean_step'):
        assert after[f] == before[f], f
    return msg


@pytest.mark.parametrize('driver', DRIVERS)
def test_real_hardware_types_offer_no_fake_deploy(api, driver):
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': driver, 'deploy_interface': 'fake'})
    assert status == 400
    assert 'Deploy interface "fake"' in harness.error_message(body)
    status, body, _ = api.request('GET', '/v1/drivers/%s' % driver,
                                  version='1.30')
    assert 'fake' not in body['enabled_deploy_interfaces']
    assert body['default_deploy_interface'] == 'direct'


@pytest.mark.parametrize('driver', DRIVERS)
def test_provide_and_clean_with_the_fake_deploy_are_400(api, driver):
    n = _legacy(api, driver, 'manageable')
    assert 'Set the node\'s deploy_interface to direct or ramdisk.' in \
        _refused(api, n, 'provide')
    _refused(api, n, 'clean', clean_steps=[
        {'interface': 'deploy', 'step': 'erase_devices'}])
    _refused(api, n, 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % n['uuid'])
    assert v['deploy']['result'] is False
    assert 'writes no image and erases no disk' in v['deploy']['reason']
    assert driver in v['deploy']['reason']


@pytest.mark.parametrize('driver', DRIVERS)
def test_deploy_rebuild_undeploy_with_the_fake_deploy_are_400(api, driver):
    n = _legacy(api, driver, 'available')
    _refused(api, n, 'active')
    db_rows.update(db_nodes.NODES, db_nodes.get_node(n['uuid'])['id'],
                   {'provision_state': 'active'})
    for verb in ('rebuild', 'deleted'):
        assert 'in maintenance mode: the node is active' in \
            _refused(api, n, verb)


@pytest.mark.parametrize('driver', DRIVERS)
def test_a_refused_node_is_fixed_by_switching_its_interfaces(api, driver):
    n = _legacy(api, driver, 'manageable')
    patch = [{'op': 'replace', 'path': '/deploy_interface',
              'value': 'direct'}]
    if driver == 'manual-management':
        patch.append({'op': 'replace', 'path': '/boot_interface',
                      'value': 'ipxe'})
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'],
                                  patch)
    assert status == 200, body
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % n['uuid'])
    # the agent deploy now: what it needs is the boot's
    assert v['deploy']['result'] is False
    assert 'fake deploy' not in v['deploy']['reason']
    # provide passes the API (and cleaning starts, or fails on the BMC)
    api.provision(n['uuid'], 'provide')


@pytest.mark.parametrize('verb,state,params', [
    ('provide', 'manageable', {}),
    ('clean', 'manageable', {'clean_steps': [
        {'interface': 'deploy', 'step': 'erase_devices'}],
        'disable_ramdisk': True}),
    ('deleted', 'active', {}),
])
def test_the_conductor_refuses_it_when_the_api_is_bypassed(
        api, verb, state, params):
    # the conductor itself refuses before anything changes: a caller of
    # its RPC API gets the same refusal as the REST API's 400
    n = _legacy(api, 'manual-management', state)
    with pytest.raises(exception.InvalidParameterValue) as e:
        api.rpc.do_provisioning_action(
            auth.admin_context(), db_nodes.get_node(n['uuid']), verb,
            params)
    assert 'writes no image and erases no disk' in str(e.value)
    got = api.node(n['uuid'])
    assert (got['provision_state'], got['last_error'],
            got['reservation']) == (state, None, None)


def test_fake_hardware_still_runs_the_fake_deploy(api):
    n = api.make_available()
    assert (n['deploy_interface'], n['boot_interface']) == ('fake', 'fake')
    api.provision(n['uuid'], 'active')
    assert api.wait_for(n['uuid'], 'active')['power_state'] == 'power on'
    api.provision(n['uuid'], 'rebuild')
    api.wait_for(n['uuid'], 'active')
    api.provision(n['uuid'], 'deleted')
    api.wait_for(n['uuid'], 'available')
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % n['uuid'])
    assert v['deploy'] == {'result': True}
