"""Boot ISOs for virtual media: isolinux for legacy BIOS and, with an
EFI System Partition image, a second El Torito entry for UEFI firmware
and the GRUB menu carrying the same command line (the agent token
included); the ESP image built with GRUB and cached by its inputs, or
the operator's; validation naming the packages and options."""

import io
import os
import shutil
import subprocess
import types

import pycdlib
import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import conductor as conductor_conf
from baremetal.conf import default as default_conf
from baremetal.conf import deploy as deploy_conf
from baremetal.drivers.modules import boot_iso
from baremetal.drivers.modules import efi_image

ISOLINUX = ('/usr/lib/ISOLINUX/isolinux.bin',
            '/usr/lib/syslinux/modules/bios/ldlinux.c32')
needs_isolinux = pytest.mark.skipif(
    not all(os.path.isfile(p) for p in ISOLINUX),
    reason='isolinux is not installed (tools/install-vm-deps installs it)')
needs_grub = pytest.mark.skipif(
    bool(efi_image.missing_tools()),
    reason='grub-efi-amd64-bin, dosfstools or mtools is not installed '
           '(tools/install-vm-deps installs them)')
PARAMS = 'console=ttyS0 ipa-agent-token=T0k3n_- foo="a b" x=$y;z'


@pytest.fixture
def conf(tmp_path):
    c = cfg.ConfigOpts()
    default_conf.register_opts(c)
    conductor_conf.register_opts(c)
    deploy_conf.register_opts(c)
    c([])
    c.set_override('state_path', str(tmp_path / 'state'))
    c.set_override('isolinux_bin', ISOLINUX[0])
    c.set_override('ldlinux_c32', ISOLINUX[1])
    c.set_override('file_url_allowed_paths', [str(tmp_path / 'allowed')],
                   group='conductor')
    (tmp_path / 'allowed').mkdir()
    return c


@pytest.fixture
def images(tmp_path):
    (tmp_path / 'kernel').write_bytes(b'kernel' * 100)
    (tmp_path / 'initrd').write_bytes(b'initrd' * 100)
    (tmp_path / 'esp.img').write_bytes(b'ESP!' * 1024)
    return tmp_path


def _task(conf, **driver_info):
    return types.SimpleNamespace(
        node=types.SimpleNamespace(uuid='n1', driver_info=driver_info),
        conductor=types.SimpleNamespace(conf=conf))


def _open(path):
    iso = pycdlib.PyCdlib()
    iso.open(str(path))
    return iso


def _read(iso, rr_path) -> bytes:
    out = io.BytesIO()
    iso.get_file_from_iso_fp(out, rr_path=rr_path)
    return out.getvalue()


def _entries(iso, path) -> list[tuple[int, bytes]]:
    """(platform id, first bytes of the boot image) of each El Torito
    entry of the ISO at ``path``."""
    cat = iso.eltorito_boot_catalog
    found = [(cat.validation_entry.platform_id, cat.initial_entry)]
    found += [(s.platform_id, e) for s in cat.sections
              for e in s.section_entries]
    out = []
    with open(path, 'rb') as f:
        for pid, entry in found:
            f.seek(entry.load_rba * 2048)
            out.append((pid, f.read(4)))
    return out


@needs_isolinux
def test_without_an_esp_the_iso_boots_bios_only(conf, images, tmp_path):
    out = tmp_path / 'bios.iso'
    boot_iso.write(conf, str(images / 'kernel'), str(images / 'initrd'),
                   PARAMS, str(out))
    iso = _open(out)
    try:
        assert [pid for pid, _ in _entries(iso, out)] == [0]
        assert PARAMS in _read(iso, '/isolinux/isolinux.cfg').decode()
    finally:
        iso.close()


@needs_isolinux
def test_with_an_esp_both_firmwares_boot_the_same_command_line(
        conf, images, tmp_path):
    out = tmp_path / 'both.iso'
    boot_iso.write(conf, str(images / 'kernel'), str(images / 'initrd'),
                   PARAMS, str(out), str(images / 'esp.img'))
    iso = _open(out)
    try:
        entries = _entries(iso, out)
        # isolinux first (BIOS, platform 0), the ESP image (platform EFI)
        assert [pid for pid, _ in entries] == [0, 0xef]
        assert entries[1][1] == b'ESP!'
        assert _read(iso, '/efiboot.img') == b'ESP!' * 1024
        menus = {p: _read(iso, p).decode() for p in efi_image.MENU_PATHS}
        assert len(set(menus.values())) == 1
        menu = menus[efi_image.SEARCH_FILE]
        # GRUB's quoting undone gives the kernel the very line isolinux has
        assert ('linux /vmlinuz console=ttyS0 ipa-agent-token=T0k3n_- '
                'foo=\\"a b\\" x=\\$y\\;z\n') in menu
        assert 'initrd /initrd\n' in menu
        assert _read(iso, '/vmlinuz') == b'kernel' * 100
        # what Debian's signed GRUB searches for before its
        # /boot/grub/grub.cfg
        assert _read(iso, '/.disk/info')
        assert PARAMS in _read(iso, '/isolinux/isolinux.cfg').decode()
    finally:
        iso.close()


