"""The direct deploy, conductor side, against a stand-in for the agent:
image info, checksums, config drives, the deploy steps in order."""

import base64
import gzip
import io
import os
import re
import urllib.error
import urllib.request

import pycdlib
import pytest
from oslo_utils import secretutils

from baremetal.db import nodes as db_nodes
from tests import agent_double
from tests import harness
from tests.unit.drivers.test_agent_deploy import MAC, _boot_agent

SHA = 'ab' * 32


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    yield double
    double.stop()


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'deploy.erase_devices_priority': 0,
        'deploy.http_server_port': 0})
    yield h
    h.close()


def _available(api, agent, **ii):
    uuid = api.make_manageable(MAC, deploy_interface='direct',
                               instance_info=ii)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    agent.received.clear()
    return uuid


def _meta_data(configdrive: str) -> bytes:
    iso = pycdlib.PyCdlib()
    iso.open_fp(io.BytesIO(gzip.decompress(base64.b64decode(configdrive))))
    out = io.BytesIO()
    iso.get_file_from_iso_fp(
        out, rr_path='/openstack/latest/meta_data.json')
    return out.getvalue()


def test_deploy_writes_the_image_with_a_built_config_drive(api, agent):
    uuid = _available(api, agent,
                      image_source='http://127.0.0.1:9/disk.raw',
                      image_os_hash_algo='sha256',
                      image_os_hash_value=SHA, image_disk_format='raw')
    api.provision(uuid, 'active', configdrive={
        'meta_data': {'uuid': 'f00d', 'hostname': 'h1'},
        'user_data': '#cloud-config\n'})
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'deploy'
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['power_state'] == 'power on'
    # UEFI (the default boot mode): the agent adds the image's boot
    # entry to the firmware's NVRAM before it is shut down
    assert agent.names() == ['standby.prepare_image',
                             'image.install_bootloader', 'standby.sync']
    assert agent.received[1]['params'] == {
        'root_uuid': None, 'efi_system_part_uuid': None,
        'prep_boot_part_uuid': None, 'target_boot_mode': 'uefi'}
    params = agent.received[0]['params']
    info = params['image_info']
    assert info['urls'] == ['http://127.0.0.1:9/disk.raw']
    assert (info['os_hash_algo'], info['os_hash_value']) == ('sha256', SHA)
    assert info['image_type'] == 'whole-disk-image'
    assert b'"f00d"' in _meta_data(params['configdrive'])
    assert node['instance_info']['configdrive'] == '******'
    assert 'agent_secret_token' not in node['driver_internal_info']


def test_an_image_on_the_conductor_is_served_to_the_agent(
        api, agent, tmp_path):
    image = tmp_path / 'disk.img'
    image.write_bytes(b'x' * 4096)
    uuid = _available(api, agent, image_source='file://%s' % image,
                      image_checksum='sha512:' + 'cd' * 64)
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    agent.polls_until_done = 10**6     # keep it writing: look meanwhile
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'write_image'
    url = agent.received[0]['params']['image_info']['urls'][0]
    assert url.startswith('http://127.0.0.1:')
    # under a name only the agent is told, not one derived from the node
    assert re.search(r'/images/%s-[0-9a-f]{32}\.img$' % uuid, url), url
    with urllib.request.urlopen(url) as resp:
        assert resp.read() == b'x' * 4096
    # withdrawn when the deploy is torn down
    api.provision(uuid, 'deleted')
    api.conductor.workers.wait_idle(10)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url)
    assert e.value.code == 404


def test_a_glance_image_is_served_to_the_agent_without_a_checksum(
        api, agent, monkeypatch):
    """image_source a Glance UUID, nothing else: hash, format and size
    come from Glance, the image from the conductor's cache."""
    from baremetal.drivers.modules import glance_client
    from tests.unit.drivers import test_glance_images as fake
    glance = fake.FakeGlance(fake._image(visibility='private',
                                         owner='p1'))
    monkeypatch.setattr(glance_client, 'get', lambda conf: glance)
    uuid = _available(api, agent, image_source=fake.UUID,
                      project_id='p1')
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    agent.polls_until_done = 10**6
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'write_image'
    info = agent.received[0]['params']['image_info']
    assert info['id'] == fake.UUID and 'glance_image' not in info
    assert (info['os_hash_algo'], info['os_hash_value']) == (
        'sha512', glance.image['os_hash_value'])
    assert re.search(r'/images/%s-[0-9a-f]{32}\.img$' % uuid,
                     info['urls'][0])
    with urllib.request.urlopen(info['urls'][0]) as resp:
        assert resp.read() == fake.DATA
    assert glance.downloads == 1
    ii = node['instance_info']
    assert ii['image_os_hash_value'] == glance.image['os_hash_value']
    assert (ii['image_disk_format'], ii['image_size']) == (
        'raw', len(fake.DATA))
    api.provision(uuid, 'deleted')
    api.conductor.workers.wait_idle(10)


