"""The agent token of a virtual-media boot travels on the boot ISO, not
through the lookup: a host on the provisioning network that knows the
node's MAC address learns nothing by looking it up, however often, and
a burst of lookups never touches the node's lock.  Against a real
baremetal-server with the ``redfish`` driver and the sushy-tools
emulator as the BMC (it fetches the ISO as a real BMC does); the tests'
agent double plays the ramdisk with the token it finds on the ISO."""

import concurrent.futures
import io
import os
import re
import time
import urllib.error
import urllib.request
import uuid

import pytest

from tests import agent_double
from tests.bmc import fixtures
from tests.functional import bmc_server as bs
from tests.functional import processes

ISOLINUX = ('/usr/lib/ISOLINUX/isolinux.bin',
            '/usr/lib/syslinux/modules/bios/ldlinux.c32')
MAC = '52:54:00:aa:bb:01'
SYSTEM = {'uuid': str(uuid.uuid4()), 'name': 'vmedia-token',
          'power_state': 'Off', 'external_notifier': False,
          'nics': [{'mac': MAC, 'ip': '10.0.0.1'}]}

pytestmark = pytest.mark.skipif(
    not all(os.path.isfile(p) for p in ISOLINUX),
    reason='isolinux is not installed (tools/install-vm-deps installs it)')


@pytest.fixture(scope='module')
def bed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('vmediatoken')
    images = tmp / 'images'
    images.mkdir()
    (images / 'kernel').write_bytes(b'kernel' * 1000)
    (images / 'initramfs').write_bytes(b'initramfs' * 1000)
    conf = processes.base_conf(
        tmp,
        conductor={'check_provision_state_interval': 1,
                   'async_step_poll_interval': 1,
                   'sync_power_state_interval': 600,
                   'clean_callback_timeout': 120,
                   'file_url_allowed_paths': [str(images)]},
        deploy={'http_server_host': '127.0.0.1',
                'http_root': str(tmp / 'httpboot'),
                'erase_devices_priority': 0},
        redfish={'connection_attempts': 1, 'connection_retry_interval': 0,
                 'power_poll_interval': 0},
        agent={'command_poll_max_interval': 0.5})
    conf['DEFAULT'].update({
        'enabled_hardware_types': ['redfish'],
        'enabled_power_interfaces': ['redfish'],
        'enabled_management_interfaces': ['redfish'],
        'enabled_boot_interfaces': ['redfish-virtual-media'],
        'enabled_deploy_interfaces': ['direct'],
        'enabled_bios_interfaces': ['no-bios'],
        'enabled_inspect_interfaces': ['no-inspect'],
        'isolinux_bin': ISOLINUX[0], 'ldlinux_c32': ISOLINUX[1],
    })
    server = processes.Service('baremetal-server', tmp, 'server', conf,
                               port=processes.free_port())
    bmc = fixtures.RedfishBMC(tmp, [SYSTEM])
    try:
        server.start()
        yield server, bmc, images
    finally:
        try:
            assert server.stop() == 0, server.log()
        finally:
            bmc.stop()


def _lookup(server):
    return bs.http(server, 'GET', '/v1/lookup?addresses=%s' % MAC,
                   version='1.62')


def _cd(bmc) -> dict:
    return bmc.get('/redfish/v1/Systems/%s/VirtualMedia/Cd'
                   % SYSTEM['uuid'])


def _get(url) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _iso_command_line(url) -> str:
    import pycdlib
    with urllib.request.urlopen(url, timeout=10) as r:
        data = r.read()
    iso = pycdlib.PyCdlib()
    iso.open_fp(io.BytesIO(data))
    out = io.BytesIO()
    iso.get_file_from_iso_fp(out, iso_path='/ISOLINUX/ISOLINUX.CFG;1')
    iso.close()
    return out.getvalue().decode()


def test_the_token_is_on_the_iso_and_no_lookup_hands_it_out(bed):
    server, bmc, images = bed
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(
                         SYSTEM['uuid'],
                         deploy_kernel=str(images / 'kernel'),
                         deploy_ramdisk=str(images / 'initramfs')))['uuid']
    status, body = bs.http(server, 'POST', '/v1/ports',
                           {'node_uuid': node, 'address': MAC})
    assert status == 201, body
    for target, state in (('manage', 'manageable'), ('provide', None)):
        status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/'
                               'provision' % node, {'target': target})
        assert status == 202, body
        if state:
            bs.wait_provision(server, node, state)
    bs.wait(server, node, lambda n: n['provision_state'] == 'clean wait',
            timeout=60, what='clean wait')

    # the BMC was handed an ISO under a name nobody can guess
    url = _cd(bmc)['Image']
    assert re.search(r'/vmedia/%s-[A-Za-z0-9_-]{32}\.iso$' % node, url), url
    assert _get(url.rsplit('-', 1)[0] + '.iso') == 404
    found = re.search(r'ipa-agent-token=(\S+)', _iso_command_line(url))
    assert found, 'no token on the ISO'
    token = found.group(1)

    # any host that knows the MAC: 200 lookups in about a second, all
    # answered, none with the token, none through the node's lock
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        started = time.monotonic()
        answers = list(pool.map(lambda _: _lookup(server), range(200)))
        took = time.monotonic() - started
    print('200 lookups: %.2f s' % took)
    assert {s for s, _ in answers} == {200}, answers[:3]
    assert {b['config']['agent_token'] for _, b in answers} == {'******'}
    assert {b['node']['uuid'] for _, b in answers} == {node}
    log = server.log(tail=None)
    assert 'agent lookup' not in log and token not in log

    # the ramdisk has the token from its command line: its heartbeat is
    # accepted, and the ISO is withdrawn at once
    agent = agent_double.AgentDouble(token)
    try:
        status, body = bs.http(server, 'POST', '/v1/heartbeat/%s' % node,
                               {'callback_url': agent.url,
                                'agent_token': token,
                                'agent_version': '13.0.0'}, version='1.62')
        assert status == 202, body
        assert _get(url) == 404
        # an impostor's heartbeat is refused
        status, body = bs.http(server, 'POST', '/v1/heartbeat/%s' % node,
                               {'callback_url': 'http://127.0.0.1:1',
                                'agent_token': '******'}, version='1.62')
        assert status == 401, body
        # cleaning goes on with the agent that had the token
        n = bs.wait_provision(server, node, 'available', timeout=60)
        assert n['last_error'] is None
        assert any('erase_devices_metadata' in name
                   for name in agent.names()), agent.names()
    finally:
        agent.stop()
    # the token went with the boot; nothing of it is published
    left = os.listdir(os.path.join(server_http_root(bed), 'vmedia'))
    assert not [f for f in left if f.startswith(node)], left
    assert token not in server.log(tail=None)


def server_http_root(bed) -> str:
    return bed[2].parent / 'httpboot'
