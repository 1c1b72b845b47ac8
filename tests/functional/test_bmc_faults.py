"""BMCs that misbehave on the wire: connections dropped mid-request,
answers that are not JSON or not HTTP, answers that never come (Redfish,
through tests/bmc/hostile.py's TCP endpoint), and IPMI endpoints that
answer garbage or nothing.  Each ends with the node in a stable state
with the reason in last_error, no lock left, within the configured
timeouts, and the server still serving other nodes."""

import time
import uuid

import pytest

from tests.bmc import fixtures
from tests.bmc import hostile
from tests.functional import bmc_server as bs
from tests.functional import processes

# small timeouts so that a silent peer fails fast
REDFISH_TIMEOUT = 3
IPMI_TIMEOUT = 3

SYSTEM = {'uuid': str(uuid.uuid4()), 'name': 'faulty', 'power_state': 'Off',
          'external_notifier': False, 'memory_gib': 1, 'cpus': 1,
          'disks': [10], 'nics': [{'mac': '52:54:00:aa:00:01',
                                   'ip': '10.0.0.1'}]}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('bmcfaults')
    conf = bs.conf(tmp)
    conf['redfish']['connection_timeout'] = REDFISH_TIMEOUT
    conf['ipmi']['command_retry_timeout'] = IPMI_TIMEOUT
    conf['conductor']['power_state_change_timeout'] = 5
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


def _provision(server, node, target):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': target})
    assert status == 202, body


def _settled(server, node, timeout):
    """The node once no provision or power change is in progress, and
    no conductor holds it."""
    return bs.wait(server, node, lambda n: not n['target_provision_state']
                   and n['target_power_state'] is None
                   and n['reservation'] is None,
                   timeout, 'a settled node')


def _manage_then_turn_bad(server, node, proxy, mode, timeout):
    """Manage the node through a passing proxy, turn the proxy to
    ``mode`` and ask for power on: the settled node and the seconds the
    request took to fail."""
    # The passing phase is set-up, not the subject: with the tiny BMC
    # timeouts of this module a machine loaded by the VM tests beside it
    # may miss the first answer (seen once in CI), so manage is tried
    # again then.
    for _ in range(3):
        _provision(server, node, 'manage')
        got = _settled(server, node, timeout=30)
        if got['provision_state'] == 'manageable':
            break
        assert got['provision_state'] == 'enroll', got
    assert got['provision_state'] == 'manageable', got['last_error']
    proxy.mode = mode
    started = time.monotonic()
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/power'
                           % node, {'target': 'power on'})
    assert status == 202, body
    got = _settled(server, node, timeout=timeout)
    return got, time.monotonic() - started


def _still_serving(server):
    """Another node goes through manage at once: no worker is held."""
    t = time.monotonic()
    other = bs.create(server, driver='fake-hardware')['uuid']
    _provision(server, other, 'manage')
    bs.wait_provision(server, other, 'manageable', timeout=10)
    assert time.monotonic() - t < 10


def _redfish_node(server, address):
    return bs.create(server, driver='redfish', driver_info={
        'redfish_address': address,
        'redfish_system_id': '/redfish/v1/Systems/%s' % SYSTEM['uuid'],
        'redfish_username': 'admin', 'redfish_password': 'secret',
        'redfish_auth_type': 'basic'})['uuid']


@pytest.fixture(scope='module')
def redfish_bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('faulty-redfish'),
                            [SYSTEM])
    yield b
    b.stop()