def test_a_glance_image_of_another_project_is_refused_up_front(
        api, agent, monkeypatch):
    from baremetal.drivers.modules import glance_client
    from tests.unit.drivers import test_glance_images as fake
    glance = fake.FakeGlance(fake._image(visibility='private',
                                         owner='p1'))
    monkeypatch.setattr(glance_client, 'get', lambda conf: glance)
    uuid = _available(api, agent, image_source='glance://' + fake.UUID,
                      project_id='p2')
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400, body
    assert 'private image of project p1' in harness.error_message(body)
    assert api.node(uuid)['provision_state'] == 'available'
    assert agent.received == [] and glance.downloads == 0


@pytest.mark.parametrize('how', ['dot-dot', 'symlink', 'system'])
def test_a_local_image_outside_the_allowed_paths_is_refused_up_front(
        api, agent, tmp_path, tmp_path_factory, how):
    secret = tmp_path_factory.mktemp('outside') / 'baremetal.conf'
    secret.write_text('connection = mysql://baremetal:hunter2@db/bm\n')
    os.symlink(secret, tmp_path / 'link.img')
    source = {'dot-dot': 'file://%s/../%s/%s' % (
                  tmp_path, secret.parent.name, secret.name),
              'symlink': str(tmp_path / 'link.img'),
              'system': 'file:///etc/passwd'}[how]
    uuid = _available(api, agent, image_source=source, image_checksum=SHA)
    _, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['deploy']['result'] is False
    for words in ('instance_info image_source',
                  '[conductor]file_url_allowed_paths'):
        assert words in v['deploy']['reason'], v['deploy']
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400, body
    assert '[conductor]file_url_allowed_paths' in \
        harness.error_message(body)
    assert api.node(uuid)['provision_state'] == 'available'
    assert agent.received == []
    assert not (tmp_path / 'httpboot' / 'images').exists()


@pytest.mark.parametrize('ii, words', [
    ({'image_source': 'http://127.0.0.1:9/d'}, 'checksum'),
    ({'image_source': 'http://127.0.0.1:9/d', 'image_checksum': 'a' * 32},
     'md5'),
    ({'image_source': 'http://127.0.0.1:9/d', 'image_checksum': SHA,
      'kernel': 'http://127.0.0.1:9/k'}, 'whole-disk'),
    ({'image_checksum': SHA}, 'image_source'),
    ({'image_source': 'ftp://x/d', 'image_checksum': SHA}, 'ftp'),
])
def test_a_deploy_it_cannot_do_is_refused_up_front(api, agent, ii, words):
    uuid = _available(api, agent, **ii)
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid, {'target': 'active'})
    assert status == 400, body
    assert words in harness.error_message(body)
    node = api.node(uuid)
    assert node['provision_state'] == 'available'
    assert agent.received == []


def test_a_failed_write_fails_the_deploy_and_deleted_recovers(api, agent):
    uuid = _available(api, agent,
                      image_source='http://127.0.0.1:9/disk.raw',
                      image_checksum=SHA)
    agent.fail = {'standby.prepare_image'}
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'deploy failed')
    assert 'deploy.write_image' in node['last_error']
    assert 'the double was told to fail' in node['last_error']
    api.provision(uuid, 'deleted')
    api.wait_for(uuid, 'clean wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'available')
    assert node['instance_info'] == {}


def test_a_bios_node_gets_no_efi_boot_entry(api, agent):
    uuid = _available(api, agent,
                      image_source='http://127.0.0.1:9/disk.raw',
                      image_checksum=SHA)
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/properties/capabilities',
         'value': 'boot_mode:bios'}])
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'active')
    assert agent.names() == ['standby.prepare_image', 'standby.sync']


