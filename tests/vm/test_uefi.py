"""UEFI on a real (virtual) machine: OVMF firmware, the agent booted by
Redfish virtual media from the ISO's EFI boot loader (GRUB on the ISO's
EFI System Partition), then a UEFI whole-disk image deployed and booted
from the machine's disk.  One machine, three boots (the agent twice, the
image once): under software emulation each boot costs a minute or so."""

import json
import time
import uuid as uuidlib

import pytest

from tests.vm import api
from tests.vm import bed
from tests.vm import image
from tests.vm import test_agent_cleaning
from tests.vm import test_deploy

pytestmark = bed.MARKS_B
GRUB_MENU = "Booting `baremetal'"       # GRUB, from the ISO's menu


@pytest.fixture
def uefi_image(uefi_redfish_bed):
    yield from test_deploy._serve_image(uefi_redfish_bed, image.build_uefi)


def _boot_mode(b) -> str | None:
    _, body, _ = api.http_get(b.bmc.address + b.bmc.system_id)
    return json.loads(body)['Boot'].get('BootSourceOverrideMode')


# OVMF under TCG on a busy two-core machine: the agent took up to 200 s
# of kernel time to start, beyond the bed's 300 s callback timeouts
@pytest.mark.server_conf(**{'conductor.clean_callback_timeout': 900,
                            'conductor.deploy_callback_timeout': 900})
def test_uefi_vmedia_cleans_then_deploys_a_disk_that_boots(
        uefi_redfish_bed, uefi_image):
    b = uefi_redfish_bed
    test_agent_cleaning._put_filesystem(b.machine)
    uuid = api.enroll_redfish(b)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/properties/capabilities',
         'value': 'boot_mode:uefi'}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)

    # automated cleaning: the agent boots from the ISO under OVMF
    started = time.monotonic()
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'clean wait', 60)
    assert api.vmedia(b.bmc)['Inserted'] is True
    assert _boot_mode(b) == 'UEFI'
    n = api.wait_state(b.server, uuid, 'available', 300)
    cleaned = time.monotonic() - started
    assert n['last_error'] is None
    console = b.machine.serial_log()
    # OVMF booted the CD's EFI loader, which read the ISO's menu
    assert 'UEFI QEMU DVD-ROM' in console
    assert GRUB_MENU in console
    assert 'erase_devices_metadata' in console
    test_agent_cleaning.assert_no_module_errors(console)
    assert not test_agent_cleaning._read(
        b.machine.disk, *test_agent_cleaning.EXT4_MAGIC)
    assert api.vmedia(b.bmc)['Inserted'] is False

    # deploy the UEFI whole-disk image; the machine boots it from disk
    instance = str(uuidlib.uuid4())
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'image_source': uefi_image['url'], 'image_disk_format': 'raw',
            'image_os_hash_algo': 'sha256',
            'image_os_hash_value': uefi_image['sha256'], 'root_gb': 1}}])
    started = time.monotonic()
    api.provision(b.server, uuid, 'active', configdrive={
        'meta_data': {'uuid': instance, 'hostname': 'uefi-test'}})
    n = api.wait_state(b.server, uuid, 'active', 600)
    assert n['last_error'] is None
    b.machine.wait_serial(image.MARKER, 120)
    deployed = time.monotonic() - started
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % instance, 60)
    console = b.machine.serial_log()
    # from the disk's ESP, not the CD (ejected)
    assert 'UEFI Misc Device' in console or 'VirtIO' in console, \
        console[:2000]
    assert GRUB_MENU not in console
    assert api.vmedia(b.bmc)['Inserted'] is False
    assert _boot_mode(b) == 'UEFI'
    print('UEFI: cleaning %.0f s, deploy until the disk booted %.0f s'
          % (cleaned, deployed))