@needs_isolinux
def test_cached_isos_differ_by_esp(conf, images):
    args = (conf, str(images / 'kernel'), str(images / 'initrd'), 'x=1')
    bios = boot_iso.build(*args)
    both = boot_iso.build(*args, esp=str(images / 'esp.img'))
    assert bios != both
    assert boot_iso.build(*args, esp=str(images / 'esp.img')) == both


def _esp_file(path, name, dest) -> bytes:
    env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
    subprocess.run(['mcopy', '-i', path, '::' + name, str(dest)], env=env,
                   check=True)
    return dest.read_bytes()


@pytest.mark.skipif(not efi_image.signed_loaders() or
                    bool(efi_image.missing_tools()),
                    reason='shim-signed and grub-efi-amd64-signed are not '
                           'installed (tools/install-vm-deps installs them)')
def test_built_esp_holds_the_signed_loaders_when_installed(conf, tmp_path):
    """shim as BOOTX64.EFI, Debian's signed GRUB beside it, and the
    search for the ISO's menu where that GRUB reads its configuration."""
    path = efi_image.build(conf)
    with open(efi_image.SHIM, 'rb') as f:
        assert _esp_file(path, '/EFI/BOOT/BOOTX64.EFI',
                         tmp_path / 'a') == f.read()
    with open(efi_image.SIGNED_GRUB, 'rb') as f:
        assert _esp_file(path, '/EFI/BOOT/grubx64.efi',
                         tmp_path / 'b') == f.read()
    assert _esp_file(path, efi_image.SIGNED_GRUB_CFG, tmp_path / 'c') == \
        efi_image.EMBEDDED_CFG.encode()
    assert efi_image.boots_signed(_task(conf)) is True


@needs_grub
def test_built_esp_holds_grub_that_finds_the_isos_menu(conf, tmp_path,
                                                       monkeypatch):
    """Without the signed loaders: a GRUB built here (no Secure Boot)."""
    monkeypatch.setattr(efi_image, 'signed_loaders', lambda: False)
    assert efi_image.boots_signed(_task(conf)) is False
    path = efi_image.build(conf)
    assert efi_image.build(conf) == path        # cached by its inputs
    env = dict(os.environ, MTOOLS_SKIP_CHECK='1')
    out = subprocess.run(['mdir', '-b', '-i', path, '::/EFI/BOOT'],
                         capture_output=True, text=True, env=env,
                         check=True).stdout
    assert '::/EFI/BOOT/BOOTX64.EFI' in out
    dest = tmp_path / 'BOOTX64.EFI'
    subprocess.run(['mcopy', '-i', path, '::/EFI/BOOT/BOOTX64.EFI',
                    str(dest)], env=env, check=True)
    data = dest.read_bytes()
    assert data[:2] == b'MZ'
    # the embedded configuration (GRUB's memdisk: an uncompressed tar)
    assert efi_image.EMBEDDED_CFG.encode() in data


def test_uefi_node_without_tools_or_image_fails_naming_them(
        conf, monkeypatch):
    monkeypatch.setattr(shutil, 'which', lambda name: None)
    with pytest.raises(exception.InvalidParameterValue) as e:
        efi_image.check(_task(conf), required=True)
    msg = str(e.value)
    for word in ('grub-efi-amd64-bin', 'mtools', 'dosfstools',
                 'driver_info bootloader', '[conductor]bootloader'):
        assert word in msg
    # a node that does not ask for UEFI: a BIOS-only ISO, no error
    assert efi_image.check(_task(conf), required=False) is False


def test_operator_image_must_be_an_allowed_existing_file(
        conf, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, 'which', lambda name: None)
    with pytest.raises(exception.InvalidParameterValue,
                       match='driver_info bootloader of node n1.*not '
                             'allowed'):
        efi_image.check(_task(conf, bootloader=str(tmp_path / 'x.img')),
                        required=True)
    missing = tmp_path / 'allowed' / 'none.img'
    with pytest.raises(exception.InvalidParameterValue,
                       match='does not exist'):
        efi_image.check(_task(conf, bootloader=str(missing)), True)
    good = tmp_path / 'allowed' / 'esp.img'
    good.write_bytes(b'ESP!')
    conf.set_override('bootloader', str(good), group='conductor')
    task = _task(conf)
    assert efi_image.check(task, required=True) is True
    # fetched into the image cache: a copy or link of that file
    with efi_image.got(task) as path:
        assert open(path, 'rb').read() == b'ESP!'


