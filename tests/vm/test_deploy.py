"""Deploying an operating system on a real (virtual) machine: the
``direct`` deploy interface with ironic-python-agent 13.0.0 writing a
whole-disk image and a config drive, then the machine booting what was
written."""

import functools
import http.server
import os
import shutil
import threading
import time
import uuid as uuidlib

import openstack
import pytest

from tests.vm import api
from tests.vm import bed
from tests.vm import image

pytestmark = bed.MARKS


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve_image(b, build=image.build):
    """The test image (``build``: image.build or image.build_uefi)
    served over HTTP on loopback (the VM reaches it as 10.0.2.2)."""
    root = os.path.join(b.machine.dir, 'images')
    os.makedirs(root)
    sums = build(b.kernel, b.initramfs, os.path.join(root, 'disk.raw'))
    srv = http.server.ThreadingHTTPServer(
        ('127.0.0.1', 0), functools.partial(_Quiet, directory=root))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    sums['url'] = 'http://10.0.2.2:%d/disk.raw' % srv.server_address[1]
    try:
        yield sums
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def image_server(redfish_bed):
    yield from _serve_image(redfish_bed)


@pytest.fixture
def ipmi_image_server(ipmi_bed):
    yield from _serve_image(ipmi_bed)


def _instance_info(img, **extra) -> dict:
    info = {'image_source': img['url'], 'image_disk_format': 'raw',
            'image_os_hash_algo': 'sha256',
            'image_os_hash_value': img['sha256'], 'root_gb': 1}
    info.update(extra)
    return info


def _available(b, enroll=api.enroll_redfish, clean: bool = True) -> str:
    uuid = enroll(b)
    if not clean:
        # the node's own automated_clean (API 1.47): no cleaning now
        api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
            {'op': 'add', 'path': '/automated_clean', 'value': False}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'available', 300)
    return uuid


@pytest.fixture
def glance_image(keystone_redfish_bed):
    """The test image (image.build) in the bed's Glance, a private image
    of project A: Glance's record of it."""
    b = keystone_redfish_bed
    root = os.path.join(b.machine.dir, 'images')
    os.makedirs(root)
    path = os.path.join(root, 'disk.raw')
    image.build(b.kernel, b.initramfs, path)
    with open(path, 'rb') as f:
        data = f.read()
    return b.glance.create_image(
        data, owner=b.keystone.project_id('a'), visibility='private',
        name='vm-test-image')


def _sdk(ks, persona: str, **kw) -> openstack.connection.Connection:
    """openstacksdk as ``persona``: Keystone only, the baremetal service
    from the catalog (its ``interface``: public unless ``kw`` says)."""
    return openstack.connection.Connection(
        **dict(ks.cloud(persona), **kw), baremetal_api_version='1.61')


