"""The EFI System Partition image that makes a boot ISO bootable by UEFI
firmware: a FAT image holding ``EFI/BOOT/BOOTX64.EFI``, added to the ISO
as a second El Torito entry (platform EFI) beside isolinux.

Either the operator supplies it (``driver_info['bootloader']``, else
``[conductor]bootloader``: a URL or a local file inside
``[conductor]file_url_allowed_paths``, as Ironic's options), or it is
built here from Debian's packages: ``grub-mkstandalone`` (grub-efi-amd64-bin)
makes a GRUB EFI binary whose embedded configuration finds the ISO by
``SEARCH_FILE`` and reads the menu the ISO carries there (the kernel, the
initramfs and the command line of that ISO, the agent token included);
``mkfs.vfat`` (dosfstools) and ``mcopy`` (mtools) make the FAT image.
Where Debian's signed boot loaders are installed (shim-signed and
grub-efi-amd64-signed), the image holds them instead, so that the ISO
boots with Secure Boot on: shim (signed by the UEFI CA firmware trusts)
as ``BOOTX64.EFI``, Debian's signed GRUB beside it as ``grubx64.efi``,
which reads ``EFI/debian/grub.cfg`` (its built-in prefix) holding the
same search for the ISO's menu; that GRUB boots only kernels signed by
Debian (the agent ramdisk's kernel is Debian's).
The built image depends on nothing a boot changes, so it is cached by
its inputs under ``$state_path/esp`` and shared by every ISO.
"""

import collections.abc
import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

from baremetal.common import exception
from baremetal.drivers.modules import image_cache

_LOCK = threading.Lock()
GRUB_PLATFORM = 'x86_64-efi'
GRUB_DIR = '/usr/lib/grub/' + GRUB_PLATFORM
# where the ISO carries its GRUB menu: SEARCH_FILE is what the built boot
# loader looks for; the two others are where a signed GRUB of an
# operator-supplied image commonly looks
SEARCH_FILE = '/EFI/BOOT/baremetal.cfg'
MENU_PATHS = (SEARCH_FILE, '/EFI/BOOT/grub.cfg', '/boot/grub/grub.cfg')
# Debian's signed boot loaders (shim-signed, grub-efi-amd64-signed)
SHIM = '/usr/lib/shim/shimx64.efi.signed'
SIGNED_GRUB = '/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed'
# where that GRUB reads its configuration (its built-in prefix)
SIGNED_GRUB_CFG = '/EFI/debian/grub.cfg'
# the tools, and the Debian package of each
FAT_TOOLS = (('mkfs.vfat', 'dosfstools'), ('mcopy', 'mtools'),
             ('mmd', 'mtools'))
TOOLS = (('grub-mkstandalone', 'grub-efi-amd64-bin'),) + FAT_TOOLS
# built into the core image; every other module is in its memdisk
MODULES = ('linux', 'normal', 'configfile', 'search', 'search_fs_file',
           'iso9660', 'fat', 'part_gpt', 'part_msdos', 'echo', 'sleep',
           'test')

EMBEDDED_CFG = """\
search --no-floppy --set=root --file %(file)s
if [ -n "$root" ]; then
    configfile ($root)%(file)s
fi
echo "baremetal: no device holds %(file)s: is the boot ISO inserted?"
sleep 30
""" % {'file': SEARCH_FILE}

# characters GRUB's script parser would interpret: escaped, so the
# kernel gets the command line as written
_GRUB_SPECIAL = set('\\"\'$;&|<>{}()#`*?[]!~')


def menu(params: str) -> str:
    """The GRUB menu an ISO carries: /vmlinuz and /initrd of the ISO,
    with kernel command line ``params``."""
    escaped = ''.join('\\' + c if c in _GRUB_SPECIAL else c
                      for c in params)
    return ('set timeout=0\nset default=0\n'
            'menuentry "baremetal" {\n'
            '    linux /vmlinuz %s\n'
            '    initrd /initrd\n'
            '}\n' % escaped)


def operator_image(task) -> tuple[str | None, str]:
    """(source, field) of the operator's ESP image: driver_info
    bootloader, else [conductor]bootloader; source None when neither."""
    node = task.node
    value = (node.driver_info or {}).get('bootloader')
    if value:
        return value, 'driver_info bootloader of node %s' % node.uuid
    return (task.conductor.conf.conductor.bootloader or None,
            '[conductor]bootloader (node %s)' % node.uuid)


def signed_loaders() -> bool:
    """Are Debian's signed shim and GRUB installed here?"""
    return os.path.isfile(SHIM) and os.path.isfile(SIGNED_GRUB)


def missing_tools() -> list[str]:
    """What building an ESP image lacks here: 'tool (package)' items."""
    signed = signed_loaders()
    out = ['%s (%s)' % (t, p) for t, p in (FAT_TOOLS if signed else TOOLS)
           if shutil.which(t) is None]
    if not signed and not os.path.isdir(GRUB_DIR):
        out.append('%s (grub-efi-amd64-bin)' % GRUB_DIR)
    return out