@pytest.fixture
def redfish_api(tmp_path):
    from tests import harness
    h = harness.Harness(tmp_path, overrides={
        'enabled_hardware_types': ['redfish'],
        'enabled_power_interfaces': ['redfish'],
        'enabled_management_interfaces': ['redfish'],
        'enabled_boot_interfaces': ['redfish-virtual-media'],
        'enabled_deploy_interfaces': ['direct'],
        'enabled_bios_interfaces': ['no-bios'],
        'enabled_inspect_interfaces': ['no-inspect'],
        'enabled_raid_interfaces': ['no-raid'],
        'isolinux_bin': ISOLINUX[0], 'ldlinux_c32': ISOLINUX[1]})
    yield h
    h.close()


@needs_isolinux
def test_validate_of_a_uefi_node_names_the_packages_and_options(
        redfish_api, tmp_path, monkeypatch):
    for name in ('kernel', 'initrd', 'esp.img'):
        (tmp_path / name).write_bytes(b'x')
    monkeypatch.setattr(efi_image, 'missing_tools',
                        lambda: ['grub-mkstandalone (grub-efi-amd64-bin)'])
    n = redfish_api.create_node(
        driver='redfish', properties={'capabilities': 'boot_mode:uefi'},
        driver_info={'redfish_address': 'http://127.0.0.1:1',
                     'redfish_system_id': '/redfish/v1/Systems/1',
                     'deploy_kernel': str(tmp_path / 'kernel'),
                     'deploy_ramdisk': str(tmp_path / 'initrd')})
    path = '/v1/nodes/%s/validate' % n['uuid']
    _, v, _ = redfish_api.request('GET', path)
    assert v['boot']['result'] is False
    for words in ('grub-efi-amd64-bin', 'driver_info bootloader',
                  '[conductor]bootloader'):
        assert words in v['boot']['reason'], v['boot']
    # the operator's image: a file inside the allowed paths
    status, body, _ = redfish_api.request(
        'PATCH', '/v1/nodes/%s' % n['uuid'],
        [{'op': 'add', 'path': '/driver_info/bootloader',
          'value': str(tmp_path / 'esp.img')}])
    assert status == 200, body
    _, v, _ = redfish_api.request('GET', path)
    assert v['boot']['result'] is True, v['boot']
    # nor does a node that asks for no mode: [deploy]default_boot_mode,
    # uefi by default, applies
    status, body, _ = redfish_api.request(
        'PATCH', '/v1/nodes/%s' % n['uuid'],
        [{'op': 'remove', 'path': '/driver_info/bootloader'},
         {'op': 'remove', 'path': '/properties/capabilities'}])
    assert status == 200, body
    _, v, _ = redfish_api.request('GET', path)
    assert v['boot']['result'] is False
    assert 'grub-efi-amd64-bin' in v['boot']['reason']
    # a BIOS node needs neither
    status, body, _ = redfish_api.request(
        'PATCH', '/v1/nodes/%s' % n['uuid'],
        [{'op': 'add', 'path': '/properties/capabilities',
          'value': 'boot_mode:bios'}])
    assert status == 200, body
    _, v, _ = redfish_api.request('GET', path)
    assert v['boot']['result'] is True, v['boot']


@needs_isolinux
def test_the_iso_cache_keeps_to_its_size(conf, images, tmp_path):
    """iso_cache_size 0: an ISO no BMC is served goes when the next one
    is built; one published (linked under http_root) stays."""
    conf.set_override('iso_cache_size', 0, group='conductor')
    first = boot_iso.build(conf, str(images / 'kernel'),
                           str(images / 'initrd'), 'a=1')
    served = tmp_path / 'served.iso'
    os.link(first, served)                  # a BMC is being served it
    second = boot_iso.build(conf, str(images / 'kernel'),
                            str(images / 'initrd'), 'a=2')
    assert os.path.exists(first) and os.path.exists(second)
    os.unlink(served)                       # withdrawn
    third = boot_iso.build(conf, str(images / 'kernel'),
                           str(images / 'initrd'), 'a=3')
    assert not os.path.exists(first) and not os.path.exists(second)
    assert os.path.exists(third)
    # a reused ISO is the most recently used one
    assert boot_iso.build(conf, str(images / 'kernel'),
                          str(images / 'initrd'), 'a=3') == third