def test_nova_spawns_and_destroys_an_instance_on_the_machine(
        keystone_redfish_bed, glance_image):
    """Nova's ironic driver call sequence (openstacksdk, as in
    tests/functional/test_nova_path.py) against the real machine, behind
    a real Keystone, the image in a real Glance: as the service user
    (role ``service`` in project ``service``, the service found in the
    catalog) associate the node project A owns with an instance whose
    image_source is the Glance image's UUID, no checksum; validate, VIF,
    deploy with a config drive; the conductor downloads the image from
    Glance once and serves it to the agent over its http_url, the
    machine boots what the agent wrote.  Project A's member then sees
    the instance's node, project B's nothing; servicing runs; destroy
    tears it down."""
    b = keystone_redfish_bed
    ks = b.keystone
    # in-band cleaning is test_agent_cleaning's: the node does not clean
    # on provide nor on destroy (two ramdisk boots less under software
    # emulation)
    uuid = _available(b, clean=False)
    project_a = ks.project_id('a')
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/owner', 'value': project_a}])
    conn = _sdk(ks, 'service', interface='internal')
    node = conn.baremetal.get_node(uuid)
    assert node.owner == project_a
    instance = str(uuidlib.uuid4())
    conn.baremetal.patch_node(node, [
        {'op': 'add', 'path': '/instance_uuid', 'value': instance},
        {'op': 'add', 'path': '/instance_info', 'value': {
            # as Nova's ironic driver fills it: the image by its Glance
            # UUID, Glance's hash used, no checksum here
            'image_source': glance_image['id'], 'root_gb': '1',
            'swap_mb': '0', 'display_name': 'vm-test',
            'vcpus': '1', 'memory_mb': '1024', 'local_gb': '4',
            'capabilities': {}, 'project_id': project_a,
            'nova_host_id': 'compute-vm-test'}}])
    result = conn.baremetal.validate_node(node, required=('deploy',
                                                          'power'))
    assert result['power'].result and result['deploy'].result, result
    vif = str(uuidlib.uuid4())
    conn.baremetal.attach_vif_to_node(node, vif, retry_on_conflict=False)
    started = time.monotonic()
    conn.baremetal.set_node_provision_state(
        node, 'active', config_drive={
            'meta_data': {'uuid': instance, 'name': 'vm-test',
                          'hostname': 'vm-test'},
            'user_data': '#cloud-config\n'})
    phases: dict = {}
    n = api.wait_state(b.server, uuid, 'active', 600, phases=phases)
    took = time.monotonic() - started
    assert n['last_error'] is None
    assert conn.baremetal.get_node(uuid).provision_state == 'active'
    # the machine booted from its disk what the agent wrote there
    b.machine.wait_serial(image.MARKER, 120)
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % instance, 60)
    print(_breakdown(started, took, phases))
    assert api.vmedia(b.bmc)['Inserted'] is False
    # the image came from Glance, once, checked against Glance's hash,
    # through the conductor's image cache
    files = [r for r in b.glance.requests() if r.startswith('GET ') and
             r.split()[1].endswith('/%s/file' % glance_image['id'])]
    assert len(files) == 1, b.glance.requests()
    # instance_info's image fields filled from Glance's record
    for field in ('os_hash_algo', 'os_hash_value', 'checksum', 'size'):
        assert n['instance_info']['image_' + field] == \
            glance_image[field], field
    assert os.path.exists(os.path.join(b.dir, 'images',
                                       'glance-%s' % glance_image['id']))

    # the project that owns the node sees the instance on it; another
    # project sees nothing
    with _sdk(ks, 'a-member') as a:
        mine = list(a.baremetal.nodes(details=True))
        assert [(m.id, m.instance_id, m.provision_state) for m in mine] \
            == [(uuid, instance, 'active')]
    with _sdk(ks, 'b-member') as other:
        assert list(other.baremetal.nodes(details=True)) == []
        with pytest.raises(openstack.exceptions.NotFoundException):
            other.baremetal.get_node(uuid)

    # servicing (API 1.87, a system admin): the agent's CPU burn-in runs
    # in band, then the machine boots its disk again
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/driver_info/agent_burnin_cpu_timeout',
         'value': 3}])
    b.machine.clear_serial()
    status, body, _ = api.http(
        b.server, 'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'service', 'service_steps': [
            {'interface': 'deploy', 'step': 'burnin_cpu'}]}, version='1.87')
    assert status == 202, body
    n = api.wait_state(b.server, uuid, 'active', 600,
                       bad=('service failed',))
    assert n['last_error'] is None
    b.machine.wait_serial(image.MARKER, 120)    # booted its disk again
    assert api.vmedia(b.bmc)['Inserted'] is False
    # destroy (the service user, as Nova): VIF detached, torn down,
    # available, the machine off
    conn.baremetal.detach_vif_from_node(node, vif)
    conn.baremetal.set_node_provision_state(node, 'deleted')
    n = api.wait_state(b.server, uuid, 'available', 300)
    assert n['instance_uuid'] is None and n['instance_info'] == {}
    assert n['power_state'] == 'power off' and not b.machine.is_on()
    conn.close()


def _breakdown(started: float, took: float, phases: dict) -> str:
    """Where deploy-to-active went, from the deploy steps seen while
    polling (0.5 s resolution): booting the ramdisk until the agent runs
    write_image, the write itself, and the rest (ours: tear down, boot
    from disk)."""
    def first(step):
        seen = [t for (_, s), t in phases.items() if s == step]
        return min(seen) if seen else None
    write = first('write_image')
    after = [t for (_, s), t in phases.items()
             if s not in (None, 'deploy', 'write_image') and
             write is not None and t > write]
    if write is None or not after:
        return 'deploy to active: %.0f s' % took
    boot, written = write - started, min(after) - write
    return ('deploy to active: %.0f s (ramdisk boot until the agent '
            'writes: %.0f s, image write: %.0f s, the rest: %.0f s)'
            % (took, boot, written, took - boot - written))


@pytest.mark.server_conf(**{'conductor.automated_clean': False})
def test_wrong_checksum_fails_the_deploy_recoverably(redfish_bed,
                                                     image_server):
    b = redfish_bed
    uuid = _available(b)
    wrong = '0' * 64
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info',
         'value': _instance_info(image_server, image_os_hash_value=wrong)},
        # the agent gives up at the first mismatch instead of fetching
        # and writing the image again up to 9 times (its default)
        {'op': 'add', 'path': '/driver_info/kernel_append_params',
         'value': api.agent_params(b.machine) +
         ' ipa-image-download-connection-retries=0'}])
    api.provision(b.server, uuid, 'active')
    n = api.wait_state(b.server, uuid, 'deploy failed', 600,
                       bad=('clean failed', 'active'))
    assert wrong in n['last_error'], n['last_error']
    # the operator recovers it
    api.provision(b.server, uuid, 'deleted')
    api.wait_state(b.server, uuid, 'available', 300)


