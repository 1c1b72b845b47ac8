"""Secure Boot on a real (virtual) machine: a q35 machine whose OVMF
enforces Secure Boot with Microsoft's keys enrolled, behind sushy-tools.
The agent's virtual-media ISO boots with Secure Boot on (shim, Debian's
signed GRUB and kernel on its EFI System Partition); the node asks for
Secure Boot (instance_info capabilities, as Nova passes it), the service
turns it on through Redfish before the instance boots, the deployed disk
(shim, signed GRUB, signed kernel) boots with it on, and undeploy turns
it off.  Two boots (the agent, the instance); no cleaning."""

import json
import time
import uuid as uuidlib

import pytest

from tests.vm import api
from tests.vm import bed
from tests.vm import image
from tests.vm import test_deploy

pytestmark = bed.MARKS_B
SECURE = 'secureboot: Secure boot enabled'     # the kernel, at boot


@pytest.fixture
def signed_image(secure_redfish_bed):
    yield from test_deploy._serve_image(secure_redfish_bed,
                                        image.build_uefi_signed)


def _node_secure_boot(b, uuid) -> bool | None:
    _, body, _ = api.http(b.server, 'GET', '/v1/nodes/%s' % uuid,
                          version='1.75')
    return body['secure_boot']


def _secure_boot(b) -> bool:
    _, body, _ = api.http_get(b.bmc.address + b.bmc.system_id +
                              '/SecureBoot')
    return json.loads(body)['SecureBootEnable']


@pytest.mark.server_conf(**{'conductor.deploy_callback_timeout': 900})
def test_secure_boot_agent_and_instance_boot_signed(secure_redfish_bed,
                                                    signed_image):
    b = secure_redfish_bed
    uuid = api.enroll_redfish(b)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/properties/capabilities',
         'value': 'boot_mode:uefi,secure_boot:true'},
        {'op': 'replace', 'path': '/automated_clean', 'value': False}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    assert _node_secure_boot(b, uuid) is True       # read from the BMC
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'available', 60)

    instance = str(uuidlib.uuid4())
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'image_source': signed_image['url'],
            'image_disk_format': 'raw', 'image_os_hash_algo': 'sha256',
            'image_os_hash_value': signed_image['sha256'], 'root_gb': 1,
            'capabilities': {'secure_boot': 'true'}}}])
    started = time.monotonic()
    api.provision(b.server, uuid, 'active', configdrive={
        'meta_data': {'uuid': instance, 'hostname': 'sb-test'}})
    # the agent's kernel, from the ISO through shim and the signed GRUB,
    # with Secure Boot enforced (read before the next power on starts
    # the console afresh)
    b.machine.wait_serial(SECURE, 300)
    agent_boot = b.machine.serial_log()
    assert "Booting `baremetal'" in agent_boot      # the ISO's menu
    n = api.wait_state(b.server, uuid, 'active', 900)
    assert n['last_error'] is None
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % instance, 180)
    deployed = time.monotonic() - started
    # the deployed disk (shim, signed GRUB and kernel) booted enforced
    instance_boot = b.machine.serial_log()
    assert SECURE in instance_boot.partition(image.MARKER)[0], \
        instance_boot[-3000:]
    assert "Booting `baremetal'" not in instance_boot
    assert _secure_boot(b) is True
    assert _node_secure_boot(b, uuid) is True

    api.provision(b.server, uuid, 'deleted')
    n = api.wait_state(b.server, uuid, 'available', 300)
    assert n['last_error'] is None
    assert _secure_boot(b) is False
    assert _node_secure_boot(b, uuid) is False
    print('Secure Boot: deploy until the disk booted %.0f s' % deployed)
