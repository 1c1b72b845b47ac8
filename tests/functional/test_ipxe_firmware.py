"""boot.ipxe, as the conductor writes it, run by a real iPXE under UEFI
firmware: QEMU with OVMF and the EFI iPXE of QEMU's virtio network card
ROM (Debian packages qemu-system-x86, ovmf, ipxe-qemu), whose user-mode
DHCP hands it the script.  No disk, no agent: the script's choices are
what is checked, from the HTTP requests and the serial console.

* with a script for the NIC that booted, iPXE chains to it (and
  ``${platform}`` is ``efi``; the option ROM's iPXE sees only its own
  NIC, so this is net0 too);
* without one, it ends with ``exit 1``: the firmware goes on to its next
  boot entry (OVMF's last is its shell), never ``sanboot``;
* before any of that, where firmware loads iPXE over TFTP (no iPXE in
  the NIC's ROM): OVMF's PXE asks as x86-64 UEFI (option 93 = 7), runs
  the ``snponly.efi`` it is given, and that iPXE asks DHCP again with
  option 175, as the iPXE guide's dnsmasq example relies on (this one
  needs Debian's package ipxe).

Skipped where QEMU, OVMF or the ROM is missing.  About 20-60 s each
under software emulation."""

import http.server
import os
import shutil
import subprocess
import threading
import time
import types

import pytest

from baremetal.drivers.modules import ipxe
from tests.functional import pcap as pcap_file

QEMU = shutil.which('qemu-system-x86_64')
OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd'
OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd'
ROM = '/usr/lib/ipxe/qemu/efi-virtio.rom'
MAC = '52:54:00:5e:7a:01'
TIMEOUT = 180

pytestmark = pytest.mark.skipif(
    not (QEMU and all(os.path.exists(p)
                      for p in (OVMF_CODE, OVMF_VARS, ROM))),
    reason='needs qemu-system-x86_64, OVMF (package ovmf) and the EFI '
           'iPXE ROM (package ipxe-qemu)')


class Files:
    """A web server for the VM (10.0.2.2 is the host's loopback):
    http_root, recording every request with its User-Agent."""

    def __init__(self, root):
        self.requests = []
        files = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(root), **kw)

            def log_message(self, *args):
                pass

            def send_head(self):
                files.requests.append(
                    (self.command, self.path,
                     self.headers.get('User-Agent', '')))
                return super().send_head()

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                     Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever,
                         daemon=True).start()

    def ipxe_paths(self):
        return [p for _, p, agent in self.requests if 'iPXE' in agent]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def files(tmp_path):
    root = tmp_path / 'httpboot'
    root.mkdir()
    f = Files(root)
    conf = types.SimpleNamespace(
        state_path=str(tmp_path), deploy=types.SimpleNamespace(
            http_root=str(root), http_server_enabled=False,
            http_url='http://10.0.2.2:%d' % f.port,
            external_http_url=None))
    ipxe.write_boot_script(conf)
    f.root = root
    f.base = conf.deploy.http_url
    yield f
    f.stop()


