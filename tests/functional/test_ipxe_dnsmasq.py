"""The iPXE guide's dnsmasq example (doc/source/admin/ipxe.rst, "A
dnsmasq example"), read from the guide and run by a real dnsmasq
(Debian package dnsmasq-base), with a real baremetal-server, for two
machines booting from the network at once: a UEFI one (QEMU with OVMF,
whose own PXE client loads iPXE over TFTP) and a legacy BIOS one
(SeaBIOS with the BIOS iPXE of QEMU's network card ROM).

Everything happens in a network namespace the test makes and deletes:
a bridge named as the example's ``interface=`` with the address of the
example's boot.ipxe URL, one tap per machine.  The example is used as
printed; only its ``tftp-root`` is replaced (TFTP_ROOT below) by a
directory of the test holding copies of Debian's iPXE builds, and the
test adds options of its own on dnsmasq's command line only (no DNS,
files in the test's directory).  The server runs in the namespace with
``[deploy]http_server_host``/``http_server_port`` from the example's
URL, and boots the agent of one node per machine (cleaning), so
boot.ipxe and the per-MAC scripts are the conductor's own.

What each machine was given and what it asked is read from a capture
of its network card (QEMU's filter-dump), and dnsmasq's log:

* the UEFI firmware asks with option 93 = 7 and no option 175, is given
  ``snponly.efi``, fetches it over TFTP and runs it; that iPXE asks
  again with option 175 and is given the conductor's boot.ipxe, which
  chains to the script of its MAC, which fetches the agent's kernel;
* the BIOS machine's iPXE asks with option 93 = 0 and option 175, is
  given boot.ipxe directly, and goes on the same way;
* the first stage of legacy BIOS (a PXE ROM that is not iPXE: option
  93 = 0, no option 175) has no firmware in Debian that the test could
  run (QEMU's BIOS network ROMs are all iPXE), so the test sends such a
  ROM's DHCP discovery itself, from a veth on the bridge, and checks
  that the example offers ``undionly.kpxe`` and serves it over TFTP;
* a UEFI machine whose MAC has no script runs boot.ipxe to its
  ``exit 1``, and OVMF goes on to its next boot entry (with a plain
  ``exit``, a success, it showed its menu instead).

Skipped where root, ip netns, dnsmasq, QEMU, OVMF or the iPXE builds
are missing; a failure instead with CI=true or
BAREMETAL_REQUIRE_SERVICES=1.  About a minute under software emulation
(the first two machines boot side by side, about 30 s; the last one
about 30 s)."""

import contextlib
import ctypes
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.parse

import pytest

from tests import services
from tests.functional import bmc_server as bs
from tests.functional import pcap as pcap_file
from tests.functional import processes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, 'doc', 'source', 'admin', 'ipxe.rst')
DNSMASQ = shutil.which('dnsmasq') or (
    '/usr/sbin/dnsmasq' if os.path.exists('/usr/sbin/dnsmasq') else None)
QEMU = shutil.which('qemu-system-x86_64')
OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd'
OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd'
# QEMU's virtio card ROM (EFI and BIOS iPXE), its default
ROM = '/usr/lib/ipxe/qemu/efi-virtio.rom'
IPXE_BUILDS = ('/usr/lib/ipxe/snponly.efi', '/usr/lib/ipxe/undionly.kpxe')
# the one path of the example the test replaces
TFTP_ROOT = '/srv/tftp'
UEFI_MAC = '52:54:00:5e:7b:01'
BIOS_MAC = '52:54:00:5e:7b:02'
PXE_ROM_MAC = '52:54:00:5e:7b:03'
EXIT_MAC = '52:54:00:5e:7b:04'
TIMEOUT = 240
CLONE_NEWNET = 0x40000000

ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return 'needs root (network namespace, taps)'
    missing = [what for what, ok in (
        ('ip (package iproute2)', shutil.which('ip')),
        ('dnsmasq (package dnsmasq-base)', DNSMASQ),
        ('qemu-system-x86_64 (package qemu-system-x86)', QEMU),
        ('OVMF (package ovmf)', os.path.exists(OVMF_CODE)),
        ('QEMU\'s iPXE ROM (package ipxe-qemu)', os.path.exists(ROM)),
        ('Debian\'s iPXE builds (package ipxe)',
         all(os.path.exists(p) for p in IPXE_BUILDS)),
        ('/dev/net/tun', os.path.exists('/dev/net/tun'))) if not ok]
    if missing:
        return 'missing: %s (tools/install-vm-deps)' % ', '.join(missing)
    return None


