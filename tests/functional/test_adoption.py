"""Adoption (API 1.17) as Metal3 uses it after a restart: a host already
running its instance is made ``active`` without the service touching it,
against the sushy-tools Redfish emulator; a failed validation leaves the
node in ``adopt failed`` with the reason, and a second adopt after the
fix succeeds."""

import re
import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

SYSTEMS = [{'uuid': str(uuid.uuid4()), 'name': 'adopt-%d' % i,
            'power_state': 'On', 'external_notifier': False,
            'memory_gib': 8, 'cpus': 2, 'disks': [20],
            'nics': [{'mac': '52:54:00:ad:00:%02x' % i,
                      'ip': '10.0.5.%d' % i}]}
           for i in range(2)]

# the requests that would change the machine: power, boot device,
# virtual media
_CHANGES = re.compile(r'"(POST|PATCH|PUT|DELETE) /redfish/v1/')


PROVISION = '/v1/nodes/%s/states/provision'

@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = bs.start(tmp_path_factory.mktemp('adopt'))
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('adopt-bmc'), SYSTEMS)
    yield b
    b.stop()


def _changes(bmc) -> int:
    return len(_CHANGES.findall(bmc.log()))


def _manageable(server, bmc, system, **fields):
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(system['uuid']),
                     **fields)['uuid']
    st, body = bs.http_unlocked(server, 'PUT', PROVISION % node,
                       {'target': 'manage'})
    assert st == 202, body
    bs.wait_provision(server, node, 'manageable')
    return node


def _adopt(server, node):
    return bs.http_unlocked(server, 'PUT', PROVISION % node,
                   {'target': 'adopt'})


def test_adopt_makes_a_running_host_active_without_touching_it(server,
                                                                bmc):
    system = SYSTEMS[0]
    node = _manageable(server, bmc, system, deploy_interface='direct',
                       instance_info={
                           'image_source': 'http://127.0.0.1:9/disk.img',
                           'image_checksum': 'a' * 32},
                       instance_uuid=str(uuid.uuid4()))
    assert bs.node(server, node)['power_state'] == 'power on'
    before_boot = bmc.system(system['uuid'])['Boot']
    before = _changes(bmc)

    st, body = _adopt(server, node)
    assert st == 202, body
    got = bs.wait_provision(server, node, 'active')
    assert got['last_error'] is None
    assert got['power_state'] == 'power on'
    assert got['target_provision_state'] is None
    # nothing reached the BMC that changes the machine
    assert _changes(bmc) == before, bmc.log()[-2000:]
    sysinfo = bmc.system(system['uuid'])
    assert sysinfo['PowerState'] == 'On'
    assert sysinfo['Boot'] == before_boot

    # an active node cannot be adopted again: Ironic's 400
    st, body = _adopt(server, node)
    assert st == 400, body
    assert 'adopt' in body['error_message']


def test_failed_adoption_says_why_and_can_be_retried(server, bmc):
    """The ramdisk deploy boots its instance through the boot interface,
    which adoption validates (Ironic's rule): without the images the
    virtual-media boot needs, adoption fails with the reason."""
    system = SYSTEMS[1]
    node = _manageable(server, bmc, system, deploy_interface='ramdisk',
                       boot_interface='redfish-virtual-media',
                       instance_info={
                           'boot_iso': 'http://127.0.0.1:9/live.iso'})
    before = _changes(bmc)
    st, body = _adopt(server, node)
    assert st == 202, body
    # a failure state whose target stays active, as in Ironic
    got = bs.wait(server, node,
                  lambda n: n['provision_state'] == 'adopt failed',
                  what='adopt failed')
    assert got['target_provision_state'] == 'active'
    assert got['last_error'].startswith(
        'Error while attempting to adopt node %s: ' % node), got
    assert 'deploy_kernel' in got['last_error'], got['last_error']
    assert _changes(bmc) == before

    # fixed: the images are given, the next adopt succeeds
    st, body = bs.http_unlocked(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/driver_info/deploy_kernel',
         'value': 'http://127.0.0.1:9/ipa.kernel'},
        {'op': 'add', 'path': '/driver_info/deploy_ramdisk',
         'value': 'http://127.0.0.1:9/ipa.initramfs'}])
    assert st == 200, body
    st, body = _adopt(server, node)
    assert st == 202, body
    got = bs.wait_provision(server, node, 'active')
    assert got['last_error'] is None
    assert _changes(bmc) == before
    assert bmc.system(system['uuid'])['PowerState'] == 'On'
