"""The redfish firmware interface over the REST API against sushy-tools'
own UpdateService (SimpleUpdate bumps the target system's BiosVersion
and answers with its task): the components the BMC reports, a manual
cleaning with firmware.update, the same step servicing an active node
(as Metal3 updates firmware), the components refreshed after it."""

import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

NO_RAMDISK = '1.70'
FIRMWARE = '1.86'
# two systems: sushy-tools' SimpleUpdate needs Targets, which are sent
# (as Ironic sends them) when the BMC manages more than one system
SYSTEMS = [{'uuid': str(uuid.uuid4()), 'name': 'fw-%d' % i,
            'power_state': 'Off', 'external_notifier': False,
            'memory_gib': 4, 'cpus': 2, 'disks': [20],
            'nics': [{'mac': '52:54:00:fe:00:%02x' % i,
                      'ip': '10.9.0.%d' % i}]}
           for i in range(2)]
# an active host, adopted, whose firmware is updated by servicing
ACTIVE = {'uuid': str(uuid.uuid4()), 'name': 'fw-active',
          'power_state': 'On', 'external_notifier': False,
          'memory_gib': 4, 'cpus': 2, 'disks': [20],
          'nics': [{'mac': '52:54:00:fe:01:01', 'ip': '10.9.1.1'}]}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = bs.start(tmp_path_factory.mktemp('redfish-firmware'))
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'),
                            SYSTEMS + [ACTIVE])
    yield b
    b.stop()


def _components(server, node):
    status, body = bs.http(server, 'GET', '/v1/nodes/%s/firmware' % node,
                           version=FIRMWARE)
    assert status == 200, body
    return {c['component']: c for c in body['firmware']}


def _clean(server, node, settings):
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'clean', 'disable_ramdisk': True, 'clean_steps': [
            {'interface': 'firmware', 'step': 'update',
             'args': {'settings': settings}}]}, version=NO_RAMDISK)
    assert status == 202, body
    return bs.wait(server, node, lambda n: n['provision_state'] in (
        'manageable', 'clean failed') and not n['reservation'],
        timeout=90, what='end of cleaning')


def test_bios_update_through_the_update_service(server, bmc):
    system = SYSTEMS[0]
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(system['uuid']))
    node = node['uuid']
    assert bs.http(server, 'GET', '/v1/nodes/%s' % node, version=FIRMWARE
                   )[1]['firmware_interface'] == 'redfish'
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
            {'target': 'manage'})
    bs.wait_provision(server, node, 'manageable')
    # verification read the BMC's components
    comps = _components(server, node)
    assert (comps['bios']['current_version'],
            comps['bios']['initial_version']) == ('1.0.0', '1.0.0')
    assert comps['bmc']['current_version'] == \
        bmc.get('/redfish/v1/Managers/%s' % bmc.get(
            '/redfish/v1/Managers')['Members'][0]['@odata.id'].rsplit(
                '/', 1)[-1])['FirmwareVersion']
    # the chassis' network adapters (tests/bmc/redfish_nics.py), as
    # Metal3's HostFirmwareComponents lists them: nic:<adapter Id>
    chassis = bmc.get(bmc.system(system['uuid'])['Links']['Chassis'][0][
        '@odata.id'])
    adapters = bmc.get(chassis['NetworkAdapters']['@odata.id'])['Members']
    assert len(adapters) == 2
    for member in adapters:
        adapter = bmc.get(member['@odata.id'])
        nic = comps['nic:%s' % adapter['Id']]
        assert (nic['current_version'], nic['initial_version']) == (
            adapter['Controllers'][0]['FirmwarePackageVersion'],) * 2
    assert set(comps) == {'bios', 'bmc', 'nic:NIC.Slot.1',
                          'nic:NIC.Embedded.1'}

    got = _clean(server, node, [
        {'component': 'bios', 'url': 'http://127.0.0.1:9/bios-1.1.0.bin'}])
    assert got['provision_state'] == 'manageable', got['last_error']
    # sushy-tools flashed the target system only
    assert bmc.system(system['uuid'])['BiosVersion'] == '1.1.0'
    assert bmc.system(SYSTEMS[1]['uuid'])['BiosVersion'] == '1.0.0'
    # a BIOS update is followed by a reboot
    assert bmc.system(system['uuid'])['PowerState'] == 'On'
    bios = _components(server, node)['bios']
    assert (bios['initial_version'], bios['current_version'],
            bios['last_version_flashed']) == ('1.0.0', '1.1.0', '1.1.0')
    assert got['last_error'] is None

    # flashed behind our back: inspection reads the new version
    assert bmc.post('/redfish/v1/UpdateService/Actions/'
                    'UpdateService.SimpleUpdate', {
                        'ImageURI': 'http://127.0.0.1:9/bios-1.2.0.bin',
                        'Targets': ['/redfish/v1/Systems/%s'
                                    % system['uuid']]}) == 204
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
            {'target': 'inspect'})
    got = bs.wait_provision(server, node, 'manageable', timeout=60)
    assert got['last_error'] is None, got['last_error']
    bios = _components(server, node)['bios']
    assert (bios['initial_version'], bios['current_version'],
            bios['last_version_flashed']) == ('1.0.0', '1.2.0', '1.2.0')