def _unavailable(why: str):
    msg = 'the dnsmasq example cannot run here: %s' % why
    if services.required():
        pytest.fail(msg)
    pytest.skip(msg)


# -- the example, from the guide ------------------------------------------

def example() -> str:
    """The literal block under "A dnsmasq example", unindented."""
    with open(GUIDE) as f:
        text = f.read()
    section = text.split('\nA dnsmasq example\n', 1)[1]
    block = section.split('::\n\n', 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith('    '):
            break
        lines.append(line[4:])
    return '\n'.join(lines).strip() + '\n'


def _setting(conf: str, key: str) -> list[str]:
    """The values of ``key=`` lines, without their comments."""
    return [line.split('=', 1)[1].split('#')[0].strip()
            for line in conf.splitlines() if line.startswith(key + '=')]


# -- a network namespace ----------------------------------------------------

class Netns:
    """A network namespace of the test's own; deleting it removes every
    link in it."""

    def __init__(self, name: str) -> None:
        self.name = name
        out = subprocess.run(['ip', 'netns', 'add', name],
                             capture_output=True, text=True)
        if out.returncode != 0:
            _unavailable('ip netns add: %s' % out.stderr.strip())

    def ip(self, *args: str) -> None:
        subprocess.run(['ip', '-n', self.name, *args], check=True,
                       capture_output=True)

    def popen(self, argv: list, **kw) -> subprocess.Popen:
        # ip netns exec runs argv in place of itself: same PID
        return subprocess.Popen(  # noqa: S603 (the test's own arguments)
            ['ip', 'netns', 'exec', self.name, *argv], **kw)

    def call(self, fn, *args):
        """fn(*args) in a thread that has entered the namespace (a
        thread's network namespace is its own): the sockets it opens are
        in the namespace."""
        out: dict = {}

        def run():
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open('/run/netns/%s' % self.name, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), 'setns')
            finally:
                os.close(fd)
            try:
                out['value'] = fn(*args)
            except BaseException as e:        # noqa: B036 (re-raised)
                out['error'] = e
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join()
        if 'error' in out:
            raise out['error']
        return out.get('value')

    def delete(self) -> None:
        subprocess.run(['ip', 'netns', 'delete', self.name],
                       capture_output=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class Server(processes.Service):
    """baremetal-server inside the namespace."""

    def __init__(self, netns: Netns, *args, **kw) -> None:
        self.netns = netns
        super().__init__(*args, **kw)

    def start(self, wait: bool = True) -> 'Server':
        with open(self.log_file, 'ab') as log:
            self.proc = self.netns.popen(
                [os.path.join(processes.BIN, self.command),
                 '--config-file', self.conf_file],
                stdout=log, stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONWARNINGS='ignore'))
        self.netns.call(self.wait_http, 60)
        return self


