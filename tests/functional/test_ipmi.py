"""The ipmi hardware type against a virtual IPMI BMC (pyghmi's BMC server
classes, its own process, UDP on loopback), driven over the REST API with
openstacksdk and plain HTTP, checking the BMC's own state."""

import json
import threading
import time

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('ipmi')
    svc = bs.start(tmp)
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture
def bmc(tmp_path):
    b = fixtures.IPMIBMC(tmp_path)
    yield b
    b.stop()


def test_power_boot_device_and_nmi_reach_the_bmc(server, bmc):
    conn = bs.sdk(server)
    n = bs.create(server, driver='ipmi', name='ipmi-1',
                  driver_info=bmc.driver_info())
    assert n['power_interface'] == 'ipmi'
    assert n['management_interface'] == 'ipmi'
    assert n['driver_info']['ipmi_password'] == '******'
    assert n['driver_info']['ipmi_username'] == 'admin'

    status, v = bs.http(server, 'GET', '/v1/nodes/ipmi-1/validate')
    assert v['power']['result'] is True, v
    assert v['management']['result'] is True, v

    conn.baremetal.set_node_provision_state('ipmi-1', 'manage', wait=True,
                                            timeout=30)
    assert bs.node(server, 'ipmi-1')['power_state'] == 'power off'

    conn.baremetal.set_node_power_state('ipmi-1', 'power on', wait=True,
                                        timeout=30)
    assert bmc.state['power'] == 'on'
    assert bs.node(server, 'ipmi-1')['power_state'] == 'power on'

    conn.baremetal.set_node_power_state('ipmi-1', 'power off', wait=True,
                                        timeout=30)
    assert bmc.state['power'] == 'off'

    conn.baremetal.set_node_power_state('ipmi-1', 'rebooting', wait=True,
                                        timeout=30)
    assert bmc.state['power'] == 'on'
    conn.baremetal.set_node_power_state('ipmi-1', 'soft power off',
                                        wait=True, timeout=30)
    assert bmc.state['power'] == 'off'
    assert bs.node(server, 'ipmi-1')['last_error'] is None

    conn.baremetal.set_node_boot_device('ipmi-1', 'pxe', persistent=True)
    assert (bmc.state['bootdev'], bmc.state['persistent']) == \
        ('network', True)
    status, got = bs.http(server, 'GET',
                          '/v1/nodes/ipmi-1/management/boot_device')
    assert got == {'boot_device': 'pxe', 'persistent': True}
    conn.baremetal.set_node_boot_device('ipmi-1', 'disk')
    assert (bmc.state['bootdev'], bmc.state['persistent']) == ('hd', False)
    status, got = bs.http(
        server, 'GET', '/v1/nodes/ipmi-1/management/boot_device/supported')
    assert set(got['supported_boot_devices']) >= {'pxe', 'disk', 'cdrom',
                                                  'bios', 'safe'}

    status, body = bs.http(server, 'PUT',
                           '/v1/nodes/ipmi-1/management/boot_device',
                           {'boot_device': 'floppy-disk'})
    assert status == 400 and 'floppy-disk' in body['error_message'], body

    status, _ = bs.http(server, 'PUT',
                        '/v1/nodes/ipmi-1/management/inject_nmi', {},
                        version='1.29')
    assert status == 204
    assert bmc.state['nmi'] == 1


def test_power_reads_and_actions_are_chassis_commands_only(server, bmc):
    """A power state read is one Get Chassis Status and a power action
    one Chassis Control besides the reads: no Get Device ID each time
    (pyghmi's get_power/set_power ask for it on every new session
    object, which doubled the power sync's traffic to each BMC)."""
    conn = bs.sdk(server)
    n = bs.create(server, driver='ipmi', driver_info=bmc.driver_info())
    conn.baremetal.set_node_provision_state(n['uuid'], 'manage', wait=True,
                                            timeout=30)
    before = bmc.state.get('kinds', {})
    for target in ('power on', 'power off'):
        conn.baremetal.set_node_power_state(n['uuid'], target, wait=True,
                                            timeout=30)
    after = bmc.state['kinds']
    sent = {k: v - before.get(k, 0) for k, v in after.items()
            if v != before.get(k, 0)}
    # netfn/command: 00/01 Get Chassis Status, 00/02 Chassis Control
    assert '06/01' not in sent, sent
    assert sent['00/02'] == 2, sent
    assert sent['00/01'] >= 2, sent
    assert bmc.state['power'] == 'off'
    assert bs.node(server, n['uuid'])['power_state'] == 'power off'


