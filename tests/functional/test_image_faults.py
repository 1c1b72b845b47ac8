"""An image server that misbehaves while the conductor fetches the
agent's kernel and ramdisk into its image cache (the ``ipxe`` boot
interface; ``redfish-virtual-media`` fetches them the same way): bytes
that do not match the checksum, a body that stops half way or trickles
without end, a server that never answers.  Cleaning and deployment fail
with the URL and the reason within [DEFAULT]webserver_connection_timeout
/ image_download_timeout, nothing wrong stays in the cache, no lock is
left and the server serves other nodes."""

import hashlib
import os
import time

import pytest

from tests.bmc import hostile
from tests.functional import bmc_server as bs
from tests.functional import processes

STALL_TIMEOUT = 2
DOWNLOAD_TIMEOUT = 4
BUDGET = STALL_TIMEOUT + DOWNLOAD_TIMEOUT + 15

KERNEL = os.urandom(64 * 1024)
SHA256 = hashlib.sha256(KERNEL).hexdigest()

CASES = {
    'wrong': 'does not match: expected sha256 %s' % SHA256,
    'stall': 'sent nothing for %d seconds ([DEFAULT]'
             'webserver_connection_timeout)' % STALL_TIMEOUT,
    'hang': 'sent nothing for %d seconds ([DEFAULT]'
            'webserver_connection_timeout)' % STALL_TIMEOUT,
    'trickle': 'not complete after %d seconds ([DEFAULT]'
               'image_download_timeout' % DOWNLOAD_TIMEOUT,
    'truncate': 'the connection broke before the whole image arrived',
}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('imagefaults')
    conf = processes.base_conf(
        tmp, conductor={'check_provision_state_interval': 1,
                        'automated_clean': 'false'},
        deploy={'http_server_port': 0})
    conf['DEFAULT'].update({
        'enabled_deploy_interfaces': ['fake', 'direct'],
        'enabled_boot_interfaces': ['fake', 'ipxe'],
        'webserver_connection_timeout': STALL_TIMEOUT,
        'image_download_timeout': DOWNLOAD_TIMEOUT,
    })
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    svc.tmp = tmp
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture
def images():
    srv = hostile.ImageServer(KERNEL)
    yield srv
    srv.stop()


ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]


def _provision(server, node, target, **extra):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, dict(extra, target=target))
    assert status == 202, body


def _node(server, images, name):
    n = bs.create(server, driver='fake-hardware', deploy_interface='direct',
                  boot_interface='ipxe', driver_info={
                      'deploy_kernel': images.url(name + '.kernel'),
                      'deploy_ramdisk': images.url(name + '.initrd'),
                      'deploy_kernel_checksum': 'sha256:' + SHA256,
                      'deploy_ramdisk_checksum': SHA256},
                  instance_info={
                      'image_source': 'http://127.0.0.1:9/disk.img',
                      'image_os_hash_algo': 'sha256',
                      'image_os_hash_value': 'ab' * 32})
    mac = '52:54:00:%02x:%02x:%02x' % tuple(os.urandom(3))
    status, body = bs.http(server, 'POST', '/v1/ports',
                           {'address': mac, 'node_uuid': n['uuid']})
    assert status == 201, body
    _provision(server, n['uuid'], 'manage')
    bs.wait_provision(server, n['uuid'], 'manageable')
    return n['uuid']


def _ended(server, node, state, timeout):
    return bs.wait(server, node, lambda n: n['provision_state'] == state
                   and n['reservation'] is None, timeout,
                   'provision state %s' % state)


def _cached(server) -> list[str]:
    path = os.path.join(str(server.tmp), 'images')
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def _still_serving(server):
    other = bs.create(server, driver='fake-hardware')['uuid']
    _provision(server, other, 'manage')
    bs.wait_provision(server, other, 'manageable', timeout=10)


@pytest.mark.parametrize('mode', sorted(CASES))
def test_bad_image_server_fails_cleaning_naming_the_url(server, images,
                                                        mode):
    node = _node(server, images, 'clean-' + mode)
    images.mode = mode
    before = _cached(server)
    started = time.monotonic()
    _provision(server, node, 'clean', clean_steps=ERASE)
    got = _ended(server, node, 'clean failed', BUDGET)
    assert time.monotonic() - started < BUDGET
    assert images.url('clean-%s.kernel' % mode) in got['last_error'], \
        got['last_error']
    assert CASES[mode] in got['last_error'], got['last_error']
    # nothing half-fetched or wrong was kept
    assert _cached(server) == before
    _still_serving(server)

    # the server heals: the operator takes the node back and cleans again
    images.mode = 'ok'
    _provision(server, node, 'manage')
    _ended(server, node, 'manageable', 30)
    _provision(server, node, 'clean', clean_steps=ERASE)
    got = _ended(server, node, 'clean wait', 30)
    assert got['last_error'] is None
    assert len(_cached(server)) == len(before) + 4  # 2 images, 2 records
    _provision(server, node, 'abort')
    _ended(server, node, 'clean failed', 30)


@pytest.mark.parametrize('mode', ['wrong', 'stall'])
def test_bad_image_server_fails_deploy(server, images, mode):
    node = _node(server, images, 'deploy-' + mode)
    bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/driver_info/deploy_kernel_checksum',
         'value': 'sha512:' + hashlib.sha512(KERNEL).hexdigest()}])
    _provision(server, node, 'provide')
    _ended(server, node, 'available', 30)
    images.mode = mode
    started = time.monotonic()
    _provision(server, node, 'active')
    got = _ended(server, node, 'deploy failed', BUDGET)
    assert time.monotonic() - started < BUDGET
    assert images.url('deploy-%s.kernel' % mode) in got['last_error'], \
        got['last_error']
    words = CASES[mode].replace('sha256 %s' % SHA256, 'sha512 %s'
                                % hashlib.sha512(KERNEL).hexdigest())
    assert words in got['last_error'], got['last_error']
    assert got['deploy_step'] and got['deploy_step']['step'] == 'deploy'
    _still_serving(server)
    # the operator's way out
    _provision(server, node, 'deleted')
    _ended(server, node, 'available', 30)


def test_a_malformed_checksum_is_refused_before_anything_runs(server,
                                                              images):
    node = _node(server, images, 'malformed')
    status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'replace', 'path': '/driver_info/deploy_ramdisk_checksum',
         'value': 'md5:abc'}])
    assert status == 200, body
    _, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
    assert v['boot']['result'] is False
    assert 'deploy_ramdisk_checksum' in v['boot']['reason'], v['boot']
    # cleaning checks the boot interface in its worker (as Ironic does)
    _provision(server, node, 'clean', clean_steps=ERASE)
    got = _ended(server, node, 'clean failed', 30)
    assert 'deploy_ramdisk_checksum' in got['last_error'], got
    _provision(server, node, 'manage')
    _ended(server, node, 'manageable', 30)
    # a failed clean sets maintenance with the same reason
    status, _ = bs.http(server, 'DELETE', '/v1/nodes/%s/maintenance' % node)
    assert status == 202
    _provision(server, node, 'provide')     # no cleaning: nothing booted
    _ended(server, node, 'available', 30)
    # a deployment is refused up front
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, {'target': 'active'})
    assert status == 400 and 'deploy_ramdisk_checksum' in \
        body['error_message'], body
    assert bs.node(server, node)['provision_state'] == 'available'
    assert images.requests == 0
