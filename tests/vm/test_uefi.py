"""UEFI on a real (virtual) machine: OVMF firmware, the agent booted by
Redfish virtual media from the ISO's EFI boot loader (GRUB on the ISO's
EFI System Partition), then a UEFI whole-disk image deployed and booted
from the machine's disk.  One machine, two boots: the agent booted for
the automated cleaning stays up for the deploy (fast track; a deploy
that boots the agent under OVMF is test_secure_boot's), then the image
(under software emulation each boot costs a minute or so).  Then the
same deploy over IPMI and iPXE: two boots (the agent, the image).
After either deploy the firmware boots the image through the NVRAM
boot entry the agent added (``ironic1``, IPA's label)."""

import json
import os
import re
import time
import uuid as uuidlib

import pytest

from tests.functional import bmc_server as bs
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


@pytest.fixture
def uefi_ipmi_image(uefi_ipmi_bed):
    yield from test_deploy._serve_image(uefi_ipmi_bed, image.build_uefi)


# the label IPA's image.install_bootloader gives the entry of the first
# boot loader it finds on the ESP (here EFI/BOOT/BOOTX64.EFI)
ENTRY = 'ironic1'


def assert_booted_through_nvram_entry(machine) -> None:
    """The agent's boot entry is in the machine's UEFI variables and
    OVMF started the image's loader through it (the console is the
    disk boot's: libvirt starts the file afresh at each power on)."""
    assert ENTRY.encode('utf-16-le') in machine.nvram()
    console = machine.serial_log()
    assert re.search(r'BdsDxe: starting Boot[0-9A-Fa-f]{4} "%s" from '
                     r'.*HD\(1,GPT' % ENTRY, console), console[:3000]


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
    uuid = api.enroll_redfish(b, fast_track=True)
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
    # fast track: the agent stays up and heartbeats in available
    n = api.wait_for(b.server, uuid, lambda n: n[
        'driver_internal_info'].get('agent_url'), 180,
        'the agent\'s heartbeat after the cleaning')
    assert n['power_state'] == 'power on', n['power_state']

    # deploy the UEFI whole-disk image by the running agent; the machine
    # boots it from disk
    b.machine.clear_serial()
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
    # from the disk's ESP, through the agent's NVRAM entry; not the CD
    # (ejected)
    assert_booted_through_nvram_entry(b.machine)
    assert GRUB_MENU not in console
    assert api.vmedia(b.bmc)['Inserted'] is False
    assert _boot_mode(b) == 'UEFI'
    # the deploy never waited for a ramdisk to come up (its deploy step)
    waited = bs.steps_waited_in(b.server, uuid, request=api.http)
    assert 'deploy' not in waited and 'write_image' in waited, waited
    print('UEFI: cleaning %.0f s, deploy until the disk booted %.0f s'
          % (cleaned, deployed))


# as test_uefi_vmedia_cleans_then_deploys_a_disk_that_boots: OVMF under
# TCG may take minutes to start the agent
@pytest.mark.server_conf(**{'conductor.automated_clean': False,
                            'conductor.deploy_callback_timeout': 900})
def test_uefi_ipmi_ipxe_deploy_boots_the_disk_through_its_nvram_entry(
        uefi_ipmi_bed, uefi_ipmi_image):
    """IPMI with the EFI boot flag, the EFI iPXE of the machine's NIC
    ROM: boot.ipxe chains to the script of the NIC that booted, the
    agent writes the UEFI image and adds its NVRAM boot entry, and the
    machine boots from disk through that entry."""
    b = uefi_ipmi_bed
    uuid = api.enroll_ipmi(b)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/properties/capabilities',
         'value': 'boot_mode:uefi'}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'available', 60)
    instance = str(uuidlib.uuid4())
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'image_source': uefi_ipmi_image['url'],
            'image_disk_format': 'raw', 'image_os_hash_algo': 'sha256',
            'image_os_hash_value': uefi_ipmi_image['sha256'],
            'root_gb': 1}},
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}])
    started = time.monotonic()
    api.provision(b.server, uuid, 'active', configdrive={
        'meta_data': {'uuid': instance}})
    # the agent's boot: OVMF network-boots the NIC, whose EFI iPXE runs
    # boot.ipxe, which chains to this NIC's script
    script = '/ipxe/%s.ipxe' % b.machine.mac.replace(':', '-')
    b.machine.wait_serial(script, 300)
    console = b.machine.serial_log()
    # the EFI build of iPXE (its banner lists the image formats it runs;
    # the BIOS build's has no EFI), asked by QEMU's DHCP for boot.ipxe
    assert re.search(r'Features:.* EFI', console), console[:3000]
    assert 'boot.ipxe... ok' in console, console[:3000]
    # the kernel's EFI stub found the initramfs the script named
    # (initrd=initrd)
    b.machine.wait_serial('EFI stub: Loaded initrd', 300)
    assert _bmc_state(b)['uefi'] is True
    n = api.wait_state(b.server, uuid, 'active', 900)
    assert n['last_error'] is None
    b.machine.wait_serial(image.MARKER, 120)
    deployed = time.monotonic() - started
    b.machine.wait_serial('CONFIGDRIVE-UUID: %s' % instance, 60)
    assert_booted_through_nvram_entry(b.machine)
    state = _bmc_state(b)
    assert (state['bootdev'], state['persistent'], state['uefi']) == (
        'hd', True, True)
    # the node's boot_mode (API 1.75): what the BMC's boot flags say
    _, node, _ = api.http(b.server, 'GET', '/v1/nodes/%s' % uuid,
                          version='1.75')
    assert node['boot_mode'] == 'uefi'
    assert 'the agent added the UEFI boot entry' in b.server.log(
        tail=None)
    print('UEFI iPXE: deploy until the disk booted %.0f s' % deployed)


def _bmc_state(b) -> dict:
    with open(os.path.join(b.bmc.dir, 'state.json')) as f:
        return json.load(f)