def test_an_efi_boot_entry_the_agent_cannot_add_does_not_fail_the_deploy(
        api, agent, caplog):
    """As Ironic with whole-disk images: the firmware may still boot
    the disk's removable-media path; the agent's reason is logged."""
    uuid = _available(api, agent,
                      image_source='http://127.0.0.1:9/disk.raw',
                      image_checksum=SHA)
    agent.fail = {'image.install_bootloader'}
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert agent.names() == ['standby.prepare_image',
                             'image.install_bootloader', 'standby.sync']
    assert any('could not add a UEFI boot entry' in r.getMessage() and
               'the double was told to fail' in r.getMessage()
               for r in caplog.records), caplog.text


def test_ipxe_publishes_per_mac_scripts_then_boots_the_disk(api, agent,
                                                           tmp_path):
    kernel, initrd = tmp_path / 'k', tmp_path / 'i'
    kernel.write_bytes(b'kernel')
    initrd.write_bytes(b'initrd')
    n = api.create_node(deploy_interface='direct', boot_interface='ipxe',
                        driver_info={'deploy_kernel': str(kernel),
                                     'deploy_ramdisk': 'file://%s' % initrd,
                                     'kernel_append_params': 'console=ttyS0'},
                        instance_info={'image_source': 'http://127.0.0.1:9/d',
                                       'image_checksum': SHA})
    uuid = n['uuid']
    status, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['boot']['result'] is False and 'pxe_enabled' in \
        v['boot']['reason']
    api.request('POST', '/v1/ports', {'address': MAC, 'node_uuid': uuid})
    status, v, _ = api.request('GET', '/v1/nodes/%s/validate' % uuid)
    assert v['boot']['result'] is True, v
    api.provision(uuid, 'manage')
    api.wait_for(uuid, 'manageable')
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    root = tmp_path / 'httpboot'
    boot = (root / 'boot.ipxe').read_text()
    assert '${netX/mac:hexhyp}.ipxe' in boot
    script = (root / 'ipxe' / ('%s.ipxe' % MAC.replace(':', '-'))
              ).read_text()
    assert script.startswith('#!ipxe')
    assert 'ipa-api-url=' in script and 'console=ttyS0' in script
    assert 'BOOTIF=${mac}' in script
    base = script.split('kernel ', 1)[1].split('/ipxe/')[0]
    with urllib.request.urlopen('%s/ipxe/%s/kernel' % (base, uuid)) as r:
        assert r.read() == b'kernel'
    assert api.node(uuid)['driver_internal_info']['fake_boot_device'] == \
        {'boot_device': 'pxe', 'persistent': False}
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    # the agent is shut down: nothing left to network-boot
    assert not (root / 'ipxe' / ('%s.ipxe' % MAC.replace(':', '-'))
                ).exists()
    assert not (root / 'ipxe' / uuid / 'kernel').exists()


def test_agent_rescue_hands_the_password_to_the_agent(api, agent):
    uuid = _available(api, agent, image_source='http://127.0.0.1:9/d',
                      image_checksum=SHA)
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'replace', 'path': '/rescue_interface', 'value': 'agent'}])
    # a rescue refused (not a state to rescue from) saves no password
    api.provision(uuid, 'rescue', expect=400, rescue_password='n0pe')
    assert 'rescue_password' not in (
        db_nodes.get_node(uuid)['instance_info'] or {})
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    _boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'active')
    agent.received.clear()
    api.provision(uuid, 'rescue', rescue_password='s3cret-rescue')
    # saved when the rescue starts (a conductor that takes the node over
    # rescues it with it), masked in the API
    assert db_nodes.get_node(uuid)['instance_info'][
        'rescue_password'] == 's3cret-rescue'
    api.wait_for(uuid, 'rescue wait')
    _boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'rescue')
    assert agent.names() == ['rescue.finalize_rescue']
    # the agent gets a crypt(3) SHA-256 hash of the password, never the
    # password itself
    params = agent.received[0]['params']
    assert params['hashed'] is True
    sent = params['rescue_password']
    assert sent.startswith('$5$') and 's3cret-rescue' not in sent
    assert secretutils.crypt_password('s3cret-rescue', sent) == sent
    assert 's3cret-rescue' not in repr(node)
    api.provision(uuid, 'unrescue')
    node = api.wait_for(uuid, 'active')
    assert node['power_state'] == 'power on'
    assert 'rescue_password' not in node['instance_info']
    assert 'hashed_rescue_password' not in node['instance_info']

