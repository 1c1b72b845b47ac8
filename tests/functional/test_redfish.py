"""The redfish hardware type against the sushy-tools Redfish emulator
(its own process, HTTP with basic auth on loopback), driven over the
REST API with openstacksdk and plain HTTP, checking the emulator's own
state."""

import functools
import http.server
import threading
import time
import uuid

import pytest

from tests import agent_double
from tests.bmc import fixtures
from tests.functional import bmc_server as bs
from tests.functional import processes

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


# manual cleaning without the ramdisk
NO_RAMDISK = '1.70'


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
    # verification, and the power sync (every second here), also read
    # the system's Status.Health (API 1.109); its change is recorded in
    # the history once
    deadline = time.monotonic() + 15
    while bs.http(server, 'GET', '/v1/nodes/%s' % node,
                  version='1.109')[1]['health'] != 'OK':
        assert time.monotonic() < deadline, 'health never read'
        time.sleep(0.2)
    _, events = bs.http(server, 'GET', '/v1/nodes/%s/history?detail=true'
                        % node, version='1.115')
    health = [e for e in events['history'] if e['event_type'] ==
              'monitoring']
    assert len(health) == 1, events
    assert health[0]['severity'] == 'INFO'
    assert "health='OK'" in health[0]['event']
    assert 'health' not in bs.http(server, 'GET', '/v1/nodes/%s' % node,
                                   version='1.108')[1]


def test_inspection_fills_properties_and_creates_ports(server, bmc):
    sys1 = SYSTEMS[1]
    conn = bs.sdk(server)
    node = _enroll(server, bmc, sys1)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    # an inspection rule (1.96) that tags machines with four CPUs
    status, rule = bs.http(server, 'POST', '/v1/inspection_rules', {
        'conditions': [{'op': 'eq', 'args': {
            'values': ['{inventory[cpu][count]}', '4']}}],
        'actions': [{'op': 'add-trait', 'args': {'name': 'CUSTOM_4CPU'}}]},
        version='1.96')
    assert status == 201, rule
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
    _, traits = bs.http(server, 'GET', '/v1/nodes/%s/traits' % node)
    assert traits['traits'] == ['CUSTOM_4CPU']
    # what the BMC told is the node's inventory (1.81)
    status, inv = bs.http(server, 'GET', '/v1/nodes/%s/inventory' % node,
                          version='1.81')
    assert status == 200, inv
    assert inv['inventory']['cpu'] == {'count': 4,
                                       'architecture': 'x86_64'}
    assert sorted(i['mac_address'] for i in inv['inventory'][
        'interfaces']) == sorted(n['mac'] for n in sys1['nics'])
    bs.http(server, 'DELETE', '/v1/inspection_rules/%s' % rule['uuid'],
            version='1.96')


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

    # the BMC's step alone: no ramdisk (API 1.70), so no agent to wait
    # for (the node keeps the agent deploy; the fake one is refused here)
    step = {'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': [{'name': 'ProcTurboMode',
                                   'value': 'Disabled'}]}}
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': 'clean', 'clean_steps': [step],
                                    'disable_ramdisk': True},
                           version=NO_RAMDISK)
    assert status == 202, body
    got = bs.wait(server, node, lambda n: n['provision_state'] in (
        'manageable', 'clean failed') and not n['reservation'],
        timeout=60, what='end of cleaning')
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
                        % node, {'target': 'clean', 'clean_steps': [bad],
                                 'disable_ramdisk': True},
                        version=NO_RAMDISK)
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


