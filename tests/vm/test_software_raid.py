"""Software RAID built by the agent, on a real (virtual) machine: OVMF,
two disks, the ``agent`` RAID interface.  The operator's sequence, over
HTTP: target RAID configuration (RAID-1 over both disks, size MAX),
manual cleaning with ``raid.delete_configuration`` and
``raid.create_configuration`` (ironic-python-agent builds the array
with mdadm), then a deploy of a UEFI whole-disk image: the agent writes
it onto the md device and, as Ironic has it do on software RAID, copies
its EFI System Partition onto an ESP mirrored on both disks with a boot
entry each; the machine then boots the image.

UEFI, because the agent installs no boot loader for legacy BIOS on a
whole-disk image (it needs the image's root file system and GRUB in it,
and ironic-python-agent 13 disables that GRUB install by default): the
md device (metadata 1.2, at the start of its partitions) is nothing a
BIOS boots.

What is checked on the machine's disk files, not only on what the
service says: both hold an md member (metadata 1.2 superblock, same
array) and, at the array's data offset, the image's own GPT (its disk
GUID): the image is on the md device, mirrored.

The same machine (two NICs, two disks) is first inspected in band, as
Metal3 inspects every host, with the API behind HTTP basic
authentication: the agent inspect interface boots the ramdisk, the agent
posts its inventory to the public ``/v1/continue_inspection``; the node
gets its properties, a port per NIC (PXE on the one it was enrolled with
only), its inventory and an inspection rule's effects.  The node has
fast track, as Metal3 sets it: the agent booted for the inspection stays
up, heartbeating in ``manageable``, and builds the RAID and writes the
image without another boot (checked in the node's change feed): one
agent boot for the three operations.
"""

import os
import re
import struct
import threading
import time

import pytest

from tests.functional import bmc_server as bs
from tests.vm import api
from tests.vm import bed
from tests.vm import image
from tests.vm import test_deploy

pytestmark = bed.MARKS_B

RAID1_MAX = {'logical_disks': [
    {'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
     'is_root_volume': True}]}
MD_MAGIC = 0xa92b4efc
SECTOR = 512


@pytest.fixture
def raid_image(raid_redfish_bed):
    yield from test_deploy._serve_image(raid_redfish_bed, image.build_uefi)


def _gpt_partitions(path: str) -> list[tuple[int, int]]:
    """(first LBA, last LBA) of each partition of a GPT disk image."""
    with open(path, 'rb') as f:
        f.seek(SECTOR)
        header = f.read(92)
        if header[:8] != b'EFI PART':
            return []
        entries_lba, count, size = struct.unpack_from('<QII', header, 72)
        f.seek(entries_lba * SECTOR)
        table = f.read(count * size)
    out = []
    for i in range(count):
        entry = table[i * size:(i + 1) * size]
        if entry[:16] != b'\0' * 16:
            out.append(struct.unpack_from('<QQ', entry, 32))
    return out


def _md_member(path: str) -> tuple[bytes, int] | None:
    """(array UUID, byte offset of its data on the disk) of the md
    member with a 1.2 superblock (4 KiB into its partition), if any."""
    with open(path, 'rb') as f:
        for first, _ in _gpt_partitions(path):
            start = first * SECTOR
            f.seek(start + 4096)
            sb = f.read(256)
            if len(sb) == 256 and \
                    struct.unpack_from('<I', sb, 0)[0] == MD_MAGIC and \
                    struct.unpack_from('<I', sb, 4)[0] == 1:
                data_offset = struct.unpack_from('<Q', sb, 128)[0]
                return sb[16:32], start + data_offset * SECTOR
    return None


def _disk_guid(header: bytes) -> bytes:
    return header[56:72]


class _Console:
    """Keeps every boot's serial console (libvirt starts the file afresh
    at each power on), read twice a second while the test runs."""

    def __init__(self, machine) -> None:
        self.machine = machine
        self.boots: list[str] = ['']
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            now = self.machine.serial_log()
            if len(now) < len(self.boots[-1]) or \
                    not now.startswith(self.boots[-1][:200]):
                self.boots.append(now)
            else:
                self.boots[-1] = now

    def text(self) -> str:
        return '\n'.join(self.boots)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


