"""Verification (``manage`` from ``enroll``) asks a Redfish BMC for what
it needs once: the power state, the health, the BIOS and firmware reads,
the boot mode and the Secure Boot state all look at the node's
ComputerSystem, which a baremetal-server reads twice (the power read's
lean GET, then sushy's System that the others share), not once for each
of them.  The BMC is the fleet's Redfish double (tools/fleet_doubles.py),
which counts what reaches it; the power sync is off so that only the
verification asks."""


import pytest

from tests import fleet as test_fleet
from tests.functional import bmc_server as bs
from tests.functional import processes

fleet_doubles = test_fleet.doubles()


@pytest.fixture
def fleet():
    f = fleet_doubles.RedfishFleet(1)
    yield f
    f.stop()


@pytest.fixture
def server(tmp_path):
    conf = bs.conf(tmp_path)
    conf['conductor']['sync_power_state_interval'] = 0
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


def test_verification_reads_the_computer_system_twice(server, fleet):
    sid = 'sys-00000'
    fleet.systems[sid]['mode'] = 'Legacy'
    node = bs.create(server, driver='redfish', driver_info={
        'redfish_address': fleet.address(sid),
        'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
        'redfish_username': 'admin', 'redfish_password': 'password'})
    st, full = bs.http(server, 'GET', '/v1/nodes/%s' % node['uuid'],
                       version='1.115')
    assert (full['bios_interface'], full['firmware_interface']) == \
        ('redfish', 'redfish'), full
    with fleet.lock:
        before = dict(fleet.by_route)
    st, body = bs.http_unlocked(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node['uuid'],
        {'target': 'manage'})
    assert st == 202, body
    bs.wait_provision(server, node['uuid'], 'manageable', timeout=60)
    st, got = bs.http(server, 'GET', '/v1/nodes/%s' % node['uuid'],
                      version='1.115')
    # what was read is what the node now says
    assert (got['power_state'], got['boot_mode'], got['secure_boot'],
            got['health']) == ('power off', 'bios', False, 'OK')
    with fleet.lock:
        asked = {k: n - before.get(k, 0) for k, n in fleet.by_route.items()
                 if n - before.get(k, 0)}
    # before: one GET of the System for each of the five reads
    assert asked.get('GET /Systems/{}') == 2, asked
    assert asked.get('GET /Systems/{}/SecureBoot') == 1, asked
