"""The boot mode against real peers, over the REST API: the virtual IPMI
BMC (tests/bmc/ipmi_server.py, which records the EFI flag of the boot
device it is sent) and the sushy-tools emulator (BootSourceOverrideMode).
UEFI unless the node asks for legacy BIOS (properties/capabilities
``boot_mode:bios``); the node's ``boot_mode`` (API 1.75) shows what the
BMC reports; an ipxe deployment over IPMI leaves the node booting its
disk persistently in UEFI mode."""

import hashlib
import os
import uuid

import pytest

from tests import agent_double
from tests.bmc import fixtures
from tests.functional import bmc_server as bs
from tests.functional import processes

MODES = '1.76'      # boot_mode shown (1.75) and settable (1.76)
SYSTEM = {'uuid': str(uuid.uuid4()), 'name': 'uefi-sys',
          'power_state': 'Off', 'external_notifier': False,
          'memory_gib': 8, 'cpus': 4, 'disks': [40],
          'nics': [{'mac': '52:54:00:12:35:01', 'ip': '10.0.0.9'}]}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    """The BMC test server, with local agent images allowed for the
    ipxe deployment and no automated cleaning (the agent is a stand-in
    that answers the deploy only)."""
    tmp = tmp_path_factory.mktemp('bootmode')
    images = tmp / 'images'
    images.mkdir()
    (images / 'ipa.kernel').write_bytes(b'kernel ' * 100)
    (images / 'ipa.initramfs').write_bytes(b'initramfs ' * 100)
    conf = bs.conf(tmp)
    conf.setdefault('conductor', {}).update({
        'automated_clean': 'false',
        'file_url_allowed_paths': [str(images)]})
    conf.setdefault('deploy', {}).update({'http_server_port': 0})
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    svc.images = images
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture
def ipmi_bmc(tmp_path):
    b = fixtures.IPMIBMC(tmp_path)
    yield b
    b.stop()


def _put_boot_device(server, node, device, persistent=False):
    return bs.http(server, 'PUT', '/v1/nodes/%s/management/boot_device'
                   % node, {'boot_device': device,
                            'persistent': persistent})


def _caps(server, node, value):
    status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/properties/capabilities', 'value': value}])
    assert status == 200, body


def _boot_mode(server, node):
    return bs.http(server, 'GET', '/v1/nodes/%s' % node,
                   version=MODES)[1]['boot_mode']


def test_ipmi_sends_uefi_by_default_and_bios_when_asked(server, ipmi_bmc):
    node = bs.create(server, driver='ipmi',
                     driver_info=ipmi_bmc.driver_info())['uuid']
    status, body = _put_boot_device(server, node, 'pxe')
    assert status == 204, body
    state = ipmi_bmc.state
    assert (state['bootdev'], state['persistent'], state['uefi']) == \
        ('network', False, True)
    assert _boot_mode(server, node) == 'uefi'

    _caps(server, node, 'cpu_arch:x86_64,boot_mode:bios')
    status, body = _put_boot_device(server, node, 'disk', persistent=True)
    assert status == 204, body
    state = ipmi_bmc.state
    assert (state['bootdev'], state['persistent'], state['uefi']) == \
        ('hd', True, False)
    assert _boot_mode(server, node) == 'bios'


def test_ipmi_refuses_what_it_cannot_do_with_a_reason(server, ipmi_bmc):
    node = bs.create(server, driver='ipmi',
                     driver_info=ipmi_bmc.driver_info())['uuid']
    _caps(server, node, 'boot_mode:legacy')
    status, body = _put_boot_device(server, node, 'pxe')
    assert status == 400, body
    assert 'legacy' in body['error_message'] and \
        'properties/capabilities' in body['error_message'], body
    assert ipmi_bmc.state['bootdev'] == 'default'
    # IPMI has no boot mode of its own: it goes with the boot device
    _caps(server, node, 'boot_mode:bios')
    bs.sdk(server).baremetal.set_node_provision_state(
        node, 'manage', wait=True, timeout=30)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/boot_mode'
                           % node, {'target': 'uefi'}, version=MODES)
    assert status == 400, body
    assert 'boot_mode:uefi' in body['error_message'], body