@pytest.fixture(scope='module')
def bed(tmp_path_factory):
    """The namespace, its bridge, the server (one node per machine, its
    agent to be booted) and dnsmasq with the guide's example."""
    why = _why_not()
    if why:
        _unavailable(why)
    tmp = tmp_path_factory.mktemp('ipxe-dnsmasq')
    conf_text = example()
    (interface,) = _setting(conf_text, 'interface')
    script_url = [v.split(',')[-1] for v in _setting(conf_text, 'dhcp-boot')
                  if v.startswith('tag:ipxe,')]
    assert len(script_url) == 1, conf_text
    url = urllib.parse.urlsplit(script_url[0])
    assert url.path == '/boot.ipxe', script_url
    assert conf_text.count(TFTP_ROOT) >= 1, conf_text

    with contextlib.ExitStack() as stack:
        netns = Netns('bm-ipxe-%d' % os.getpid())
        stack.callback(netns.delete)
        netns.ip('link', 'set', 'lo', 'up')
        netns.ip('link', 'add', interface, 'type', 'bridge')
        netns.ip('addr', 'add', '%s/24' % url.hostname, 'dev', interface)
        netns.ip('link', 'set', interface, 'up')

        images = tmp / 'images'
        images.mkdir()
        (images / 'ipa.kernel').write_bytes(b'not a kernel ' * 64)
        (images / 'ipa.initramfs').write_bytes(b'not an initramfs ' * 64)
        sconf = processes.base_conf(
            tmp, conductor={'check_provision_state_interval': 1,
                            'automated_clean': 'false',
                            'file_url_allowed_paths': [str(images)]},
            deploy={'http_server_host': url.hostname,
                    'http_server_port': url.port or 80})
        sconf['DEFAULT'].update({
            'enabled_deploy_interfaces': ['fake', 'direct'],
            'enabled_boot_interfaces': ['fake', 'ipxe']})
        server = Server(netns, 'baremetal-server', tmp, 'server', sconf,
                        port=6385)
        stack.callback(server.stop)
        try:
            server.start()
        except RuntimeError as e:
            pytest.fail(str(e))
        nodes = netns.call(_agent_nodes, server, images)

        tftp = tmp / 'tftp'
        tftp.mkdir()
        for path in IPXE_BUILDS:
            shutil.copy(path, tftp / os.path.basename(path))
        conf = tmp / 'dnsmasq.conf'
        conf.write_text(conf_text.replace(TFTP_ROOT, str(tftp)))
        log = tmp / 'dnsmasq.log'
        dnsmasq = netns.popen(
            [DNSMASQ, '--conf-file=%s' % conf, '--keep-in-foreground',
             # the test's own: no DNS, its files, root (the test's
             # directories are private), a log of each DHCP exchange
             '--port=0', '--user=root', '--group=root',
             '--pid-file=%s' % (tmp / 'dnsmasq.pid'),
             '--dhcp-leasefile=%s' % (tmp / 'leases'),
             '--log-facility=%s' % log, '--log-dhcp'],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        stack.callback(_stop, dnsmasq)
        deadline = time.monotonic() + 30
        while 'TFTP root is' not in (log.read_text() if log.exists()
                                     else ''):
            if dnsmasq.poll() is not None:
                pytest.fail('dnsmasq refused the example: %s'
                            % dnsmasq.stderr.read().decode())
            assert time.monotonic() < deadline, 'dnsmasq did not start'
            time.sleep(0.1)
        yield _Bed(netns, interface, url, server, nodes, tmp, log)


class _Bed:
    def __init__(self, netns, interface, url, server, nodes, tmp, log):
        self.netns = netns
        self.interface = interface
        self.url = url
        self.server = server
        self.nodes = nodes
        self.tmp = tmp
        self.log = log

    def dnsmasq_log(self) -> str:
        return self.log.read_text()


def _agent_nodes(server, images) -> dict:
    """One node per machine, in clean wait: the conductor has written
    boot.ipxe and the script of the node's MAC.  {mac: node uuid}."""
    out = {}
    for mac in (UEFI_MAC, BIOS_MAC):
        n = bs.create(server, driver='fake-hardware',
                      deploy_interface='direct', boot_interface='ipxe',
                      driver_info={
                          'deploy_kernel': str(images / 'ipa.kernel'),
                          'deploy_ramdisk': str(images / 'ipa.initramfs')})
        status, body = bs.http(server, 'POST', '/v1/ports',
                               {'address': mac, 'node_uuid': n['uuid']})
        assert status == 201, body
        for target, state in (('manage', 'manageable'),
                              ('clean', 'clean wait')):
            extra = {'clean_steps': ERASE} if target == 'clean' else {}
            status, body = bs.http(
                server, 'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
                dict(extra, target=target))
            assert status == 202, body
            bs.wait(server, n['uuid'],
                    lambda node, s=state: node['provision_state'] == s,
                    60, 'provision state %s' % state)
        out[mac] = n['uuid']
    return out


# -- what a machine's network card saw --------------------------------------

def _bootfile(bootp: bytes, options: dict) -> str:
    name = options.get(67) or bootp[108:236]
    return name.split(b'\0', 1)[0].decode('ascii', 'replace')


def events(pcap: bytes, mac: str) -> list[tuple]:
    """What crossed the card of the machine with ``mac``, in order (DHCP
    broadcasts for the other machines are left out):
    ('ask', options) a DHCP request (DISCOVER/REQUEST),
    ('given', boot file) a DHCP answer, ('tftp', file name) a TFTP read
    request, ('get', path) an HTTP GET."""
    out = []
    mac_bytes = bytes.fromhex(mac.replace(':', ''))
    for frame in pcap_file.frames(pcap):
        ip = pcap_file.ipv4(frame)
        if ip is None:
            continue
        proto, _, _, data = ip
        if proto == 17 and len(data) >= 8:
            sport, dport = struct.unpack('!HH', data[:4])
            body = data[8:]
            if sport in (67, 68) and body[28:34] != mac_bytes:
                continue
            if dport == 67 and body[:1] == b'\x01':
                out.append(('ask', pcap_file.dhcp_options(body)))
            elif sport == 67 and body[:1] == b'\x02':
                out.append(('given', _bootfile(
                    body, pcap_file.dhcp_options(body))))
            elif dport == 69 and body[:2] == b'\x00\x01':
                out.append(('tftp', body[2:].split(b'\0')[0].decode()))
        elif proto == 6 and len(data) >= 20:
            body = data[(data[12] >> 4) * 4:]
            if body.startswith(b'GET '):
                out.append(('get', body.split(b' ')[1].decode()))
    return out


# -- the machines -----------------------------------------------------------

class Machine:
    def __init__(self, bed, tmp, name: str, mac: str, uefi: bool) -> None:
        self.name = name
        self.mac = mac
        self.pcap = tmp / ('%s.pcap' % name)
        self.serial = tmp / ('%s.serial' % name)
        tap = 'tap-%s' % name
        bed.netns.ip('tuntap', 'add', tap, 'mode', 'tap')
        bed.netns.ip('link', 'set', tap, 'master', bed.interface)
        bed.netns.ip('link', 'set', tap, 'up')
        argv = [QEMU, '-machine', 'q35' if uefi else 'pc', '-m', '256',
                '-display', 'none', '-monitor', 'none', '-no-reboot',
                '-serial', 'file:%s' % self.serial]
        if uefi:
            vars_fd = tmp / ('%s-vars.fd' % name)
            shutil.copy(OVMF_VARS, vars_fd)
            argv += ['-drive', 'if=pflash,format=raw,readonly=on,file=%s'
                     % OVMF_CODE,
                     '-drive', 'if=pflash,format=raw,file=%s' % vars_fd,
                     # no IPv6 PXE entry (no DHCPv6 waits)
                     '-fw_cfg', 'name=opt/org.tianocore/IPv6PXESupport,'
                     'string=n']
        # UEFI: no ROM, the firmware's own PXE client; BIOS: the BIOS
        # iPXE of the card's default ROM (SeaBIOS has no network stack of
        # its own; naming the ROM's path, SeaBIOS did not run it)
        rom = ',romfile=' if uefi else ''
        argv += ['-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no,'
                 'vnet_hdr=off' % tap,
                 '-object', 'filter-dump,id=d0,netdev=n0,file=%s'
                 % self.pcap,
                 '-device', 'virtio-net-pci,netdev=n0,mac=%s,bootindex=1%s'
                 % (mac, rom)]
        self.proc = bed.netns.popen(argv, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)

    def events(self) -> list[tuple]:
        return events(self.pcap.read_bytes() if self.pcap.exists()
                      else b'', self.mac)

    def console(self) -> str:
        try:
            return self.serial.read_bytes().decode('utf-8', 'replace')
        except FileNotFoundError:
            return ''

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)


