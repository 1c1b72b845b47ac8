"""Small bootable whole-disk images for deploy tests.

``build``: an MBR disk with one FAT partition holding SYSLINUX (legacy
BIOS), the agent ramdisk's Debian kernel and a tiny initramfs (busybox
and the few kernel modules it needs).  ``build_uefi``: a GPT disk whose
one partition is an EFI System Partition holding a GRUB EFI binary
(``EFI/BOOT/BOOTX64.EFI``, the removable-media path UEFI firmware boots
without a boot entry), the same kernel and initramfs.  Booted, either
prints ``MARKER``, finds the config drive the agent wrote (a partition
labelled ``config-2``), prints ``CONFIGDRIVE-UUID:`` and the ``uuid`` of
its ``meta_data.json``, then powers off.

Everything comes from Debian's packages on this machine (syslinux,
grub-efi-amd64-bin, mtools, dosfstools, busybox-static) and from the
ramdisk that tools/build-ramdisk built.
"""

import gzip
import hashlib
import io
import os
import shutil
import struct
import subprocess
import uuid as uuidlib
import zlib

MARKER = 'BAREMETAL-TEST-IMAGE-BOOTED'
MIB = 1024 * 1024
# the modules that reach a virtio disk and an ISO 9660 file system, in
# load order (whichever of them the kernel has built in are skipped)
MODULES = ('virtio', 'virtio_ring', 'virtio_pci_modern_dev',
           'virtio_pci_legacy_dev', 'virtio_pci', 'virtio_blk', 'cdrom',
           'isofs')

INIT = r'''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in %(modules)s; do
    [ -f /modules/$m.ko ] && insmod /modules/$m.ko
done
echo
echo %(marker)s
dev=
for i in 1 2 3 4 5 6 7 8 9 10; do
    dev=$(findfs LABEL=config-2 2>/dev/null) && break
    sleep 1
done
if [ -n "$dev" ] && mount -t iso9660 -o ro "$dev" /mnt; then
    uuid=$(sed -n 's/.*"uuid": *"\([^"]*\)".*/\1/p' \
        /mnt/openstack/latest/meta_data.json)
    echo "CONFIGDRIVE-UUID: $uuid"
else
    echo "CONFIGDRIVE-UUID: none"
fi
sync
poweroff -f
'''