# OVMF under TCG on a busy two-core machine: the agent took up to 200 s
# of kernel time to start (tests/vm/test_uefi.py)
@pytest.mark.server_conf(**{'conductor.clean_callback_timeout': 900,
                            'conductor.deploy_callback_timeout': 900,
                            'DEFAULT.enabled_raid_interfaces':
                                ['no-raid', 'agent'],
                            'DEFAULT.enabled_inspect_interfaces':
                                ['no-inspect', 'agent']})
def test_software_raid_1_built_by_the_agent_holds_the_image_that_boots(
        raid_redfish_bed, raid_image):
    b = raid_redfish_bed
    console = _Console(b.machine)
    try:
        inspection_failure = _raid_clean_deploy_boot(b, raid_image, console)
    finally:
        console.stop()
    if inspection_failure is not None:
        raise inspection_failure


def _inspect_in_band(b, uuid) -> None:
    """In-band inspection as Metal3 runs it, on the two-NIC two-disk
    machine, the API behind HTTP basic authentication (the agent's
    continue_inspection is public): an inspection rule, the agent
    inspect interface, the inventory the agent posts."""
    status, rule, _ = api.http(b.server, 'POST', '/v1/inspection_rules', {
        'description': 'vm: tag x86_64 machines, record their vendor',
        'conditions': [{'op': 'eq', 'args': {'values': [
            '{inventory[cpu][architecture]}', 'x86_64']}}],
        'actions': [
            {'op': 'add-trait', 'args': {'name': 'CUSTOM_INSPECTED_X86'}},
            {'op': 'set-attribute', 'args': {
                'path': '/extra/system_vendor',
                'value': '{inventory[system_vendor][manufacturer]}'}}]},
        version='1.96')
    assert status == 201, rule
    # without credentials the API refuses; the bed's requests carry them
    anon = api.http_get(b.server.endpoint + '/v1/nodes/%s' % uuid)
    assert anon[0] == 401, anon[:2]
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/inspect_interface', 'value': 'agent'}])
    api.provision(b.server, uuid, 'inspect')
    n = api.wait_state(b.server, uuid, 'manageable', 900)
    assert n['last_error'] is None
    props = n['properties']
    assert props['cpu_arch'] == 'x86_64' and props['cpus'] == 1, props
    assert props['memory_mb'] > 1000 and props['local_gb'] >= 4, props
    status, ports, _ = api.http(
        b.server, 'GET', '/v1/ports?node=%s&fields=address,pxe_enabled'
        % uuid)
    assert status == 200, ports
    # a port for each NIC; PXE on the one the node was enrolled with
    # (its BOOTIF), not on the second
    assert {p['address']: p['pxe_enabled'] for p in ports['ports']} == {
        b.machine.macs[0]: True, b.machine.macs[1]: False}, ports
    status, body, _ = api.http(b.server, 'GET',
                               '/v1/nodes/%s/inventory' % uuid,
                               version='1.81')
    assert status == 200, body
    inventory = body['inventory']
    assert {i['mac_address'] for i in inventory['interfaces']} >= set(
        b.machine.macs), inventory['interfaces']
    names = {d['name'] for d in inventory['disks']}
    assert {'/dev/vda', '/dev/vdb'} <= names, names
    boot = inventory.get('boot') or {}
    assert boot.get('current_boot_mode') == 'uefi', boot
    # the rule's effects
    status, traits, _ = api.http(b.server, 'GET',
                                 '/v1/nodes/%s/traits' % uuid)
    assert 'CUSTOM_INSPECTED_X86' in traits['traits'], traits
    assert n['extra'].get('system_vendor') == \
        inventory['system_vendor']['manufacturer'], n['extra']
    print('in-band inspection: disks %s, NICs %s'
          % (sorted(names), sorted(i['mac_address']
                                   for i in inventory['interfaces'])))