@pytest.mark.parametrize('mode, words', [
    ('close', 'cannot reach'),
    ('garbage', 'not JSON'),
    ('wrongjson', 'not a Redfish resource'),
    ('malformed', 'cannot reach'),
    ('hang', 'cannot reach'),
])
def test_redfish_bmc_misbehaving_fails_verification(server, mode, words):
    fault = hostile.TCPFault(mode)
    try:
        node = _redfish_node(server, fault.url)
        started = time.monotonic()
        _provision(server, node, 'manage')
        got = _settled(server, node, timeout=30)
        elapsed = time.monotonic() - started
        assert got['provision_state'] == 'enroll', got
        assert words in got['last_error'], got['last_error']
        assert fault.url in got['last_error'], got['last_error']
        assert 'secret' not in got['last_error']
        assert elapsed < REDFISH_TIMEOUT * 2 + 10, elapsed
        assert fault.accepted >= 1
        _still_serving(server)
    finally:
        fault.stop()


@pytest.mark.parametrize('mode', ['close', 'garbage', 'wrongjson',
                                  'malformed', 'hang'])
def test_redfish_bmc_turning_bad_fails_power_then_maintenance(
        server, redfish_bmc, mode):
    proxy = hostile.TCPFault('pass', ('127.0.0.1', redfish_bmc.port))
    try:
        node = _redfish_node(server, proxy.url)
        got, took = _manage_then_turn_bad(server, node, proxy, mode, 30)
        assert took < REDFISH_TIMEOUT * 3 + 10
        assert got['last_error'] and proxy.url in got['last_error'], got
        assert got['provision_state'] == 'manageable'

        # the power sync fails in a row: maintenance, with the reason
        got = bs.wait(server, node, lambda x: x['maintenance'],
                      timeout=60, what='maintenance')
        assert got['fault'] == 'power failure'
        assert proxy.url in got['maintenance_reason'], got
        assert got['power_state'] is None
        got = _settled(server, node, timeout=30)
        _still_serving(server)

        # the BMC heals: the operator ends maintenance; power works again
        proxy.mode = 'pass'
        status, _ = bs.http(server, 'DELETE', '/v1/nodes/%s/maintenance'
                            % node)
        assert status == 202
        status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/power'
                               % node, {'target': 'power off'})
        assert status == 202, body
        got = _settled(server, node, timeout=30)
        assert got['power_state'] == 'power off', got['last_error']
    finally:
        proxy.stop()


@pytest.mark.parametrize('mode', ['garbage', 'silent'])
def test_ipmi_bmc_answering_garbage_or_nothing_fails_verification(
        server, mode):
    fault = hostile.UDPFault(mode)
    try:
        node = bs.create(server, driver='ipmi', driver_info={
            'ipmi_address': '127.0.0.1', 'ipmi_port': fault.port,
            'ipmi_username': 'admin', 'ipmi_password': 'pw'})['uuid']
        started = time.monotonic()
        _provision(server, node, 'manage')
        got = _settled(server, node, timeout=30)
        assert time.monotonic() - started < IPMI_TIMEOUT * 2 + 10
        assert got['provision_state'] == 'enroll', got
        assert 'does not answer' in got['last_error'], got['last_error']
        assert fault.received >= 1
        _still_serving(server)
    finally:
        fault.stop()


@pytest.mark.parametrize('mode', ['garbage', 'silent'])
def test_ipmi_bmc_turning_bad_fails_power_then_maintenance(
        server, tmp_path, mode):
    bmc = fixtures.IPMIBMC(tmp_path, name='turning')
    proxy = hostile.UDPFault('pass', ('127.0.0.1', bmc.port))
    try:
        node = bs.create(server, driver='ipmi', driver_info=bmc.driver_info(
            ipmi_port=proxy.port))['uuid']
        got, took = _manage_then_turn_bad(server, node, proxy, mode, 40)
        assert took < IPMI_TIMEOUT * 4 + 10
        assert 'does not answer' in got['last_error'], got['last_error']
        got = bs.wait(server, node, lambda x: x['maintenance'],
                      timeout=60, what='maintenance')
        assert got['fault'] == 'power failure'
        assert 'does not answer' in got['maintenance_reason']
        _settled(server, node, timeout=30)
        _still_serving(server)
    finally:
        proxy.stop()
        bmc.stop()