def test_redfish_sends_uefi_by_default_and_shows_what_the_bmc_has(
        server, tmp_path):
    bmc = fixtures.RedfishBMC(tmp_path, [SYSTEM])
    try:
        node = bs.create(server, driver='redfish',
                         driver_info=bmc.driver_info(SYSTEM['uuid']))['uuid']
        status, body = _put_boot_device(server, node, 'pxe')
        assert status == 204, body
        boot = bmc.system(SYSTEM['uuid'])['Boot']
        assert (boot['BootSourceOverrideTarget'],
                boot['BootSourceOverrideMode']) == ('Pxe', 'UEFI')
        assert _boot_mode(server, node) == 'uefi'
        _caps(server, node, {'boot_mode': 'bios'})
        status, body = _put_boot_device(server, node, 'disk', True)
        assert status == 204, body
        boot = bmc.system(SYSTEM['uuid'])['Boot']
        assert (boot['BootSourceOverrideTarget'],
                boot['BootSourceOverrideEnabled'],
                boot['BootSourceOverrideMode']) == \
            ('Hdd', 'Continuous', 'Legacy')
        assert _boot_mode(server, node) == 'bios'
    finally:
        bmc.stop()


def _agent_boots(server, agent, node):
    status, found = bs.http(server, 'GET', '/v1/lookup?node_uuid=%s' % node,
                            version='1.62')
    assert status == 200, found
    agent.token = found['config']['agent_token']
    status, body = bs.http(server, 'POST', '/v1/heartbeat/%s' % node,
                           {'callback_url': agent.url,
                            'agent_token': agent.token,
                            'agent_version': '10.0.0'}, version='1.62')
    assert status == 202, body


@pytest.mark.parametrize('caps,uefi', [(None, True),
                                       ('boot_mode:bios', False)])
def test_ipxe_deploy_over_ipmi_boots_the_disk_in_the_nodes_mode(
        server, ipmi_bmc, caps, uefi):
    """manage, provide, deploy with the ipxe boot and the direct deploy:
    the agent boots from the network once, then the disk persistently,
    both in the node's mode."""
    image = b'disk image ' * 1000
    props = {'capabilities': caps} if caps else {}
    node = bs.create(
        server, driver='ipmi', boot_interface='ipxe',
        deploy_interface='direct', properties=props,
        driver_info=ipmi_bmc.driver_info(
            deploy_kernel=str(server.images / 'ipa.kernel'),
            deploy_ramdisk=str(server.images / 'ipa.initramfs')),
        instance_info={'image_source': 'http://127.0.0.1:9/disk.raw',
                       'image_os_hash_algo': 'sha256',
                       'image_os_hash_value':
                           hashlib.sha256(image).hexdigest()})['uuid']
    mac = '52:54:00:%02x:%02x:%02x' % tuple(os.urandom(3))
    status, body = bs.http(server, 'POST', '/v1/ports',
                           {'address': mac, 'node_uuid': node})
    assert status == 201, body
    conn = bs.sdk(server)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'provide', wait=True,
                                            timeout=30)
    # a mode the node cannot boot in is refused before anything changes
    # (the capability, when set, goes before deploy_boot_mode)
    if caps is None:
        status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
            {'op': 'add', 'path': '/instance_info/deploy_boot_mode',
             'value': 'legacy'}])
        assert status == 200, body
        status, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
        assert v['boot']['result'] is False and \
            'deploy_boot_mode' in v['boot']['reason'], v
        status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                               % node, {'target': 'active'})
        assert status == 400 and 'legacy' in body['error_message'], body
        assert bs.node(server, node)['provision_state'] == 'available'
        bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
            {'op': 'remove', 'path': '/instance_info/deploy_boot_mode'}])

    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': 'active'})
    assert status == 202, body
    bs.wait(server, node, lambda n: n['provision_state'] == 'wait call-back',
            what='the agent boot')
    state = ipmi_bmc.state
    assert (state['bootdev'], state['persistent'], state['uefi']) == \
        ('network', False, uefi)
    agent = agent_double.AgentDouble()
    try:
        _agent_boots(server, agent, node)
        got = bs.wait(server, node, lambda n: n['provision_state'] in
                      ('active', 'deploy failed'), timeout=60,
                      what='end of deployment')
    finally:
        agent.stop()
    assert got['provision_state'] == 'active', got['last_error']
    state = ipmi_bmc.state
    assert (state['bootdev'], state['persistent'], state['uefi'],
            state['power']) == ('hd', True, uefi, 'on')
    assert _boot_mode(server, node) == ('uefi' if uefi else 'bios')
