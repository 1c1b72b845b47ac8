"""The redfish hardware type against the sushy-tools Redfish emulator
(its own process, HTTP with basic auth on loopback), driven over the
REST API with openstacksdk and plain HTTP, checking the emulator's own
state."""

import time
import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

SYSTEMS = [
    {'uuid': str(uuid.uuid4()), 'name': 'sys-%d' % i, 'power_state': 'Off',
     'external_notifier': False, 'memory_gib': 8, 'cpus': 4,
     'disks': [40, 20], 'nics': [
         {'mac': '52:54:00:12:34:%02x' % (i * 2 + 1), 'ip': '10.0.0.%d' % i},
         {'mac': '52:54:00:12:34:%02x' % (i * 2 + 2), 'ip': '10.0.1.%d' % i}]}
    for i in range(4)]


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('redfish')
    svc = bs.start(tmp)
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'), SYSTEMS)
    yield b
    b.stop()


def _enroll(server, bmc, system, **info):
    n = bs.create(server, driver='redfish',
                  driver_info=bmc.driver_info(system['uuid'], **info))
    return n['uuid']


def test_power_and_boot_device_reach_the_bmc(server, bmc):
    sys0 = SYSTEMS[0]
    conn = bs.sdk(server)
    node = _enroll(server, bmc, sys0)
    got = bs.node(server, node)
    assert got['driver_info']['redfish_password'] == '******'
    assert (got['power_interface'], got['management_interface'],
            got['bios_interface'], got['inspect_interface']) == \
        ('redfish',) * 4
    _, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
    assert all(v[i]['result'] for i in ('power', 'management', 'bios',
                                        'inspect')), v

    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_power_state(node, 'power on', wait=True,
                                        timeout=30)
    assert bmc.system(sys0['uuid'])['PowerState'] == 'On'
    conn.baremetal.set_node_power_state(node, 'rebooting', wait=True,
                                        timeout=30)
    assert bmc.system(sys0['uuid'])['PowerState'] == 'On'
    conn.baremetal.set_node_power_state(node, 'power off', wait=True,
                                        timeout=30)
    assert bmc.system(sys0['uuid'])['PowerState'] == 'Off'
    assert bs.node(server, node)['last_error'] is None

    conn.baremetal.set_node_boot_device(node, 'pxe', persistent=True)
    boot = bmc.system(sys0['uuid'])['Boot']
    assert (boot['BootSourceOverrideTarget'],
            boot['BootSourceOverrideEnabled']) == ('Pxe', 'Continuous')
    conn.baremetal.set_node_boot_device(node, 'cdrom')
    # the emulator stores the target but always reports "Continuous"
    assert bmc.system(sys0['uuid'])['Boot']['BootSourceOverrideTarget'] \
        == 'Cd'
    _, got = bs.http(server, 'GET',
                     '/v1/nodes/%s/management/boot_device' % node)
    assert got == {'boot_device': 'cdrom', 'persistent': True}
    _, got = bs.http(server, 'GET', '/v1/nodes/%s/management/boot_device/'
                     'supported' % node)
    assert {'pxe', 'disk', 'cdrom'} <= set(got['supported_boot_devices'])


def test_inspection_fills_properties_and_creates_ports(server, bmc):
    sys1 = SYSTEMS[1]
    conn = bs.sdk(server)
    node = _enroll(server, bmc, sys1)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'inspect', wait=True,
                                            timeout=60)
    got = bs.node(server, node)
    assert got['provision_state'] == 'manageable', got['last_error']
    props = got['properties']
    assert props['cpus'] == 4
    assert props['cpu_arch'] == 'x86_64'
    assert props['memory_mb'] == 8192
    assert props['local_gb'] == 19  # the smallest disk, less 1 GiB
    _, ports = bs.http(server, 'GET', '/v1/ports?node=%s' % node)
    assert sorted(p['address'] for p in ports['ports']) == \
        sorted(n['mac'] for n in sys1['nics'])


def test_cleaning_with_a_bios_step_changes_the_bios(server, bmc):
    sys2 = SYSTEMS[2]
    conn = bs.sdk(server)
    node = _enroll(server, bmc, sys2)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    # verification stored the BMC's BIOS settings
    _, bios = bs.http(server, 'GET', '/v1/nodes/%s/bios' % node)
    assert {s['name']: s['value'] for s in bios['bios']}[
        'ProcTurboMode'] == 'Enabled'

    _, steps = bs.http(server, 'GET', '/v1/nodes/%s/states' % node)
    step = {'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': [{'name': 'ProcTurboMode',
                                   'value': 'Disabled'}]}}
    conn.baremetal.set_node_provision_state(node, 'clean',
                                            clean_steps=[step], wait=True,
                                            timeout=60)
    got = bs.node(server, node)
    assert got['provision_state'] == 'manageable', got['last_error']
    assert not got['maintenance'], got['maintenance_reason']
    current = bmc.get('/redfish/v1/Systems/%s/BIOS' % sys2['uuid'])
    assert current['Attributes']['ProcTurboMode'] == 'Disabled'
    assert bmc.system(sys2['uuid'])['PowerState'] == 'On'
    _, bios = bs.http(server, 'GET', '/v1/nodes/%s/bios' % node)
    assert {s['name']: s['value'] for s in bios['bios']}[
        'ProcTurboMode'] == 'Disabled'

    # an unknown setting fails the step with the name in last_error
    bad = {'interface': 'bios', 'step': 'apply_configuration',
           'args': {'settings': [{'name': 'NoSuchKnob', 'value': 'x'}]}}
    status, _ = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                        % node, {'target': 'clean', 'clean_steps': [bad]})
    assert status == 202
    got = bs.wait(server, node,
                  lambda n: n['provision_state'] == 'clean failed')
    assert 'NoSuchKnob' in got['last_error']

    # argsinfo is checked before anything runs
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'manage'})
    bs.wait_provision(server, node, 'manageable')
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'clean', 'clean_steps': [
            {'interface': 'bios', 'step': 'apply_configuration',
             'args': {}}]})
    assert status == 400 and 'settings' in body['error_message'], body


def test_bad_credentials_and_dead_bmc(server, bmc):
    sys3 = SYSTEMS[3]
    node = _enroll(server, bmc, sys3, redfish_password='wrong')
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
            {'target': 'manage'})
    got = bs.wait_provision(server, node, 'enroll')
    assert 'refused the credentials' in got['last_error'], got['last_error']
    assert 'wrong' not in got['last_error']

    dead = bs.create(server, driver='redfish', driver_info={
        'redfish_address': 'http://127.0.0.1:%d' % fixtures.free_port(),
        'redfish_system_id': '/redfish/v1/Systems/x',
        'redfish_username': 'a', 'redfish_password': 'b'})['uuid']
    started = time.monotonic()
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % dead,
            {'target': 'manage'})
    got = bs.wait_provision(server, dead, 'enroll')
    assert time.monotonic() - started < 15
    assert 'cannot reach' in got['last_error'], got['last_error']

    status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % dead, [
        {'op': 'replace', 'path': '/driver_info/redfish_address',
         'value': 'ftp://[bad'}])
    _, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % dead)
    assert v['power']['result'] is False
    assert 'redfish_address' in v['power']['reason']