@pytest.mark.parametrize('settings, message', [
    ([{'component': 'nic', 'url': 'http://x/fw.bin'}],
     "Invalid firmware update [{'component': 'nic'"),
    ([{'component': 'bios'}],
     "Errors: 'url' is a required property"),
    ([{'component': 'bios', 'url': 'http://x/fw.bin', 'checksum': 'ab'}],
     'Additional properties are not allowed'),
    ([], 'Errors: [] should be non-empty'),
])
def test_bad_settings_fail_the_step_before_the_bmc(server, bmc, settings,
                                                   message):
    system = SYSTEMS[1]
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(system['uuid']))['uuid']
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
            {'target': 'manage'})
    bs.wait_provision(server, node, 'manageable')
    got = _clean(server, node, settings)
    assert got['provision_state'] == 'clean failed'
    assert message in got['last_error'], got['last_error']
    assert bmc.system(system['uuid'])['BiosVersion'] == '1.0.0'


def test_update_as_a_service_step_on_an_active_node(server, bmc):
    """Servicing (API 1.87) an adopted, active host with firmware.update
    and no ramdisk (API 1.108): the BMC flashes it, the host is rebooted
    and back to active, the components show the new version."""
    node = bs.create(server, driver='redfish', deploy_interface='direct',
                     driver_info=bmc.driver_info(ACTIVE['uuid']),
                     instance_info={
                         'image_source': 'http://127.0.0.1:9/disk.img',
                         'image_checksum': 'a' * 32},
                     instance_uuid=str(uuid.uuid4()))['uuid']
    for verb, state in (('manage', 'manageable'), ('adopt', 'active')):
        status, body = bs.http(server, 'PUT',
                               '/v1/nodes/%s/states/provision' % node,
                               {'target': verb})
        assert status == 202, body
        bs.wait_provision(server, node, state)
    assert _components(server, node)['bios']['current_version'] == '1.0.0'
    reset = 'POST /redfish/v1/Systems/%s/Actions/ComputerSystem.Reset' % (
        ACTIVE['uuid'])
    resets = bmc.log().count(reset)
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'service', 'disable_ramdisk': True, 'service_steps': [
            {'interface': 'firmware', 'step': 'update', 'args': {
                'settings': [{'component': 'bios',
                              'url': 'http://127.0.0.1:9/bios-1.1.0.bin'}]}}
        ]}, version='1.108')
    assert status == 202, body
    got = bs.wait(server, node, lambda n: n['provision_state'] in (
        'active', 'service failed') and not n['reservation']
        and not n['target_provision_state'],
        timeout=90, what='end of servicing')
    assert got['provision_state'] == 'active', got['last_error']
    assert got['last_error'] is None
    # sushy-tools' SimpleUpdate bumps the minor version
    assert bmc.system(ACTIVE['uuid'])['BiosVersion'] == '1.1.0'
    # rebooted for the BIOS update, and on again
    assert bmc.log().count(reset) > resets, bmc.log()[-2000:]
    assert bmc.system(ACTIVE['uuid'])['PowerState'] == 'On'
    bios = _components(server, node)['bios']
    assert (bios['initial_version'], bios['current_version'],
            bios['last_version_flashed']) == ('1.0.0', '1.1.0', '1.1.0')