_MANY_FILES = '''
import json, resource, socket, sys, types
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY and hard < 1200:
    print(json.dumps({'skip': 'open files limited to %d' % hard}))
    sys.exit(0)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
# more files open than select() takes (a busy conductor's)
held = [socket.socket() for _ in range(1100)]
from baremetal.drivers.modules.ipmi import client
node = types.SimpleNamespace(uuid='many-files', driver_info=json.loads(
    sys.argv[1]))
conf = types.SimpleNamespace(ipmi=types.SimpleNamespace(
    kg_key=None, command_retry_timeout=10, min_command_interval=0))
try:
    said = client.BMC(node, conf).call('get power state', client.power_state)
except Exception as e:
    said = repr(e)
print(json.dumps({'power': said, 'highest_fd': held[-1].fileno()}))
'''


def test_ipmi_answers_in_a_process_with_over_1024_files_open(bmc):
    """pyghmi waits on its sockets with select(), which refuses a file
    descriptor of 1024 or more: a conductor that first talks IPMI with
    that many files open got no answer from any IPMI BMC.  The driver's
    BMC client, in a process of its own with 1,100 sockets open, reads
    the power state."""
    import subprocess
    import sys
    run = subprocess.run(
        [sys.executable, '-c', _MANY_FILES, json.dumps(bmc.driver_info())],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    if 'skip' in got:
        pytest.skip(got['skip'])
    assert got['highest_fd'] >= 1024, got
    assert got['power'] == 'off', got


def test_ipmitool_name_carries_over(server, bmc):
    """Ironic node records name the interface ``ipmitool``."""
    conn = bs.sdk(server)
    n = bs.create(server, driver='ipmi', power_interface='ipmitool',
                  management_interface='ipmitool',
                  driver_info=bmc.driver_info())
    conn.baremetal.set_node_provision_state(n['uuid'], 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_power_state(n['uuid'], 'power on', wait=True,
                                        timeout=30)
    assert bmc.state['power'] == 'on'


def test_validate_names_what_is_missing_or_malformed(server):
    n = bs.create(server, driver='ipmi', driver_info={})
    _, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % n['uuid'])
    assert v['power']['result'] is False
    assert 'ipmi_address' in v['power']['reason']

    status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/driver_info/ipmi_address',
         'value': '127.0.0.1'},
        {'op': 'add', 'path': '/driver_info/ipmi_port', 'value': 'sixty'},
        {'op': 'add', 'path': '/driver_info/ipmi_priv_level',
         'value': 'ROOT'}])
    assert status == 200, body
    _, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % n['uuid'])
    assert 'ipmi_port' in v['power']['reason'], v

    # a power request for an invalid node is refused with the reason
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/power'
                           % n['uuid'], {'target': 'power on'})
    assert status == 400 and 'ipmi_port' in body['error_message'], body
    assert bs.node(server, n['uuid'])['power_state'] is None

    # manage fails verification with the same reason; node back in enroll
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
            {'target': 'manage'})
    got = bs.wait_provision(server, n['uuid'], 'enroll')
    assert 'ipmi_port' in got['last_error']


def test_wrong_password_is_a_clear_error(server, bmc):
    n = bs.create(server, driver='ipmi',
                  driver_info=bmc.driver_info(ipmi_password='wrong'))
    started = time.monotonic()
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
            {'target': 'manage'})
    got = bs.wait_provision(server, n['uuid'], 'enroll')
    assert 'password' in got['last_error'].lower(), got['last_error']
    assert 'wrong' not in got['last_error']
    assert time.monotonic() - started < 10

    n2 = bs.create(server, driver='ipmi',
                   driver_info=bmc.driver_info(ipmi_username='nobody'))
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % n2['uuid'],
            {'target': 'manage'})
    got = bs.wait_provision(server, n2['uuid'], 'enroll')
    assert 'unauthorized name' in got['last_error'].lower(), got
    assert bmc.state['power'] == 'off'