def _wait_all(machines, done, bed) -> None:
    deadline = time.monotonic() + TIMEOUT
    waiting = list(machines)
    while waiting:
        for m in list(waiting):
            if done(m):
                waiting.remove(m)
            elif m.proc.poll() is not None:
                raise AssertionError('QEMU (%s) ended: %s\n%s' % (
                    m.name, m.proc.stderr.read().decode(), m.console()))
        if time.monotonic() > deadline:
            raise AssertionError(
                'not done within %d s: %s\n%s' % (TIMEOUT, '\n'.join(
                    '%s: %s\nconsole: %s' % (m.name, m.events(),
                                             m.console()[-2000:])
                    for m in waiting), bed.dnsmasq_log()[-3000:]))
        time.sleep(0.5)


def _arch(options: dict) -> int | None:
    value = options.get(93)
    return int.from_bytes(value, 'big') if value else None


def test_each_firmware_is_given_its_ipxe_then_the_conductors_script(
        bed, tmp_path):
    machines = []
    try:
        machines.append(Machine(bed, tmp_path, 'uefi', UEFI_MAC, True))
        machines.append(Machine(bed, tmp_path, 'bios', BIOS_MAC, False))
        kernels = {m.name: '/ipxe/%s/kernel' % bed.nodes[m.mac]
                   for m in machines}
        _wait_all(machines, lambda m: ('get', kernels[m.name])
                  in m.events(), bed)
    finally:
        for m in machines:
            m.stop()
    uefi, bios = machines
    script = bed.url.geturl()
    for m in machines:
        got = [(kind, what) for kind, what in m.events() if kind == 'get']
        # boot.ipxe, then the script of the machine's own MAC, which
        # fetches the agent's kernel
        assert got[:3] == [
            ('get', '/boot.ipxe'),
            ('get', '/ipxe/%s.ipxe' % m.mac.replace(':', '-')),
            ('get', kernels[m.name])], (m.name, m.events())

    # UEFI: the firmware (option 93 = 7, no 175) is given snponly.efi,
    # fetches it over TFTP; that iPXE (175) is given boot.ipxe
    seen = uefi.events()
    asks = [e[1] for e in seen if e[0] == 'ask']
    firmware = [o for o in asks if 175 not in o]
    ipxe = [o for o in asks if 175 in o]
    assert firmware and ipxe, seen
    assert {_arch(o) for o in firmware} == {7}, firmware
    assert {_arch(o) for o in ipxe} == {7}, ipxe
    answers = [e[1] for e in seen if e[0] == 'given']
    first_ipxe = seen.index(('ask', ipxe[0]))
    assert set(a for k, a in seen[:first_ipxe] if k == 'given') == {
        'snponly.efi'}, seen
    assert ('tftp', 'snponly.efi') in seen[:first_ipxe], seen
    assert set(a for k, a in seen[first_ipxe:] if k == 'given') == {
        script}, answers

    # legacy BIOS: QEMU's ROM is iPXE (option 93 = 0 and 175): boot.ipxe
    # straight away, nothing over TFTP
    seen = bios.events()
    asks = [e[1] for e in seen if e[0] == 'ask']
    assert asks and all(175 in o and _arch(o) == 0 for o in asks), seen
    assert {a for k, a in seen if k == 'given'} == {script}, seen
    assert not [e for e in seen if e[0] == 'tftp'], seen

    log = bed.dnsmasq_log()
    assert re.search(r'sent \S+/snponly\.efi to ', log), log[-3000:]
    assert 'undionly.kpxe' not in log, log[-3000:]


