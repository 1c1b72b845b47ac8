"""Bootable ISO images for virtual media: a kernel, an initramfs and
their command line behind isolinux (legacy BIOS boot) and, given an EFI
System Partition image (efi_image.py), behind that image's UEFI boot
loader too: a second El Torito entry, platform EFI, and the GRUB menu at
efi_image.MENU_PATHS.  Written with pycdlib (no external mkisofs).

ISOs are cached by content under ``$state_path/isos``: one built for the
same kernel, initramfs and parameters is reused, whichever node asked.
The cache is bounded by [conductor]iso_cache_size: past it, the least
recently used ISOs that no BMC is being served go (cache_eviction.py).
"""

import hashlib
import os
import tempfile
import threading

from baremetal.common import exception
from baremetal.drivers.modules import cache_eviction
from baremetal.drivers.modules import efi_image
from baremetal.drivers.modules import image_cache

_LOCK = threading.Lock()

_ISOLINUX_CFG = """default boot
prompt 0
timeout 0
label boot
  kernel /vmlinuz
  append initrd=/initrd %s
"""


def _dir(conf) -> str:
    path = os.path.join(os.path.expanduser(conf.state_path), 'isos')
    os.makedirs(path, exist_ok=True)
    return path


def check_loader(conf) -> None:
    """The boot loader files exist (validation: a clear message)."""
    for option in ('isolinux_bin', 'ldlinux_c32'):
        path = getattr(conf, option)
        if not path or not os.path.isfile(path):
            raise exception.InvalidParameterValue(
                'Cannot build boot ISOs: [DEFAULT]%s %s does not exist on '
                'the conductor host (Debian: install isolinux and '
                'syslinux-common)' % (option, path))


def _check(conf, params: str) -> None:
    check_loader(conf)
    if any(c in params for c in '\n\r'):
        raise exception.InvalidParameterValue(
            'Kernel parameters must be one line, got %r' % params)


def build(conf, kernel: str, ramdisk: str, params: str,
          esp: str | None = None) -> str:
    """Path of an ISO booting ``kernel`` + ``ramdisk`` (local files)
    with kernel command line ``params``, by UEFI too when ``esp`` (an
    ESP image) is given; built unless cached."""
    _check(conf, params)
    key = hashlib.sha256('\0'.join((
        image_cache.content_key(kernel), image_cache.content_key(ramdisk),
        image_cache.content_key(conf.isolinux_bin),
        image_cache.content_key(conf.ldlinux_c32), params,
        image_cache.content_key(esp) if esp else '')).encode()
    ).hexdigest()
    target = os.path.join(_dir(conf), key + '.iso')
    with _LOCK, cache_eviction.pinned(target):
        if not os.path.exists(target):
            _write(conf, kernel, ramdisk, params, target, esp)
        cache_eviction.touch(target)
        cache_eviction.evict(_dir(conf),
                             conf.conductor.iso_cache_size * (1 << 20))
    return target


def write(conf, kernel: str, ramdisk: str, params: str,
          target: str, esp: str | None = None) -> None:
    """Build the ISO at ``target``, uncached: for a command line that
    holds a secret (the agent token), which no other boot may reuse and
    which goes with the boot.  The ESP image is only copied in: cheap."""
    _check(conf, params)
    _write(conf, kernel, ramdisk, params, target, esp)


def _add_uefi(iso, params: str, esp: str) -> None:
    """The ESP image as the EFI El Torito entry, and the GRUB menu."""
    import io
    for path in ('/EFI', '/EFI/BOOT', '/BOOT', '/BOOT/GRUB'):
        name = path.rsplit('/', 1)[1]
        rr = name.lower() if path.startswith('/BOOT') else name
        iso.add_directory(path, rr_name=rr,
                          joliet_path='/' + '/'.join(
                              p.lower() if path.startswith('/BOOT') else p
                              for p in path.strip('/').split('/')))
    cfg = efi_image.menu(params).encode()
    for rr_path in efi_image.MENU_PATHS:
        head, name = rr_path.rsplit('/', 1)
        stem, ext = name.split('.')
        iso_path = '%s/%s.%s;1' % (head.upper(), stem[:8].upper(),
                                   ext.upper())
        iso.add_fp(io.BytesIO(cfg), len(cfg), iso_path, rr_name=name,
                   joliet_path=rr_path)
    # what Debian's signed GRUB (grub-efi-amd64-signed) searches for to
    # find the ISO, before reading its /boot/grub/grub.cfg
    iso.add_directory('/DISK', rr_name='.disk', joliet_path='/.disk')
    info = b'baremetal boot ISO\n'
    iso.add_fp(io.BytesIO(info), len(info), '/DISK/INFO.;1',
               rr_name='info', joliet_path='/.disk/info')
    iso.add_file(esp, '/EFIBOOT.IMG;1', rr_name='efiboot.img',
                 joliet_path='/efiboot.img')
    iso.add_eltorito('/EFIBOOT.IMG;1', '/ISOLINUX/BOOT.CAT;1',
                     rr_bootcatname='boot.cat',
                     joliet_bootcatfile='/isolinux/boot.cat', efi=True,
                     platform_id=0xef)


def _write(conf, kernel, ramdisk, params, target, esp=None) -> None:
    import pycdlib
    iso = pycdlib.PyCdlib()
    iso.new(interchange_level=3, rock_ridge='1.09', joliet=3,
            vol_ident='BAREMETAL_BOOT')
    iso.add_directory('/ISOLINUX', rr_name='isolinux',
                      joliet_path='/isolinux')
    files = [(conf.isolinux_bin, '/ISOLINUX/ISOLINUX.BIN;1',
              'isolinux.bin', '/isolinux/isolinux.bin'),
             (conf.ldlinux_c32, '/ISOLINUX/LDLINUX.C32;1', 'ldlinux.c32',
              '/isolinux/ldlinux.c32'),
             (kernel, '/VMLINUZ.;1', 'vmlinuz', '/vmlinuz'),
             (ramdisk, '/INITRD.;1', 'initrd', '/initrd')]
    for src, path, rr, joliet in files:
        iso.add_file(src, path, rr_name=rr, joliet_path=joliet)
    cfg = (_ISOLINUX_CFG % params).encode()
    import io
    iso.add_fp(io.BytesIO(cfg), len(cfg), '/ISOLINUX/ISOLINUX.CFG;1',
               rr_name='isolinux.cfg', joliet_path='/isolinux/isolinux.cfg')
    iso.add_eltorito('/ISOLINUX/ISOLINUX.BIN;1', '/ISOLINUX/BOOT.CAT;1',
                     rr_bootcatname='boot.cat',
                     joliet_bootcatfile='/isolinux/boot.cat',
                     boot_load_size=4, boot_info_table=True)
    if esp:
        _add_uefi(iso, params, esp)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix='.tmp')
    os.close(fd)
    try:
        iso.write(tmp)
        os.replace(tmp, target)
    except Exception:
        os.unlink(tmp)
        raise
    finally:
        iso.close()