def _cpio(entries) -> bytes:
    """A newc cpio archive of (name, mode, data) entries."""
    out = io.BytesIO()
    for ino, (name, mode, data) in enumerate(
            list(entries) + [('TRAILER!!!', 0, b'')], start=1):
        nb = name.encode() + b'\0'
        hdr = '070701' + ''.join('%08x' % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
        out.write(hdr.encode() + nb)
        out.write(b'\0' * (-(110 + len(nb)) % 4))
        out.write(data)
        out.write(b'\0' * (-len(data) % 4))
    return out.getvalue()


def _modules(initramfs: str, work: str) -> dict[str, bytes]:
    """The MODULES the ramdisk's kernel has as files, uncompressed."""
    tree = os.path.join(work, 'ramdisk')
    os.makedirs(tree, exist_ok=True)
    patterns = ['*/%s.ko*' % m for m in MODULES]
    zstd = subprocess.Popen(['zstd', '-dc', initramfs],
                            stdout=subprocess.PIPE)
    subprocess.run(['cpio', '-idm', '--quiet', '--no-absolute-filenames']
                   + patterns, stdin=zstd.stdout, cwd=tree, check=True)
    zstd.wait()
    found = {}
    for dirpath, _, files in os.walk(tree):
        for f in files:
            name, _, ext = f.partition('.ko')
            if name in MODULES:
                data = open(os.path.join(dirpath, f), 'rb').read()
                if ext == '.xz':
                    import lzma
                    data = lzma.decompress(data)
                elif ext == '.zst':
                    data = subprocess.run(['zstd', '-dc'], input=data,
                                          stdout=subprocess.PIPE,
                                          check=True).stdout
                found[name] = data
    return found


def _initrd(initramfs: str, work: str) -> str:
    """The test initramfs, written in ``work``: its path."""
    mods = _modules(initramfs, work)
    busybox = open(shutil.which('busybox') or '/bin/busybox', 'rb').read()
    init = (INIT % {'modules': ' '.join(MODULES),
                    'marker': MARKER}).encode()
    entries = [('bin', 0o40755, b''), ('dev', 0o40755, b''),
               ('proc', 0o40755, b''), ('sys', 0o40755, b''),
               ('mnt', 0o40755, b''), ('modules', 0o40755, b''),
               ('bin/busybox', 0o100755, busybox),
               ('init', 0o100755, init)]
    entries += [('modules/%s.ko' % n, 0o100644, d) for n, d in mods.items()]
    initrd = os.path.join(work, 'initrd.img')
    with open(initrd, 'wb') as f:
        f.write(gzip.compress(_cpio(entries), 6))
    return initrd


def _sums(out: str) -> dict:
    data = open(out, 'rb').read()
    return {'size': len(data),
            'sha256': hashlib.sha256(data).hexdigest(),
            'sha512': hashlib.sha512(data).hexdigest()}


def build(kernel: str, initramfs: str, out: str) -> dict:
    """Write the image to ``out``; returns its size and checksums."""
    work = out + '.work'
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    initrd = _initrd(initramfs, work)

    # the FAT partition: SYSLINUX, kernel, initramfs
    part_mib = 48
    part = os.path.join(work, 'part.img')
    subprocess.run(['mkfs.vfat', '-C', '-n', 'TESTBOOT', part,
                    str(part_mib * 1024)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(['syslinux', '--install', part], check=True)
    cfg = os.path.join(work, 'syslinux.cfg')
    with open(cfg, 'w') as f:
        f.write('DEFAULT test\nPROMPT 0\nTIMEOUT 0\nLABEL test\n'
                '  KERNEL vmlinuz\n'
                '  APPEND initrd=initrd.img console=ttyS0,115200 quiet\n')
    env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
    for src, name in ((kernel, 'vmlinuz'), (initrd, 'initrd.img'),
                      (cfg, 'syslinux.cfg')):
        subprocess.run(['mcopy', '-i', part, src, '::' + name],
                       check=True, env=env)

    # the disk: SYSLINUX's MBR code, one bootable FAT16 (LBA) partition
    start = MIB // 512
    sectors = part_mib * MIB // 512
    mbr = bytearray(open('/usr/lib/syslinux/mbr/mbr.bin', 'rb').read()
                    .ljust(440, b'\0')[:440])
    mbr += b'\0' * 6
    mbr += struct.pack('<B3sB3sII', 0x80, b'\xfe\xff\xff', 0x0e,
                       b'\xfe\xff\xff', start, sectors)
    mbr += b'\0' * 48 + b'\x55\xaa'
    with open(out, 'wb') as f:
        f.write(mbr)
        f.seek(MIB)
        with open(part, 'rb') as p:
            shutil.copyfileobj(p, f)
        f.truncate(MIB + part_mib * MIB + MIB)
    shutil.rmtree(work, ignore_errors=True)
    return _sums(out)


ESP_TYPE = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B'
GRUB_CFG = """\
search --no-floppy --set=root --label TESTEFI
linux ($root)/vmlinuz console=ttyS0,115200 quiet
initrd ($root)/initrd.img
boot
"""


def _gpt(size: int, start: int, sectors: int) -> tuple[bytes, bytes,
                                                        bytes]:
    """(protective MBR + primary header + entries, backup entries,
    backup header) of a GPT disk of ``size`` bytes with one ESP."""
    last = size // 512 - 1
    entry = (uuidlib.UUID(ESP_TYPE).bytes_le + uuidlib.uuid4().bytes_le +
             struct.pack('<QQQ', start, start + sectors - 1, 0) +
             'EFI System'.encode('utf-16-le').ljust(72, b'\0'))
    entries = entry.ljust(128 * 128, b'\0')
    disk_guid = uuidlib.uuid4().bytes_le

    def header(mine, other, table):
        h = struct.pack('<8sIIIIQQQQ16sQIII', b'EFI PART', 0x10000, 92,
                        0, 0, mine, other, 34, last - 33, disk_guid,
                        table, 128, 128, zlib.crc32(entries))
        h = h[:16] + struct.pack('<I', zlib.crc32(h)) + h[20:]
        return h.ljust(512, b'\0')

    mbr = (b'\0' * 446 + struct.pack('<B3sB3sII', 0, b'\0\x02\0', 0xee,
                                     b'\xff\xff\xff', 1,
                                     min(last, 0xffffffff)) +
           b'\0' * 48 + b'\x55\xaa')
    return (mbr + header(1, last, 2) + entries, entries,
            header(last, 1, last - 32))


SHIM = '/usr/lib/shim/shimx64.efi.signed'
SIGNED_GRUB = '/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed'


def build_uefi_signed(kernel: str, initramfs: str, out: str) -> dict:
    """As build_uefi, bootable with Secure Boot on: shim (signed by
    Microsoft's UEFI CA) as BOOTX64.EFI, Debian's signed GRUB beside it
    reading EFI/debian/grub.cfg, and the ramdisk's kernel, which Debian
    signs."""
    return build_uefi(kernel, initramfs, out, signed=True)


def build_uefi(kernel: str, initramfs: str, out: str,
               signed: bool = False) -> dict:
    """Write the UEFI image to ``out``; returns its size and checksums."""
    work = out + '.work'
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    initrd = _initrd(initramfs, work)
    cfg = os.path.join(work, 'grub.cfg')
    with open(cfg, 'w') as f:
        # signed: not quiet, so that the kernel says whether Secure Boot
        # is enforced
        f.write(GRUB_CFG.replace(' quiet', '') if signed else GRUB_CFG)
    if signed:
        loaders = [(SHIM, 'EFI/BOOT/BOOTX64.EFI'),
                   (SIGNED_GRUB, 'EFI/BOOT/grubx64.efi'),
                   (cfg, 'EFI/debian/grub.cfg')]
    else:
        efi = os.path.join(work, 'BOOTX64.EFI')
        subprocess.run(['grub-mkstandalone', '-O', 'x86_64-efi', '-o', efi,
                        '--modules=linux normal search search_label fat '
                        'part_gpt', '--locales=', '--fonts=', '--themes=',
                        'boot/grub/grub.cfg=%s' % cfg], check=True)
        loaders = [(efi, 'EFI/BOOT/BOOTX64.EFI')]
    part_mib = 48
    part = os.path.join(work, 'part.img')
    subprocess.run(['mkfs.vfat', '-C', '-n', 'TESTEFI', part,
                    str(part_mib * 1024)], check=True,
                   stdout=subprocess.DEVNULL)
    env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
    subprocess.run(['mmd', '-i', part, '::/EFI', '::/EFI/BOOT',
                    '::/EFI/debian'], check=True, env=env)
    for src, name in loaders + [(kernel, 'vmlinuz'),
                                (initrd, 'initrd.img')]:
        subprocess.run(['mcopy', '-i', part, src, '::/' + name],
                       check=True, env=env)
    size = MIB + part_mib * MIB + MIB
    head, entries, backup = _gpt(size, MIB // 512, part_mib * MIB // 512)
    with open(out, 'wb') as f:
        f.write(head)
        f.seek(MIB)
        with open(part, 'rb') as p:
            shutil.copyfileobj(p, f)
        f.seek(size - 33 * 512)
        f.write(entries + backup)
    shutil.rmtree(work, ignore_errors=True)
    return _sums(out)