# -- a legacy BIOS PXE ROM, played by the test -------------------------------

def _checksum(header: bytes) -> int:
    total = sum(struct.unpack('!%dH' % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def _pxe_rom_frame(mac: bytes, xid: int, kind: int, extra=()) -> bytes:
    """A DHCP request as a PXE 2.1 BIOS ROM sends it (PXE spec; RFC
    4578): client architecture 0 (x86 BIOS), UNDI 2.1, no option 175,
    broadcast from 0.0.0.0, in an Ethernet frame."""
    options = [(53, bytes([kind])), (57, struct.pack('!H', 1260)),
               (93, b'\x00\x00'), (94, b'\x01\x02\x01'),
               (97, b'\x00' + bytes(range(16))),
               (60, b'PXEClient:Arch:00000:UNDI:002001'),
               (55, bytes([1, 3, 43, 54, 60, 66, 67, 128, 129, 130, 131,
                           132, 133, 134, 135])), *extra]
    bootp = struct.pack('!BBBBIHH4s4s4s4s16s64s128s', 1, 1, 6, 0, xid, 0,
                        0, bytes(4), bytes(4), bytes(4), bytes(4), mac,
                        b'', b'')
    bootp += b'\x63\x82\x53\x63' + b''.join(
        bytes([code, len(value)]) + value for code, value in options)
    bootp += b'\xff'
    udp = struct.pack('!HHHH', 68, 67, 8 + len(bootp), 0) + bootp
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17,
                     0, bytes(4), b'\xff' * 4)
    ip = ip[:10] + struct.pack('!H', _checksum(ip)) + ip[12:]
    return b'\xff' * 6 + mac + b'\x08\x00' + ip + udp


def _pxe_rom(link: str, mac: str, server: str) -> dict:
    """DISCOVER, OFFER, REQUEST, ACK on ``link`` (raw frames: no address
    yet), then a TFTP read of the boot file it was given.  What it was
    given: {'offer', 'ack': (boot file, next server), 'file': bytes}."""
    raw_mac = bytes.fromhex(mac.replace(':', ''))
    xid = int.from_bytes(os.urandom(4), 'big')
    out = {}
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                       socket.htons(0x0800)) as s:
        s.bind((link, 0))
        s.settimeout(1)

        def answer(kind: int) -> bytes:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    frame = s.recv(4096)
                except TimeoutError:
                    continue
                ip = pcap_file.ipv4(frame)
                if ip is None or ip[0] != 17:
                    continue
                body = ip[3][8:]
                if body[:1] == b'\x02' and \
                        struct.unpack('!I', body[4:8])[0] == xid and \
                        pcap_file.dhcp_options(body).get(53) == bytes([kind]):
                    return body
            raise AssertionError('no DHCP answer %d from the example' % kind)

        s.send(_pxe_rom_frame(raw_mac, xid, 1))
        offer = answer(2)
        options = pcap_file.dhcp_options(offer)
        out['offer'] = (_bootfile(offer, options),
                        socket.inet_ntoa(offer[20:24]))
        s.send(_pxe_rom_frame(raw_mac, xid, 3, [
            (50, offer[16:20]), (54, options[54])]))
        ack = answer(5)
        out['ack'] = (_bootfile(ack, pcap_file.dhcp_options(ack)),
                      socket.inet_ntoa(ack[20:24]))
        out['address'] = socket.inet_ntoa(ack[16:20])
    return out