def _raid_clean_deploy_boot(b, raid_image, console
                            ) -> Exception | None:
    """The in-band inspection, the RAID clean and the deploy, in
    Metal3's order and with its fast track: the agent booted for the
    inspection stays up for the cleaning and the deploy; what failed in
    the inspection (the rest runs all the same, booting the agent
    itself when it has to)."""
    uuid = api.enroll_redfish(b, fast_track=True)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/raid_interface', 'value': 'agent'},
        {'op': 'add', 'path': '/properties/capabilities',
         'value': 'boot_mode:uefi'},
        # the RAID is built by the manual cleaning
        {'op': 'add', 'path': '/automated_clean', 'value': False}])
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)

    # in-band inspection (item of its own: a failure is raised at the
    # end, once the RAID deploy has run too)
    started = time.monotonic()
    inspection_failure = None
    try:
        _inspect_in_band(b, uuid)
        # fast track: the agent stays up, looks the node up and
        # heartbeats in manageable
        n = api.wait_for(b.server, uuid, lambda n: n[
            'driver_internal_info'].get('agent_url'), 180,
            'the agent\'s heartbeat after the inspection')
        assert n['power_state'] == 'power on', n['power_state']
    except Exception as e:
        inspection_failure = e
        n = api.node(b.server, uuid)
        if n['provision_state'] != 'manageable':
            api.provision(b.server, uuid, 'manage')
            api.wait_state(b.server, uuid, 'manageable', 120)
    inspected = time.monotonic() - started

    # manual cleaning with the agent's RAID steps, by the running agent
    api.ok(b.server, 'PUT', '/v1/nodes/%s/states/raid' % uuid, RAID1_MAX)
    started = time.monotonic()
    api.provision(b.server, uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'delete_configuration'},
        {'interface': 'raid', 'step': 'create_configuration'}])
    n = api.wait_state(b.server, uuid, 'manageable', 900)
    cleaned = time.monotonic() - started
    assert n['last_error'] is None
    built = n['raid_config']['logical_disks']
    assert built == RAID1_MAX['logical_disks'], n['raid_config']
    assert 'raid_level:1' in n['properties']['capabilities']

    # deploy the UEFI whole-disk image: onto the md device
    api.provision(b.server, uuid, 'provide')
    api.wait_state(b.server, uuid, 'available', 60)
    api.ok(b.server, 'PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info', 'value': {
            'image_source': raid_image['url'], 'image_disk_format': 'raw',
            'image_os_hash_algo': 'sha256',
            'image_os_hash_value': raid_image['sha256'], 'root_gb': 1}}])
    started = time.monotonic()
    phases: dict = {}
    api.provision(b.server, uuid, 'active')
    n = api.wait_state(b.server, uuid, 'active', 900, phases=phases)
    assert n['last_error'] is None
    b.machine.wait_serial(image.MARKER, 180)
    deployed = time.monotonic() - started
    text = console.text()
    # the agent's log on the console names the device it wrote (the
    # disk files below are the proof; the log may drop a line)
    device = re.search(r'(?:streamed onto|written to) device (/dev/\S+)',
                       text)
    if device:
        assert device.group(1).startswith('/dev/md'), device.group(0)

    if inspection_failure is None:
        # one agent boot in all: the cleaning waited on the agent's RAID
        # steps only, never for a ramdisk to come up (no step current),
        # nor did the deploy (its deploy step)
        waited = bs.steps_waited_in(b.server, uuid, 'clean wait',
                                    'clean_step', api.http)
        assert waited and None not in waited, waited
        waited = bs.steps_waited_in(b.server, uuid, request=api.http)
        assert 'deploy' not in waited and 'write_image' in waited, waited
    # both disks hold an md member of one array
    members = [_md_member(d) for d in b.machine.disks]
    assert all(members), members
    assert members[0][0] == members[1][0]       # one array over both
    # on both disks, at the array's data offset: the image's own GPT
    with open(os.path.join(b.machine.dir, 'images', 'disk.raw'),
              'rb') as f:
        f.seek(SECTOR)
        wanted = _disk_guid(f.read(92))
    for disk, (_, data) in zip(b.machine.disks, members, strict=False):
        with open(disk, 'rb') as f:
            f.seek(data + SECTOR)
            header = f.read(92)
        assert header[:8] == b'EFI PART', disk
        assert _disk_guid(header) == wanted, disk
    # the machine booted from its disk, not the agent's CD
    last = b.machine.serial_log()
    assert image.MARKER in last
    print('software RAID-1: cleaning (delete + create) %.0f s, in-band '
          'inspection %.0f s, deploy until the image booted %.0f s; %s'
          % (cleaned, inspected, deployed, device and device.group(0)))
    boot_line = re.search(r'BdsDxe: (?:loading|starting) Boot\S+ "[^"]*"',
                          last)
    if boot_line:
        print(boot_line.group(0))
    return inspection_failure