def _machine(tmp_path, port):
    vars_fd = tmp_path / 'vars.fd'
    shutil.copy(OVMF_VARS, vars_fd)
    serial = tmp_path / 'serial.log'
    proc = subprocess.Popen([  # noqa: S603 (fixed arguments)
        QEMU, '-machine', 'q35', '-m', '512', '-display', 'none',
        '-monitor', 'none', '-serial', 'file:%s' % serial, '-no-reboot',
        '-drive', 'if=pflash,format=raw,readonly=on,file=%s' % OVMF_CODE,
        '-drive', 'if=pflash,format=raw,file=%s' % vars_fd,
        '-netdev', 'user,id=n0,bootfile=http://10.0.2.2:%d/boot.ipxe'
        % port,
        '-device', 'virtio-net-pci,netdev=n0,mac=%s,romfile=%s,'
        'bootindex=1' % (MAC, ROM)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, serial


def _until(check, proc, serial, what):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if check():
            return
        assert proc.poll() is None, 'QEMU ended: %s' % _text(serial)
        time.sleep(0.5)
    raise AssertionError('no %s within %d s; console:\n%s'
                         % (what, TIMEOUT, _text(serial)[-3000:]))


def _text(serial):
    try:
        return serial.read_bytes().decode('utf-8', 'replace')
    except FileNotFoundError:
        return ''


def _stop(proc):
    proc.kill()
    proc.wait(30)


def test_uefi_ipxe_chains_to_the_script_of_the_nic_that_booted(
        files, tmp_path):
    mac_script = files.root / 'ipxe' / ('%s.ipxe' % MAC.replace(':', '-'))
    mac_script.parent.mkdir()
    mac_script.write_text('#!ipxe\nchain %s/reached/${platform}\n'
                          % files.base)
    proc, serial = _machine(tmp_path, files.port)
    try:
        _until(lambda: '/reached/efi' in files.ipxe_paths(), proc, serial,
               'chain to the per-MAC script')
    finally:
        _stop(proc)
    paths = files.ipxe_paths()
    assert paths[:2] == ['/boot.ipxe', '/ipxe/%s.ipxe'
                         % MAC.replace(':', '-')], paths


def test_uefi_ipxe_without_a_script_exits_to_the_next_boot_entry(
        files, tmp_path):
    proc, serial = _machine(tmp_path, files.port)
    script = '/ipxe/%s.ipxe' % MAC.replace(':', '-')
    try:
        # the entry after iPXE's is OVMF's own PXE (then IPv6, HTTP
        # boot, the shell: each may wait for the network, minutes under
        # software emulation); that it starts is what shows iPXE exited
        _until(lambda: script in files.ipxe_paths() and (
            _next_entry(_text(serial)) or 'Shell>' in _text(serial)),
            proc, serial, 'next boot entry after iPXE')
    finally:
        _stop(proc)
    paths = files.ipxe_paths()
    assert paths and paths[0] == '/boot.ipxe', paths
    assert script in paths, paths
    console = _text(serial)
    assert 'sanboot' not in console.lower() and \
        'SAN device' not in console, console[-3000:]


def _next_entry(console: str) -> bool:
    """OVMF started a boot entry after iPXE ended: its own PXE (or a
    later entry) says so on the console after iPXE's last words."""
    ended = console.rfind('Could not boot image')
    return ended != -1 and any(
        console.find(mark, ended) != -1 for mark in (
            '>>Start PXE over IPv4', '>>Start PXE over IPv6',
            '>>Start HTTP Boot', 'BdsDxe: loading Boot'))


SNPONLY = '/usr/lib/ipxe/snponly.efi'     # Debian's package ipxe


def _dhcp_requests(pcap: bytes) -> list[dict]:
    """The DHCP options (number -> bytes) of each packet a client sent
    to a DHCP server (UDP port 67) in a pcap capture of Ethernet
    frames."""
    out = []
    for frame in pcap_file.frames(pcap):
        ip = pcap_file.ipv4(frame)
        if ip is None or ip[0] != 17:
            continue                            # not IPv4 UDP
        udp = ip[3]
        if int.from_bytes(udp[2:4], 'big') != 67:
            continue
        bootp = udp[8:]
        if bootp[0] != 1 or bootp[236:240] != b'\x63\x82\x53\x63':
            continue                            # not a BOOTREQUEST
        out.append(pcap_file.dhcp_options(bootp))
    return out


@pytest.mark.skipif(not os.path.exists(SNPONLY),
                    reason='needs Debian\'s iPXE builds (package ipxe)')
def test_uefi_firmware_pxe_loads_snponly_efi_which_then_asks_as_ipxe(
        tmp_path):
    """The first stage of the iPXE guide's DHCP example, with OVMF's
    own PXE client (the NIC has no option ROM): the firmware asks with
    option 93 = 7 (x86-64 UEFI) and without option 175, is given
    ``snponly.efi`` (QEMU's TFTP server), runs it, and that iPXE asks
    DHCP again with option 175, the tag the example hands boot.ipxe
    to.  QEMU's DHCP hands every client the same file, so the chain
    stops here (the tests/vm ones start at the second stage)."""
    tftp = tmp_path / 'tftp'
    tftp.mkdir()
    shutil.copy(SNPONLY, tftp / 'snponly.efi')
    vars_fd = tmp_path / 'vars.fd'
    shutil.copy(OVMF_VARS, vars_fd)
    serial, pcap = tmp_path / 'serial.log', tmp_path / 'net.pcap'
    proc = subprocess.Popen([  # noqa: S603 (fixed arguments)
        QEMU, '-machine', 'q35', '-m', '512', '-display', 'none',
        '-monitor', 'none', '-serial', 'file:%s' % serial, '-no-reboot',
        '-drive', 'if=pflash,format=raw,readonly=on,file=%s' % OVMF_CODE,
        '-drive', 'if=pflash,format=raw,file=%s' % vars_fd,
        '-netdev', 'user,id=n0,tftp=%s,bootfile=snponly.efi' % tftp,
        '-object', 'filter-dump,id=d0,netdev=n0,file=%s' % pcap,
        '-device', 'virtio-net-pci,netdev=n0,mac=%s,romfile=,bootindex=1'
        % MAC], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ipxe_asked():
        return any(175 in r for r in _dhcp_requests(
            pcap.read_bytes() if pcap.exists() else b''))
    try:
        _until(ipxe_asked, proc, serial, 'DHCP request from iPXE')
    finally:
        _stop(proc)
    requests = _dhcp_requests(pcap.read_bytes())
    firmware = [r for r in requests if 175 not in r]
    assert firmware, requests
    # client system architecture 7: EFI x86-64 (RFC 4578, IANA)
    assert firmware[0].get(93) == b'\x00\x07', firmware[0]
    assert b'PXEClient:Arch:00007' in firmware[0].get(60, b''), firmware[0]
    console = _text(serial)
    assert 'iPXE' in console, console[-3000:]