def test_dead_bmc_fails_power_and_goes_to_maintenance(server, tmp_path):
    bmc = fixtures.IPMIBMC(tmp_path, name='dying')
    conn = bs.sdk(server)
    n = bs.create(server, driver='ipmi', driver_info=bmc.driver_info())
    conn.baremetal.set_node_provision_state(n['uuid'], 'manage', wait=True,
                                            timeout=30)
    bmc.stop()

    started = time.monotonic()
    status, _ = bs.http(server, 'PUT', '/v1/nodes/%s/states/power'
                        % n['uuid'], {'target': 'power on'})
    assert status == 202
    got = bs.wait_power(server, n['uuid'])
    assert time.monotonic() - started < 20
    assert 'does not answer' in got['last_error'], got['last_error']
    assert got['provision_state'] == 'manageable'

    # the power sync fails twice in a row: maintenance, with the reason
    got = bs.wait(server, n['uuid'], lambda x: x['maintenance'],
                  timeout=60, what='maintenance')
    assert got['fault'] == 'power failure'
    assert 'does not answer' in got['maintenance_reason']
    assert got['power_state'] is None


def test_slow_bmc_keeps_the_api_responsive(server, tmp_path):
    bmc = fixtures.IPMIBMC(tmp_path, name='slow', delay=0.25)
    try:
        conn = bs.sdk(server)
        n = bs.create(server, driver='ipmi', driver_info=bmc.driver_info())
        conn.baremetal.set_node_provision_state(n['uuid'], 'manage',
                                                wait=True, timeout=60)
        # out of the power sync, which this server runs every second:
        # with a BMC this slow and the 8 s command timeout these tests
        # use, a sync read in flight could outlast the power-on's wait
        # for the BMC on a loaded machine (60 s by default)
        status, _ = bs.http(server, 'PUT', '/v1/nodes/%s/maintenance'
                            % n['uuid'], {'reason': 'slow BMC test'})
        assert status == 202
        status, _ = bs.http(server, 'PUT', '/v1/nodes/%s/states/power'
                            % n['uuid'], {'target': 'power on'})
        assert status == 202
        # while the BMC takes its time, the API answers at once
        t = time.monotonic()
        assert bs.node(server, n['uuid'])['target_power_state'] in (
            'power on', None)
        bs.http(server, 'GET', '/v1/nodes')
        assert time.monotonic() - t < 0.5
        got = bs.wait_power(server, n['uuid'], timeout=60)
        assert got['power_state'] == 'power on', got['last_error']
        assert bmc.state['power'] == 'on'
    finally:
        bmc.stop()


def test_request_waiting_on_a_dead_bmc_does_not_hold_up_others(
        server, tmp_path):
    """A synchronous BMC call (GET boot device) blocks its HTTP thread
    until the BMC deadline; the server adds a thread for the requests
    queued behind it instead of making them wait."""
    bmc = fixtures.IPMIBMC(tmp_path, name='gone')
    n = bs.create(server, driver='ipmi', driver_info=bmc.driver_info())
    bmc.stop()
    blocked = []
    t = threading.Thread(target=lambda: blocked.append(bs.http(
        server, 'GET', '/v1/nodes/%s/management/boot_device' % n['uuid'])))
    t.start()
    time.sleep(0.3)
    started = time.monotonic()
    for _ in range(5):
        status, _ = bs.http(server, 'GET', '/v1/nodes?limit=5')
        assert status == 200
    assert time.monotonic() - started < 1.5
    assert t.is_alive(), 'the BMC call was expected to still be waiting'
    t.join(30)
    status, body = blocked[0]
    assert status >= 400 and 'does not answer' in json.dumps(body), body
