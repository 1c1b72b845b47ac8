"""The redfish RAID interface over the REST API: target RAID config,
manual cleaning with raid.delete_configuration and
raid.create_configuration, the node's raid_config, against the sushy-tools
emulator (its Storage and Drives) with the test RAID volumes
(tests/bmc/redfish_volumes.py), answering at once or through tasks."""

import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

GIB = 1 << 30
NO_RAMDISK = '1.70'
CONTROLLER = 'RAID.Integrated.1-1'


def _system(name, **extra):
    drives = [{'Id': 'Disk.%d' % i, 'CapacityBytes': 100 * GIB,
               'Protocol': 'SAS'} for i in range(4)]
    drives += [{'Id': 'Disk.%d' % i, 'CapacityBytes': 200 * GIB,
                'Protocol': 'SATA'} for i in (4, 5)]
    return dict({'uuid': str(uuid.uuid4()), 'name': name,
                 'power_state': 'Off', 'external_notifier': False,
                 'storage': [{'Id': CONTROLLER, 'drives': drives}]}, **extra)


SYNC = _system('raid-sync')
TASKS = _system('raid-tasks', raid_tasks=True)
ON_RESET = _system('raid-on-reset', raid_on_reset=True)
BAD = _system('raid-bad')
TARGET = {'logical_disks': [
    {'size_gb': 50, 'raid_level': '1', 'is_root_volume': True},
    {'size_gb': 'MAX', 'raid_level': '0', 'controller': CONTROLLER,
     'physical_disks': ['Disk.4', 'Disk.5'], 'volume_name': 'data'}]}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = bs.start(tmp_path_factory.mktemp('redfish-raid'))
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'),
                            [SYNC, TASKS, ON_RESET, BAD])
    yield b
    b.stop()


def _volumes(bmc, system):
    path = '/redfish/v1/Systems/%s/Storage/%s/Volumes' % (system['uuid'],
                                                          CONTROLLER)
    return [bmc.get(m['@odata.id'])
            for m in bmc.get(path)['Members']]


def _clean(server, node, *steps, seen=None):
    """Manual cleaning with those raid steps; ``seen`` collects the
    provision states the node went through."""
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'clean', 'disable_ramdisk': True, 'clean_steps': [
            {'interface': 'raid', 'step': s} for s in steps]},
        version=NO_RAMDISK)
    assert status == 202, body
    seen = set() if seen is None else seen

    def done(n):
        seen.add(n['provision_state'])
        return n['provision_state'] in ('manageable', 'clean failed') \
            and not n['reservation']
    return bs.wait(server, node, done, timeout=90, what='end of cleaning')


def _node(server, bmc, system):
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(system['uuid']))
    assert node['raid_interface'] == 'redfish'
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node['uuid'],
            {'target': 'manage'})
    bs.wait_provision(server, node['uuid'], 'manageable')
    return node['uuid']


def test_logical_disk_properties(server):
    status, props = bs.http(
        server, 'GET', '/v1/drivers/redfish/raid/logical_disk_properties',
        version='1.12')
    assert status == 200, props
    assert {'size_gb', 'raid_level', 'physical_disks', 'controller',
            'is_root_volume'} <= set(props)


@pytest.mark.parametrize('system', [SYNC, TASKS, ON_RESET],
                         ids=['sync', 'tasks', 'on-reset'])
def test_clean_builds_the_target_raid_config(server, bmc, system):
    node = _node(server, bmc, system)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           TARGET, version='1.12')
    assert status == 204, body

    seen: set = set()
    got = _clean(server, node, 'delete_configuration',
                 'create_configuration', seen=seen)
    assert got['provision_state'] == 'manageable', got['last_error']
    # a BMC answering with tasks: the step waits until they are done
    assert ('clean wait' in seen) == bool(
        system.get('raid_tasks') or system.get('raid_on_reset')), seen
    if system.get('raid_on_reset'):
        # the controller built the volumes while the machine restarted
        assert bmc.system(system['uuid'])['PowerState'] == 'On'
    disks = {d['name']: d for d in got['raid_config']['logical_disks']}
    root = disks.pop('%s-ld0' % node[:8])
    assert (root['raid_level'], root['size_gb'], root['controller'],
            root['is_root_volume']) == ('1', 50, CONTROLLER, True)
    # the smallest free drives of the controller
    assert root['physical_disks'] == ['Disk.0', 'Disk.1']
    data = disks.pop('data')
    assert (data['raid_level'], data['size_gb'], data['physical_disks']) \
        == ('0', 400, ['Disk.4', 'Disk.5'])
    assert 'is_root_volume' not in data and not disks
    assert got['raid_config']['last_updated']
    assert got['properties']['local_gb'] == 50
    # what the BMC holds
    on_bmc = sorted((v['Name'], v['RAIDType'], v['CapacityBytes'])
                    for v in _volumes(bmc, system))
    assert on_bmc == sorted([('%s-ld0' % node[:8], 'RAID1', 50 * GIB),
                             ('data', 'RAID0', 400 * GIB)])

    got = _clean(server, node, 'delete_configuration')
    assert got['provision_state'] == 'manageable', got['last_error']
    assert got['raid_config']['logical_disks'] == []
    assert _volumes(bmc, system) == []


@pytest.mark.parametrize('target, message', [
    ({'logical_disks': [{'size_gb': 10, 'raid_level': 'JBOD'}]},
     'RAID level JBOD is not supported by the driver'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'interface_type': 'scsi'}]},
     'interface type `scsi` not supported by Redfish RAID'),
    ({'logical_disks': [{'size_gb': 'MAX', 'raid_level': '0'}]},
     "'physical_disks' is missing from logical_disk while "
     "'size_gb'='MAX' was requested"),
    ({'logical_disks': [{'size_gb': 900, 'raid_level': '5'}]},
     'no controller has 3 free physical disks'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '1',
                         'controller': 'RAID.Other'}]},
     'has no RAID controller RAID.Other'),
])
def test_a_config_redfish_cannot_build_fails_the_step_untouched(
        server, bmc, target, message):
    node = _node(server, bmc, BAD)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           target, version='1.12')
    assert status == 204, body
    got = _clean(server, node, 'create_configuration')
    assert got['provision_state'] == 'clean failed'
    assert message in got['last_error'], got['last_error']
    assert _volumes(bmc, BAD) == []
    assert not got['raid_config']


@pytest.mark.parametrize('target, message', [
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'is_root_volume': True},
                        {'size_gb': 10, 'raid_level': '0',
                         'is_root_volume': True}]},
     'Raid config cannot have more than one root volume. 2 root volumes '
     'were specified'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'wheels': 4}]},
     'RAID config validation error: Additional properties are not '
     'allowed'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '1',
                         'physical_disks': ['Disk.0', 'Disk.1']}]},
     "RAID config validation error: 'controller' is a dependency of "
     "'physical_disks'"),
])
def test_a_target_breaking_the_schema_is_refused(server, bmc, target,
                                                 message):
    node = _node(server, bmc, BAD)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           target, version='1.12')
    assert status == 400, body
    assert message in body['error_message']
    _, got = bs.http(server, 'GET', '/v1/nodes/%s' % node, version='1.12')
    assert got['target_raid_config'] == {}