def boots_signed(task) -> bool:
    """Does the node's ESP image boot with Secure Boot on?  The one
    built here does when it holds the signed loaders; an operator's
    image is taken to (Secure Boot needs one that does: documented)."""
    if operator_image(task)[0]:
        return True
    return signed_loaders()


def check(task, required: bool) -> bool:
    """Can an ESP image be had for this node?  The operator's image is
    checked (a local file must be allowed and exist); else the tools.
    With ``required`` (the node boots in UEFI mode) a missing one is
    InvalidParameterValue naming the packages and the options."""
    source, field = operator_image(task)
    if source:
        image_cache.check_source(task.conductor.conf, source, field)
        return True
    missing = missing_tools()
    if missing and required:
        raise exception.InvalidParameterValue(
            'Node %s boots in UEFI mode but its boot ISO cannot carry a '
            'UEFI boot loader: %s missing on the conductor host (Debian: '
            'apt install grub-efi-amd64-bin dosfstools mtools), and no '
            'ESP image is given in driver_info bootloader or '
            '[conductor]bootloader' % (task.node.uuid, ', '.join(missing)))
    return not missing


@contextlib.contextmanager
def got(task) -> collections.abc.Iterator[str]:
    """Local path of the node's ESP image: the operator's (fetched into
    the image cache, kept there while the block runs) or the one built
    here (cached)."""
    conf = task.conductor.conf
    source, field = operator_image(task)
    if not source:
        yield build(conf)
        return
    with image_cache.fetched(conf, source, field=field) as path:
        yield path


def _inputs_key() -> str:
    if signed_loaders():
        parts = ['signed', image_cache.content_key(SHIM),
                 image_cache.content_key(SIGNED_GRUB), EMBEDDED_CFG]
        return hashlib.sha256('\0'.join(parts).encode()).hexdigest()
    grub = os.path.realpath(shutil.which('grub-mkstandalone') or '')
    parts = [image_cache.content_key(grub),
             image_cache.content_key(os.path.join(GRUB_DIR, 'linux.mod')),
             image_cache.content_key(os.path.join(GRUB_DIR,
                                                  'moddep.lst')),
             EMBEDDED_CFG, ' '.join(MODULES)]
    return hashlib.sha256('\0'.join(parts).encode()).hexdigest()


def build(conf) -> str:
    """Path of the built ESP image, built unless cached."""
    missing = missing_tools()
    if missing:
        raise exception.InvalidParameterValue(
            'Cannot build the UEFI boot loader image: %s missing on the '
            'conductor host' % ', '.join(missing))
    path = os.path.join(os.path.expanduser(conf.state_path), 'esp')
    os.makedirs(path, exist_ok=True)
    target = os.path.join(path, _inputs_key() + '.img')
    with _LOCK:
        if not os.path.exists(target):
            _write(target)
    return target


def _run(cmd: list[str], **kw) -> None:
    try:
        subprocess.run(cmd, check=True, capture_output=True, **kw)
    except subprocess.CalledProcessError as e:
        raise exception.InstanceDeployFailure(
            '%s failed building the UEFI boot loader image: %s' % (
                cmd[0], (e.stderr or b'').decode(errors='replace')[-1000:])
        ) from None


def _write(target: str) -> None:
    work = tempfile.mkdtemp(dir=os.path.dirname(target))
    try:
        cfg = os.path.join(work, 'grub.cfg')
        with open(cfg, 'w') as f:
            f.write(EMBEDDED_CFG)
        if signed_loaders():
            # shim first; it loads grubx64.efi from its own directory
            files = [(SHIM, '::/EFI/BOOT/BOOTX64.EFI'),
                     (SIGNED_GRUB, '::/EFI/BOOT/grubx64.efi'),
                     (cfg, '::' + SIGNED_GRUB_CFG),
                     (cfg, '::/EFI/BOOT/grub.cfg')]
        else:
            efi = os.path.join(work, 'BOOTX64.EFI')
            _run(['grub-mkstandalone', '-O', GRUB_PLATFORM,
                  '-d', GRUB_DIR, '-o', efi,
                  '--modules=%s' % ' '.join(MODULES),
                  '--locales=', '--fonts=', '--themes=',
                  'boot/grub/grub.cfg=%s' % cfg])
            files = [(efi, '::/EFI/BOOT/BOOTX64.EFI')]
        # FAT: the files plus room for the file system's own sectors
        kib = sum(os.path.getsize(f) for f, _ in files) // 1024 + 1024
        img = os.path.join(work, 'esp.img')
        _run(['mkfs.vfat', '-C', '-n', 'BM_ESP', img, str(kib)])
        env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
        _run(['mmd', '-i', img, '::/EFI', '::/EFI/BOOT', '::/EFI/debian'],
             env=env)
        for src, dest in files:
            _run(['mcopy', '-i', img, src, dest], env=env)
        os.replace(img, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