def _tftp_read(server: str, name: str) -> bytes:
    data = b''
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(10)
        s.sendto(b'\x00\x01' + name.encode() + b'\x00octet\x00',
                 (server, 69))
        block = 1
        while True:
            packet, peer = s.recvfrom(4 + 512)
            opcode, number = struct.unpack('!HH', packet[:4])
            assert opcode == 3, packet      # DATA, not ERROR
            if number == block:
                data += packet[4:]
                block += 1
            s.sendto(struct.pack('!HH', 4, number), peer)
            if len(packet) < 4 + 512:
                return data


def test_a_legacy_bios_pxe_rom_is_given_undionly_kpxe(bed):
    """A machine on the bridge of its own namespace (veth): its PXE
    ROM's DHCP (option 93 = 0, no 175) is answered with undionly.kpxe,
    which the example's TFTP server serves as Debian ships it."""
    client = Netns('bm-ipxe-rom-%d' % os.getpid())
    try:
        bed.netns.ip('link', 'add', 'rom0', 'type', 'veth', 'peer', 'name',
                     'rom1', 'netns', client.name)
        bed.netns.ip('link', 'set', 'rom0', 'master', bed.interface)
        bed.netns.ip('link', 'set', 'rom0', 'up')
        client.ip('link', 'set', 'rom1', 'address', PXE_ROM_MAC)
        client.ip('link', 'set', 'rom1', 'up')
        got = client.call(_pxe_rom, 'rom1', PXE_ROM_MAC, bed.url.hostname)
        assert got['offer'] == ('undionly.kpxe', bed.url.hostname), got
        assert got['ack'] == ('undionly.kpxe', bed.url.hostname), got
        client.ip('addr', 'add', '%s/24' % got['address'], 'dev', 'rom1')
        data = client.call(_tftp_read, got['ack'][1], got['ack'][0])
    finally:
        client.delete()       # the veth's two ends go with it
    with open('/usr/lib/ipxe/undionly.kpxe', 'rb') as f:
        assert data == f.read()
    log = bed.dnsmasq_log()
    assert re.search(r'sent \S+/undionly\.kpxe to %s' % re.escape(
        got['address']), log), log[-3000:]


