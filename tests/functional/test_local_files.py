"""Local files as images, over HTTP against a real baremetal-server:
only files inside [conductor]file_url_allowed_paths are accepted.  A
node naming any other file (a system file, the server's own
configuration, a path that leaves the directory through ".." or a
symbolic link) fails validation naming the field and the option, a
deployment is refused with 400 and the node stays as it was, cleaning
fails before anything boots, and nothing is published under
[deploy]http_root.  A relative item in the option stops the server at
start."""

import os
import urllib.request

import pytest

from tests.functional import bmc_server as bs
from tests.functional import processes

OPTION = '[conductor]file_url_allowed_paths'
ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('localfiles')
    images = tmp / 'images'
    images.mkdir()
    (images / 'ipa.kernel').write_bytes(b'kernel ' * 100)
    (images / 'ipa.initramfs').write_bytes(b'initramfs ' * 100)
    conf = processes.base_conf(
        tmp, conductor={'check_provision_state_interval': 1,
                        'automated_clean': 'false',
                        'file_url_allowed_paths': [str(images)]},
        deploy={'http_server_port': 0})
    conf['DEFAULT'].update({
        'enabled_deploy_interfaces': ['fake', 'direct'],
        'enabled_boot_interfaces': ['fake', 'ipxe'],
    })
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    svc.tmp = tmp
    svc.images = images
    yield svc
    assert svc.stop() == 0, svc.log()


def _provision(server, node, target, **extra):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, dict(extra, target=target))
    assert status == 202, body


def _ended(server, node, state, timeout=30):
    return bs.wait(server, node, lambda n: n['provision_state'] == state
                   and n['reservation'] is None, timeout,
                   'provision state %s' % state)


def _node(server, kernel) -> str:
    n = bs.create(server, driver='fake-hardware', deploy_interface='direct',
                  boot_interface='ipxe', driver_info={
                      'deploy_kernel': kernel,
                      'deploy_ramdisk': str(server.images /
                                            'ipa.initramfs')},
                  instance_info={
                      'image_source': 'http://127.0.0.1:9/disk.img',
                      'image_os_hash_algo': 'sha256',
                      'image_os_hash_value': 'ab' * 32})
    mac = '52:54:00:%02x:%02x:%02x' % tuple(os.urandom(3))
    status, body = bs.http(server, 'POST', '/v1/ports',
                           {'address': mac, 'node_uuid': n['uuid']})
    assert status == 201, body
    _provision(server, n['uuid'], 'manage')
    _ended(server, n['uuid'], 'manageable')
    return n['uuid']


def _published(server) -> dict[str, bytes]:
    root = os.path.join(str(server.tmp), 'httpboot')
    out = {}
    for top, _, names in os.walk(root):
        for name in names:
            path = os.path.join(top, name)
            with open(path, 'rb') as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def _bad_kernel(server, how: str) -> tuple[str, str]:
    """(deploy_kernel, the file it really names)."""
    own_conf = os.path.join(str(server.tmp), 'server', 'bm.conf')
    if how == 'system':
        return '/etc/passwd', '/etc/passwd'
    if how == 'own-config':
        return own_conf, own_conf
    if how == 'dot-dot':
        return ('file://%s/../server/bm.conf' % server.images, own_conf)
    link = server.images / 'escape.kernel'
    if not link.is_symlink():
        os.symlink(own_conf, link)
    return str(link), own_conf


@pytest.mark.parametrize('how', ['system', 'own-config', 'dot-dot',
                                 'symlink'])
def test_a_file_outside_the_allowed_paths_is_refused(server, how):
    kernel, target = _bad_kernel(server, how)
    with open(target, 'rb') as f:
        secret = f.read()
    uuid = _node(server, kernel)
    before = _published(server)

    status, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % uuid)
    assert status == 200, v
    for iface in ('boot', 'deploy'):
        assert v[iface]['result'] is False, v
        assert 'driver_info deploy_kernel' in v[iface]['reason'], v[iface]
        assert OPTION in v[iface]['reason'], v[iface]

    # cleaning validates in its worker (as Ironic does): it fails before
    # anything boots, naming the field and the option
    _provision(server, uuid, 'clean', clean_steps=ERASE)
    got = _ended(server, uuid, 'clean failed')
    assert 'driver_info deploy_kernel' in got['last_error'], got
    assert OPTION in got['last_error'], got
    _provision(server, uuid, 'manage')
    _ended(server, uuid, 'manageable')
    status, _ = bs.http(server, 'DELETE', '/v1/nodes/%s/maintenance' % uuid)
    assert status == 202
    _provision(server, uuid, 'provide')      # no cleaning: nothing booted
    node = _ended(server, uuid, 'available')

    # a deployment is refused before anything changes
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % uuid, {'target': 'active'})
    assert status == 400, body
    assert OPTION in body['error_message'], body
    assert 'driver_info deploy_kernel' in body['error_message'], body
    after = bs.node(server, uuid)
    for field in ('provision_state', 'target_provision_state',
                  'driver_info', 'instance_info', 'power_state',
                  'reservation'):
        assert after[field] == node[field], (field, after[field])

    # nothing was published: no file of the node, nothing holding the
    # file it named
    published = _published(server)
    assert published == before
    assert not [name for name, data in published.items()
                if uuid in name or data == secret]


def test_a_file_inside_the_allowed_paths_is_published(server):
    uuid = _node(server, 'file://%s' % (server.images / 'ipa.kernel'))
    status, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % uuid)
    assert v['boot']['result'] is True, v
    _provision(server, uuid, 'clean', clean_steps=ERASE)
    _ended(server, uuid, 'clean wait')
    published = _published(server)
    name = 'ipxe/%s/kernel' % uuid
    assert published[name] == b'kernel ' * 100
    scripts = [data.decode() for n, data in published.items()
               if n.endswith('.ipxe') and uuid.encode() in data]
    base = scripts[0].split('kernel ', 1)[1].split('/ipxe/')[0]
    with urllib.request.urlopen('%s/%s' % (base, name), timeout=10) as r:
        assert r.read() == b'kernel ' * 100
    _provision(server, uuid, 'abort')
    _ended(server, uuid, 'clean failed')


def test_a_relative_allowed_path_stops_the_server(tmp_path):
    conf = processes.base_conf(tmp_path, conductor={
        'file_url_allowed_paths': ['/srv/baremetal', 'images']})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start(wait=False)
    try:
        assert svc.proc.wait(60) == 1, svc.log()
    finally:
        svc.stop()
    assert OPTION in svc.log() and "'images'" in svc.log(), svc.log()
