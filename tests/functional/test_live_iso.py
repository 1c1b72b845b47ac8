"""A live ISO (the ``ramdisk`` deploy with ``instance_info.boot_iso``, as
Metal3 deploys one) over virtual media against the sushy-tools Redfish
emulator: the ISO is inserted and stays the boot device, the machine is
powered on and the node is ``active`` with no agent to wait for; undeploy
ejects it."""

import functools
import http.server
import threading
import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

SYSTEM = {'uuid': str(uuid.uuid4()), 'name': 'live-iso',
          'power_state': 'Off', 'external_notifier': False,
          'memory_gib': 8, 'cpus': 2, 'disks': [20],
          'nics': [{'mac': '52:54:00:1e:00:01', 'ip': '10.0.6.1'}]}


PROVISION = '/v1/nodes/%s/states/provision'

@pytest.fixture(scope='module')
def bed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('liveiso')
    files = tmp / 'www'
    files.mkdir()
    (files / 'live.iso').write_bytes(b'\0' * 65536)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(files))
    web = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    server = bs.start(tmp)
    bmc = fixtures.RedfishBMC(tmp, [SYSTEM])
    try:
        yield server, bmc, 'http://127.0.0.1:%d' % web.server_address[1]
    finally:
        web.shutdown()
        try:
            assert server.stop() == 0, server.log()
        finally:
            bmc.stop()


def _cd(bmc) -> dict:
    return bmc.get('/redfish/v1/Systems/%s/VirtualMedia/Cd'
                   % SYSTEM['uuid'])


def _available(server, bmc, web, **fields):
    node = bs.create(
        server, driver='redfish', deploy_interface='ramdisk',
        boot_interface='redfish-virtual-media', automated_clean=False,
        driver_info=bmc.driver_info(
            SYSTEM['uuid'], deploy_kernel=web + '/ipa.kernel',
            deploy_ramdisk=web + '/ipa.initramfs'), **fields)['uuid']
    for target, state in (('manage', 'manageable'),
                          ('provide', 'available')):
        st, body = bs.http_unlocked(server, 'PUT',
                           PROVISION % node,
                           {'target': target})
        assert st == 202, body
        bs.wait_provision(server, node, state)
    return node


def test_live_iso_boots_from_virtual_media_and_is_active(bed):
    server, bmc, web = bed
    node = _available(server, bmc, web,
                      properties={'capabilities': 'boot_mode:bios'})
    iso = web + '/live.iso'
    st, body = bs.http_unlocked(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/instance_info/boot_iso', 'value': iso}])
    assert st == 200, body

    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'active'})
    assert st == 202, body
    got = bs.wait_provision(server, node, 'active')
    assert got['last_error'] is None
    assert got['power_state'] == 'power on'
    cd = _cd(bmc)
    assert cd['Inserted'] is True and cd['Image'] == iso, cd
    system = bmc.system(SYSTEM['uuid'])
    assert system['PowerState'] == 'On'
    boot = system['Boot']
    # the ISO is the instance: it stays the boot device
    assert (boot['BootSourceOverrideTarget'],
            boot['BootSourceOverrideEnabled']) == ('Cd', 'Continuous'), boot

    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'deleted'})
    assert st == 202, body
    got = bs.wait_provision(server, node, 'available', timeout=60)
    assert got['last_error'] is None
    assert not _cd(bmc).get('Inserted'), _cd(bmc)
    assert bmc.system(SYSTEM['uuid'])['PowerState'] == 'Off'


def _secure_boot(bmc) -> bool:
    return bmc.get('/redfish/v1/Systems/%s/SecureBoot'
                   % SYSTEM['uuid'])['SecureBootEnable']


def test_secure_boot_on_for_the_instance_off_after(bed):
    """instance_info capabilities secure_boot:true (what Nova passes from
    the flavor): the BMC's Secure Boot is on when the instance boots, off
    again once it is torn down; the node's secure_boot field says so."""
    server, bmc, web = bed
    node = _available(server, bmc, web)
    assert _secure_boot(bmc) is False
    iso = web + '/live.iso'
    st, body = bs.http_unlocked(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'boot_iso': iso, 'capabilities': {'secure_boot': 'true'}}}])
    assert st == 200, body
    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'active'})
    assert st == 202, body
    got = bs.wait_provision(server, node, 'active')
    assert got['last_error'] is None
    assert _secure_boot(bmc) is True
    assert bmc.system(SYSTEM['uuid'])['Boot'][
        'BootSourceOverrideMode'] == 'UEFI'
    _, got = bs.http(server, 'GET', '/v1/nodes/%s' % node, version='1.75')
    assert got['secure_boot'] is True

    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'deleted'})
    assert st == 202, body
    bs.wait_provision(server, node, 'available', timeout=60)
    assert _secure_boot(bmc) is False
    _, got = bs.http(server, 'GET', '/v1/nodes/%s' % node, version='1.75')
    assert got['secure_boot'] is False


def test_secure_boot_refused_where_management_cannot_do_it(bed):
    """A management interface that cannot turn Secure Boot on: the
    deploy request is a 400 saying so, the node stays available."""
    server, bmc, web = bed
    node = bs.create(server, driver='fake-hardware',
                     deploy_interface='ramdisk', management_interface='noop',
                     automated_clean=False)['uuid']
    for target, state in (('manage', 'manageable'),
                          ('provide', 'available')):
        bs.http_unlocked(server, 'PUT', PROVISION % node,
                {'target': target})
        bs.wait_provision(server, node, state)
    bs.http_unlocked(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'boot_iso': web + '/live.iso',
            'capabilities': {'secure_boot': 'true'}}}])
    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'active'})
    assert st == 400, body
    assert 'Secure Boot' in body['error_message'] and \
        'noop' in body['error_message'], body
    assert bs.node(server, node)['provision_state'] == 'available'