def test_bios_step_in_a_deploy_template_waits_in_deploy_wait(server, bmc):
    """A deploy template (traits) runs bios.apply_configuration during
    deployment; the node waits in deploy wait until the BMC applied it.
    The ramdisk deploy boots nothing here (the fake boot): a stand-in
    answers for its agent."""
    system = SYSTEMS[0]
    conn = bs.sdk(server)
    status, body = bs.http(server, 'POST', '/v1/deploy_templates', {
        'name': 'CUSTOM_NO_TURBO', 'steps': [
            {'interface': 'bios', 'step': 'apply_configuration',
             'priority': 90, 'args': {'settings': [
                 {'name': 'ProcTurboMode', 'value': 'Disabled'},
                 {'name': 'NicBoot1', 'value': 'Disabled'}]}}]})
    assert status == 201, body
    node = bs.create(server, driver='redfish', deploy_interface='ramdisk',
                     driver_info=bmc.driver_info(system['uuid']),
                     # API 1.47; the BMC is under test, not the agent
                     automated_clean=False)['uuid']
    bs.http(server, 'PUT', '/v1/nodes/%s/traits' % node,
            {'traits': ['CUSTOM_NO_TURBO']})
    # what Nova passes from the flavor's required traits
    bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/instance_info/traits',
         'value': ['CUSTOM_NO_TURBO']}])
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'provide', wait=True,
                                            timeout=30)
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
            {'target': 'active'})
    bs.wait(server, node, lambda n: n['provision_state'] == 'wait call-back'
            and (n['deploy_step'] or {}).get('step') == 'deploy',
            what='the ramdisk boot')
    agent = agent_double.AgentDouble()
    try:
        bs.agent_checks_in(server, node, agent)
        got = bs.wait(server, node, lambda n: n['provision_state'] in (
            'active', 'deploy failed'), timeout=60, what='end of deployment')
    finally:
        agent.stop()
    assert got['provision_state'] == 'active', got['last_error']
    # the change feed has every state the node went through (polling the
    # node could miss a short wait on a loaded machine)
    waited = bs.steps_waited_in(server, node)
    assert waited == ['deploy', 'apply_configuration'], waited
    attrs = bmc.get('/redfish/v1/Systems/%s/BIOS' % system['uuid'])[
        'Attributes']
    assert (attrs['ProcTurboMode'], attrs['NicBoot1']) == \
        ('Disabled', 'Disabled')
    _, bios = bs.http(server, 'GET', '/v1/nodes/%s/bios' % node)
    assert {s['name']: s['value'] for s in bios['bios']}['NicBoot1'] == \
        'Disabled'


def test_boot_mode_requested_by_the_node_goes_with_the_boot_device(
        server, bmc):
    system = SYSTEMS[3]
    conn = bs.sdk(server)
    n = bs.create(server, driver='redfish',
                  driver_info=bmc.driver_info(system['uuid']),
                  properties={'capabilities': 'boot_mode:bios'})
    conn.baremetal.set_node_provision_state(n['uuid'], 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_boot_device(n['uuid'], 'pxe')
    boot = bmc.system(system['uuid'])['Boot']
    assert (boot['BootSourceOverrideTarget'],
            boot['BootSourceOverrideMode']) == ('Pxe', 'Legacy')

    bs.http(server, 'PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'replace', 'path': '/properties/capabilities',
         'value': 'boot_mode:uefi'}])
    conn.baremetal.set_node_boot_device(n['uuid'], 'disk')
    boot = bmc.system(system['uuid'])['Boot']
    assert (boot['BootSourceOverrideTarget'],
            boot['BootSourceOverrideMode']) == ('Hdd', 'UEFI')


def test_slow_bmc_power_change_is_waited_for(server, tmp_path):
    """The BMC accepts a power change but the server follows 2 s later:
    the node shows the target meanwhile, the API stays responsive, and
    the change completes."""
    system = dict(SYSTEMS[0], uuid=str(uuid.uuid4()))
    slow = fixtures.RedfishBMC(tmp_path, [system], power_delay=2.0,
                               name='slow')
    try:
        node = _enroll(server, slow, system)
        bs.sdk(server).baremetal.set_node_provision_state(
            node, 'manage', wait=True, timeout=30)
        bs.http(server, 'PUT', '/v1/nodes/%s/states/power' % node,
                {'target': 'power on'})
        t = time.monotonic()
        assert bs.node(server, node)['target_power_state'] == 'power on'
        bs.http(server, 'GET', '/v1/nodes/detail')
        assert time.monotonic() - t < 1
        got = bs.wait_power(server, node, timeout=30)
        assert got['power_state'] == 'power on', got['last_error']
        assert time.monotonic() - t >= 1.5
        assert slow.system(system['uuid'])['PowerState'] == 'On'
    finally:
        slow.stop()


