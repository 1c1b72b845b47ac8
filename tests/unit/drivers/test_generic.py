"""manual-management: a real server the operator powers by hand.  The
service boots the agent over iPXE and deploys through it (direct or
ramdisk); it never pretends (no fake deploy, no fake boot)."""

import pytest

from tests import agent_double
from tests import harness
from tests.unit.drivers.test_agent_deploy import MAC, _boot_agent

SHA = 'ab' * 32


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    yield double
    double.stop()


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'deploy.http_server_port': 0})
    yield h
    h.close()


def test_its_interfaces_are_the_agents(api):
    status, body, _ = api.request('GET', '/v1/drivers/manual-management',
                                  version='1.38')
    assert status == 200, body
    offered = {it: (body['default_%s_interface' % it],
                    body['enabled_%s_interfaces' % it])
               for it in ('boot', 'deploy', 'inspect', 'power',
                          'management', 'rescue')}
    assert offered == {
        'boot': ('ipxe', ['ipxe']),
        'deploy': ('direct', ['direct', 'ramdisk']),
        'inspect': ('no-inspect', ['no-inspect', 'agent']),
        'power': ('fake', ['fake']),
        'management': ('noop', ['noop']),
        'rescue': ('no-rescue', ['no-rescue', 'agent'])}
    for it in ('boot', 'deploy'):
        status, body, _ = api.request('POST', '/v1/nodes', {
            'driver': 'manual-management', '%s_interface' % it: 'fake'})
        assert status == 400
        assert '%s interface "fake"' % it.capitalize() in \
            harness.error_message(body)


def test_deploy_is_refused_until_ipxe_can_boot_the_agent(api, tmp_path):
    n = api.create_node(driver='manual-management', instance_info={
        'image_source': 'http://127.0.0.1:9/d', 'image_checksum': SHA})
    uuid = n['uuid']
    # no cleaning (nothing could boot the agent yet)
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'replace', 'path': '/automated_clean', 'value': False}])
    api.provision(uuid, 'manage')
    api.wait_for(uuid, 'manageable')
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'available')
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['boot']['result'] is False and v['deploy']['result'] is False
    assert 'deploy_kernel' in v['boot']['reason']
    # no kernel and ramdisk to boot: 400, the node stays available
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400
    assert 'deploy_kernel' in harness.error_message(body)
    kernel, initrd = tmp_path / 'k', tmp_path / 'i'
    kernel.write_bytes(b'kernel')
    initrd.write_bytes(b'initrd')
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/driver_info/deploy_kernel',
         'value': str(kernel)},
        {'op': 'add', 'path': '/driver_info/deploy_ramdisk',
         'value': str(initrd)}])
    # nor a port iPXE could boot it from
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400
    assert 'pxe_enabled' in harness.error_message(body)
    node = api.node(uuid)
    assert (node['provision_state'], node['last_error']) == \
        ('available', None)
    api.request('POST', '/v1/ports', {'address': MAC, 'node_uuid': uuid})
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['boot'] == {'result': True} and \
        v['deploy'] == {'result': True}, v


def test_provide_cleans_and_deploy_writes_through_the_agent(api, agent,
                                                            tmp_path):
    kernel, initrd = tmp_path / 'k', tmp_path / 'i'
    kernel.write_bytes(b'kernel')
    initrd.write_bytes(b'initrd')
    n = api.create_node(driver='manual-management', driver_info={
        'deploy_kernel': str(kernel), 'deploy_ramdisk': str(initrd)},
        instance_info={'image_source': 'http://127.0.0.1:9/d',
                       'image_checksum': SHA})
    uuid = n['uuid']
    assert (n['boot_interface'], n['deploy_interface']) == \
        ('ipxe', 'direct')
    api.request('POST', '/v1/ports', {'address': MAC, 'node_uuid': uuid})
    api.provision(uuid, 'manage')
    api.wait_for(uuid, 'manageable')
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    # iPXE has a script for the port: the operator powers the server on
    script = tmp_path / 'httpboot' / 'ipxe' / (
        '%s.ipxe' % MAC.replace(':', '-'))
    assert script.read_text().startswith('#!ipxe')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    assert agent.names() == ['clean.get_clean_steps',
                             'clean.execute_clean_step:erase_devices_metadata',
                             'clean.execute_clean_step:erase_devices']
    agent.received.clear()
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'active')
    # UEFI, the default mode: the image's NVRAM boot entry
    assert agent.names() == ['standby.prepare_image',
                             'image.install_bootloader', 'standby.sync']