def _boot_manager(console: str) -> list[tuple[str, str]]:
    """What OVMF's boot manager did, in order: (what, entry), e.g.
    ('failed to start', 'UEFI PXEv4 (MAC:...)')."""
    return re.findall(r'BdsDxe: (loading|starting|failed to start|failed '
                      r'to load) Boot[0-9A-F]{4} "([^"]*)"', console)


def _next_entry(m) -> list[tuple]:
    """What crossed the card once the boot entry OVMF tried after iPXE
    returned asked DHCP: its HTTP boot client (vendor class
    HTTPClient), the entry that follows PXEv4 for the same card."""
    seen = m.events()
    ipxe = [i for i, (kind, o) in enumerate(seen)
            if kind == 'ask' and 175 in o]
    if not ipxe:
        return []
    for i in range(ipxe[-1] + 1, len(seen)):
        kind, o = seen[i]
        if kind == 'ask' and o.get(60, b'').startswith(b'HTTPClient'):
            return seen[i:]
    return []


def test_uefi_machine_without_a_script_goes_on_to_the_next_boot_entry(
        bed, tmp_path):
    """A UEFI machine whose MAC has no script (no node boots its
    agent): boot.ipxe ends with ``exit 1``, the PXE entry fails, and
    OVMF's boot manager goes on to its next boot entry (OVMF's HTTP boot
    of the same card, which asks DHCP as such).  (With a plain
    ``exit``, a success, it stopped at its menu, UiApp, as the UEFI
    spec says a boot manager may.)"""
    m = Machine(bed, tmp_path, 'exit', EXIT_MAC, True)
    try:
        # or its menu: then the assertions below say what it did
        _wait_all([m], lambda m: 'given' in [
            kind for kind, _ in _next_entry(m)] or 'UiApp' in [
            entry for _, entry in _boot_manager(m.console())], bed)
    finally:
        m.stop()
    gets = [what for kind, what in m.events() if kind == 'get']
    assert gets[:2] == ['/boot.ipxe', '/ipxe/%s.ipxe'
                        % EXIT_MAC.replace(':', '-')], m.events()
    assert not [g for g in gets if g.startswith('/ipxe/') and
                not g.endswith('.ipxe')], gets
    seen = _boot_manager(m.console())
    assert ('failed to start', 'UEFI PXEv4 (MAC:%s)'
            % EXIT_MAC.replace(':', '').upper()) in seen, seen
    assert 'UiApp' not in [entry for _, entry in seen], seen
    # the next entry, OVMF's HTTP boot over the same card, asks DHCP
    # (option 93 = 16: x64 UEFI HTTP) and the example gives it no iPXE
    nxt = _next_entry(m)
    assert _arch(nxt[0][1]) == 16, m.events()
    assert {what for kind, what in nxt if kind == 'given'} == {''}, nxt
    assert 'sanboot' not in m.console().lower(), m.console()[-3000:]