def test_virtual_media_attach_list_detach_on_the_bmc(server, bmc, tmp_path):
    """API 1.89/1.93 with image_download_source=http: the BMC itself
    fetches the image from its URL (a loopback file server here)."""
    (tmp_path / 'tools.iso').write_bytes(b'\0' * 2048)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path))
    files = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=files.serve_forever, daemon=True).start()
    try:
        node = _enroll(server, bmc, SYSTEMS[3])
        url = 'http://127.0.0.1:%d/tools.iso' % files.server_address[1]
        status, body = bs.http(server, 'POST', '/v1/nodes/%s/vmedia' % node,
                               {'device_type': 'cdrom', 'image_url': url,
                                'image_download_source': 'http'},
                               version='1.95')
        assert status == 204, body
        # a worker fetches and inserts it (slow on a loaded machine)
        deadline = time.monotonic() + 60
        while True:
            status, media = bs.http(server, 'GET',
                                    '/v1/nodes/%s/vmedia' % node,
                                    version='1.95')
            assert status == 200, media
            cds = [m for m in media if 'CD' in m['media_types'] or
                   'DVD' in m['media_types']]
            if cds and cds[0]['inserted']:
                break
            assert time.monotonic() < deadline, (
                media, bs.node(server, node)['last_error'])
            time.sleep(0.2)
        assert cds[0]['image'] == url
        assert bs.node(server, node)['last_error'] is None
        status, body = bs.http(server, 'DELETE',
                               '/v1/nodes/%s/vmedia' % node, version='1.95')
        assert status == 204, body
        status, media = bs.http(server, 'GET', '/v1/nodes/%s/vmedia' % node,
                                version='1.95')
        assert not any(m['inserted'] for m in media), media
    finally:
        files.shutdown()
        files.server_close()


def _inserted(server, node, url_part):
    deadline = time.monotonic() + 60
    while True:
        status, media = bs.http(server, 'GET', '/v1/nodes/%s/vmedia' % node,
                                version='1.95')
        assert status == 200, media
        if any(m['inserted'] and url_part in (m['image'] or '')
               for m in media):
            return
        assert time.monotonic() < deadline, (
            media, bs.node(server, node)['last_error'])
        time.sleep(0.2)


def test_local_virtual_media_images_are_evicted_once_withdrawn(
        bmc, tmp_path):
    """image_download_source=local with [conductor]image_cache_size = 1
    (MiB) and images of 0.6 MiB: an image a BMC is being served stays in
    the image cache past the size; once detached, the next fetch evicts
    it, and the one still attached stays."""
    site = tmp_path / 'site'
    site.mkdir()
    for name in ('a', 'b', 'c'):
        (site / (name + '.iso')).write_bytes(name.encode() * 600 * 1024)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(site))
    files = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=files.serve_forever, daemon=True).start()
    conf = bs.conf(tmp_path)
    conf['conductor']['image_cache_size'] = 1
    conf.setdefault('deploy', {})['http_server_port'] = 0
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    cache = tmp_path / 'images'

    def attach(node, name):
        status, body = bs.http(svc, 'POST', '/v1/nodes/%s/vmedia' % node, {
            'device_type': 'cdrom', 'image_download_source': 'local',
            'image_url': 'http://127.0.0.1:%d/%s.iso' % (
                files.server_address[1], name)}, version='1.95')
        assert status == 204, body
        _inserted(svc, node, '/vmedia/%s-cdrom.img' % node)

    def cached():
        return sorted(p.read_bytes()[:1].decode() for p in cache.iterdir()
                      if '.' not in p.name and not p.name.startswith('tmp'))
    try:
        first = _enroll(svc, bmc, SYSTEMS[2])
        second = _enroll(svc, bmc, SYSTEMS[3])
        attach(first, 'a')
        attach(second, 'b')
        # 1.2 MiB, both served to a BMC: both kept
        assert cached() == ['a', 'b']
        status, body = bs.http(svc, 'DELETE', '/v1/nodes/%s/vmedia' % first,
                               version='1.95')
        assert status == 204, body
        attach(first, 'c')
        # a was withdrawn and is the least recently used: it goes
        assert cached() == ['b', 'c']
    finally:
        files.shutdown()
        files.server_close()
        assert svc.stop() == 0, svc.log()