@pytest.mark.server_conf(**{'conductor.automated_clean': False})
def test_ramdisk_deploy_is_active_when_the_agent_calls_back(redfish_bed):
    b = redfish_bed
    uuid = api.enroll_redfish(b)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/deploy_interface', 'value': 'ramdisk'},
        {'op': 'add', 'path': '/instance_info',
         'value': {'kernel': b.kernel, 'ramdisk': b.initramfs}}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'available', 60)
    api.provision(b.server, uuid, 'active')
    n = api.wait_state(b.server, uuid, 'active', 300)
    assert n['last_error'] is None
    assert b.machine.is_on()
    # the ramdisk that runs is the one deployed: its agent called back
    assert 'agent_url' in n['driver_internal_info']
    api.provision(b.server, uuid, 'deleted')
    api.wait_state(b.server, uuid, 'available', 120)
    assert not b.machine.is_on()


@pytest.mark.server_conf(**{'conductor.automated_clean': False})
def test_ipmi_ipxe_direct_deploy_boots_the_written_image(
        ipmi_bed, ipmi_image_server):
    """The same over IPMI and iPXE: QEMU's iPXE gets the service's
    boot.ipxe from QEMU's DHCP, which chains to the node's script."""
    b = ipmi_bed
    uuid = _available(b, enroll=api.enroll_ipmi)
    instance = str(uuidlib.uuid4())
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info',
         'value': _instance_info(ipmi_image_server)},
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}])
    api.provision(b.server, uuid, 'active', configdrive={
        'meta_data': {'uuid': instance}})
    n = api.wait_state(b.server, uuid, 'active', 600)
    assert n['last_error'] is None
    b.machine.wait_serial(image.MARKER, 120)
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % instance, 60)


RESCUE_PASSWORD = 'vm-Rescue-2f8c1d'


def _write_disk(machine, image_path: str) -> None:
    """The image's bytes at the start of the machine's (switched off)
    disk, as an operator's machine holds its running system."""
    with open(image_path, 'rb') as src, open(machine.disk, 'r+b') as dst:
        shutil.copyfileobj(src, dst, 4 * image.MIB)


@pytest.mark.server_conf(**{'conductor.automated_clean': False})
def test_adopt_rebuild_rescue_and_unrescue_on_the_machine(redfish_bed,
                                                          image_server):
    """A machine already running its system is adopted (no deploy: its
    disk holds the image) and boots it when powered on; Nova's rebuild
    writes the image again with a config drive; rescue with the
    ``agent`` rescue interface boots the ramdisk, the agent takes the
    hashed password and stops, the ramdisk's rescue user is made with
    it; unrescue boots the instance from its disk again.  (A first
    deploy with a config drive is test_nova_spawns_and_destroys's; the
    adoption spares this test one boot of the agent.)"""
    b = redfish_bed
    uuid = api.enroll_redfish(b)
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    _write_disk(b.machine, os.path.join(b.machine.dir, 'images',
                                        'disk.raw'))
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/rescue_interface', 'value': 'agent'},
        {'op': 'add', 'path': '/instance_info',
         'value': _instance_info(image_server)}])
    api.provision(b.server, uuid, 'adopt')
    n = api.wait_state(b.server, uuid, 'active', 60,
                       bad=('adopt failed',))
    assert n['last_error'] is None
    assert not b.machine.is_on()
    # powered on through the API, the adopted machine boots its disk
    api.ok(b.server, 'PUT', '/v1/nodes/%s/states/power' % uuid,
           {'target': 'power on'})
    b.machine.wait_serial(image.MARKER, 120)
    # rebuild: the disk written again, with a config drive
    second = str(uuidlib.uuid4())
    b.machine.clear_serial()
    api.provision(b.server, uuid, 'rebuild',
                  configdrive={'meta_data': {'uuid': second}})
    n = api.wait_state(b.server, uuid, 'active', 600)
    assert n['last_error'] is None
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % second, 120)
    # rescue
    b.machine.clear_serial()
    api.provision(b.server, uuid, 'rescue', rescue_password=RESCUE_PASSWORD)
    n = api.wait_state(b.server, uuid, 'rescue', 600)
    assert n['last_error'] is None
    # the agent wrote the hash it was sent and gave way to the rescue user
    b.machine.wait_serial('ipa-rescue: user rescue ready (P)', 120)
    assert api.vmedia(b.bmc)['Inserted'] is False
    for where in (b.machine.serial_log(), b.server.log(tail=None)):
        assert RESCUE_PASSWORD not in where
    b.machine.clear_serial()
    api.provision(b.server, uuid, 'unrescue')
    n = api.wait_state(b.server, uuid, 'active', 300)
    assert n['last_error'] is None
    assert not {'rescue_password', 'hashed_rescue_password'} & set(
        n['instance_info'])
    # the instance again, as rebuilt
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % second, 120)
