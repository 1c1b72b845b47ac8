"""The VM test bed: a QEMU machine run by a libvirtd the tests start,
controlled through a real BMC (the sushy-tools Redfish emulator on its
libvirt driver), booting the ironic-python-agent ramdisk that
``tools/build-ramdisk`` builds.

Networking never leaves the machine: the VM has one NIC on QEMU's
user-mode network.  Inside it the host is 10.0.2.2, which QEMU maps to the
host's loopback, so the VM reaches the service on 127.0.0.1; the agent's
port 9999 is forwarded from a free port on 127.0.0.1, which is what the
agent advertises (``ipa-advertise-host``/``-port``).

Every daemon and VM started here is stopped by its PID or its libvirt
UUID at the end; a libvirtd that was already running is used and left
alone.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from xml.sax.saxutils import escape

import pytest

from tests.functional import processes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
LIBVIRT_URI = 'qemu:///system'
LIBVIRT_SOCK = '/run/libvirt/libvirt-sock'
AGENT_PORT = 9999          # ironic-python-agent's default listen port
GIB = 1024 ** 3
# every VM test module: pytestmark = bed.MARKS or bed.MARKS_B.  Each
# xdist group runs on one worker, one machine at a time; the two groups
# run side by side on the two workers of the suite (tools/run-tests),
# sharing one libvirtd (shared_libvirtd).  Balance them by their times
# (doc/source/contributor/testing.rst).
MARKS = [pytest.mark.vm, pytest.mark.xdist_group('vm')]
MARKS_B = [pytest.mark.vm, pytest.mark.xdist_group('vm-b')]


def why_not() -> str | None:
    """Why the VM tests cannot run here, or None."""
    if sys.platform != 'linux':
        return 'the VM test bed needs Linux'
    if os.geteuid() != 0:
        return 'the VM test bed needs root (libvirtd, debootstrap)'
    missing = [b for b in ('qemu-system-x86_64', 'qemu-img', 'libvirtd',
                           'virtlogd', 'debootstrap')
               if shutil.which(b) is None]
    if missing:
        return ('%s not installed: run tools/install-vm-deps'
                % ', '.join(missing))
    try:
        import libvirt  # noqa: F401
    except ImportError:
        return ('libvirt-python is not installed: run tools/install-vm-deps'
                ' then tools/bootstrap')
    return None


def kvm_usable() -> bool:
    try:
        fd = os.open('/dev/kvm', os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    return True


def accel() -> str:
    """'kvm', or 'tcg' (software emulation, several times slower).

    KVM must be able to run a firmware's and boot loader's real-mode
    code: under PVM (a KVM that needs no hardware virtualisation, seen on
    some cloud machines as the ``kvm_pvm`` module) SeaBIOS starts but
    isolinux and OVMF stop with "KVM internal error ... emulation
    failure", so TCG is used there.  BAREMETAL_VM_ACCEL=kvm|tcg decides.
    """
    if os.environ.get('BAREMETAL_VM_ACCEL') in ('kvm', 'tcg'):
        return os.environ['BAREMETAL_VM_ACCEL']
    if os.path.exists('/sys/module/kvm_pvm'):
        return 'tcg'
    return 'kvm' if kvm_usable() else 'tcg'


def accel_note() -> str:
    if accel() == 'kvm':
        return 'kvm'
    if os.path.exists('/sys/module/kvm_pvm'):
        why = 'this KVM is PVM, which cannot run boot loaders'
    elif os.environ.get('BAREMETAL_VM_ACCEL') == 'tcg':
        why = 'BAREMETAL_VM_ACCEL=tcg'
    else:
        why = 'no usable /dev/kvm'
    return 'tcg (%s: software emulation, timeouts x%g)' % (
        why, timeout_factor())


def timeout_factor() -> float:
    return 1.0 if accel() == 'kvm' else 3.0


def ramdisk() -> tuple[str, str]:
    """(kernel, initramfs) of the agent ramdisk, built once per machine
    (``tools/build-ramdisk`` caches it by its inputs)."""
    import fcntl
    # both workers' VM groups ask at once: one builds, the other waits
    # and finds it cached
    with open('/tmp/baremetal-vm-ramdisk.lock', 'a+') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = subprocess.run(
            [os.path.join(ROOT, 'tools', 'build-ramdisk')],
            capture_output=True, text=True,
            env=dict(os.environ, PYTHON=sys.executable))
    if out.returncode != 0:
        raise RuntimeError('tools/build-ramdisk failed:\n%s'
                           % out.stderr[-4000:])
    kernel, initramfs = out.stdout.split()[-2:]
    return kernel, initramfs


def _libvirt_answers() -> bool:
    import libvirt
    try:
        libvirt.open(LIBVIRT_URI).close()
        return True
    except libvirt.libvirtError:
        return False


# Ports picked now and bound later: QEMU binds a machine's forwarded port
# again at every power on, the conductor its file server's port when it
# first publishes a boot ISO (minutes into a test). A port of the
# kernel's ephemeral range, free when picked, may meanwhile be the local
# end of any outgoing connection ("Could not set up host forwarding rule"
# failed a deploy in CI, "No socket could be created ... Address already
# in use" a cleaning). So they come from below that range, from a window
# of their own per xdist worker (the two VM groups run side by side),
# above the fixed ports of the peers the suite runs.
LATE_PORTS = (20000, 24000)
_handed_out: set[int] = set()


def late_port() -> int:
    """A free loopback TCP port that something binds later, outside the
    ephemeral range where the machine has one."""
    import random
    import socket
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 0
    lo, hi = LATE_PORTS
    if ephemeral_low <= hi:
        return processes.free_port()
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    if worker.startswith('gw') and worker[2:].isdigit():
        n = int(worker[2:]) % 2
        half = (hi - lo) // 2
        lo, hi = lo + n * half, lo + (n + 1) * half
    for _ in range(200):
        port = random.randrange(lo, hi)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(('127.0.0.1', port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    return processes.free_port()


class Libvirt:
    """virtlogd and libvirtd in the foreground, as our children."""

    def __init__(self, tmp) -> None:
        self.tmp = str(tmp)
        self.procs: list[subprocess.Popen] = []

    def start(self) -> 'Libvirt':
        import libvirt
        libvirt.registerErrorHandler(lambda *a: None, None)
        if _libvirt_answers():
            return self
        log = open(os.path.join(self.tmp, 'libvirtd.log'), 'ab')
        for cmd in (['virtlogd'], ['libvirtd']):
            self.procs.append(subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT))
            time.sleep(0.2)
        log.close()
        deadline = time.monotonic() + 30
        while not _libvirt_answers():
            if time.monotonic() > deadline or any(
                    p.poll() is not None for p in self.procs):
                self.stop()
                raise RuntimeError('libvirtd did not start:\n%s' % open(
                    os.path.join(self.tmp, 'libvirtd.log'),
                    errors='replace').read()[-3000:])
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []


def _conn():
    import libvirt
    return libvirt.open(LIBVIRT_URI)


# OVMF without Secure Boot (Debian's ovmf): the pflash pair libvirt and
# sushy-tools give a UEFI machine
OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd'
OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd'
# Secure Boot (Debian's ovmf): the firmware that enforces it needs a q35
# machine with SMM; its variables with Microsoft's keys enrolled (what
# shim is signed with) turn it on, the empty ones leave it off
OVMF_CODE_SECURE = '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd'
OVMF_VARS_SECURE = '/usr/share/OVMF/OVMF_VARS_4M.ms.fd'
# QEMU's own SeaBIOS: sushy-tools names it for the Legacy boot mode (a
# 'rom' loader without a path is refused by libvirt)
SEABIOS = '/usr/share/seabios/bios-256k.bin'


class Machine:
    """One libvirt domain: a 4 GiB raw disk (the smallest the agent will
    install on), one user-mode NIC, its serial console in a file.
    ``firmware``: 'bios' (SeaBIOS), 'uefi' (OVMF, its variables in a
    copy of OVMF_VARS libvirt keeps per machine) or 'uefi-secure' (a q35
    machine with SMM and the OVMF that enforces Secure Boot, which is
    on: Microsoft's keys are enrolled)."""

    def __init__(self, tmp, name: str = 'bm', memory_mib: int = 1536,
                 boot_url: str | None = None,
                 firmware: str = 'bios', disks: int = 1,
                 nics: int = 1) -> None:
        self.dir = os.path.join(str(tmp), name)
        os.makedirs(self.dir, exist_ok=True)
        self.name = 'baremetal-test-%s-%s' % (name, uuidlib.uuid4().hex[:8])
        self.uuid = str(uuidlib.uuid4())
        self.mac = '52:54:00:%02x:%02x:%02x' % tuple(os.urandom(3))
        self.disk = os.path.join(self.dir, 'disk.img')
        # vda, vdb, ...: the first is self.disk
        self.disks = [self.disk] + [
            os.path.join(self.dir, 'disk%d.img' % (i + 1))
            for i in range(1, disks)]
        # the second and later NICs: QEMU user-mode networks of their
        # own (10.0.3.0/24, ...), so that the agent's answers on the
        # first one's forwarded port leave by the first one
        self.macs = [self.mac] + [
            '52:54:00:%02x:%02x:%02x' % tuple(os.urandom(3))
            for _ in range(1, nics)]
        self.serial = os.path.join(self.dir, 'serial.log')
        self.agent_port = late_port()
        self.memory_mib = memory_mib
        self.boot_url = boot_url
        self.firmware = firmware
        self.pool_name = 'bm-test-%s' % uuidlib.uuid4().hex[:8]
        self.pool_dir = os.path.join(self.dir, 'pool')
        self._pool = None
        self._dom = None

    def xml(self) -> str:
        kind = accel()
        netdev = ('user,id=bmnet,hostfwd=tcp:127.0.0.1:%d-:%d'
                  % (self.agent_port, AGENT_PORT))
        if self.boot_url:
            netdev += ',bootfile=%s' % self.boot_url
        q35 = self.firmware == 'uefi-secure'
        nic = ('virtio-net-pci,netdev=bmnet,mac=%s,bus=%s,addr=0x10'
               % (self.mac, 'pcie.0' if q35 else 'pci.0'))
        # qemu64 (plain "host" aborts on an MSR on some hosts); libvirt's
        # qemu64 names svm, which an Intel host lacks: not checked
        cpu = ("<cpu mode='custom' match='exact' check='none'>"
               "<model fallback='allow'>qemu64</model>"
               "<feature policy='disable' name='svm'/></cpu>"
               if kind == 'kvm' else '')
        machine = 'q35' if q35 else 'pc'
        return f"""
<domain type='{'kvm' if kind == 'kvm' else 'qemu'}'
        xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>{self.name}</name>
  <uuid>{self.uuid}</uuid>
  <memory unit='MiB'>{self.memory_mib}</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='{machine}'>hvm</type>{self._loader()}</os>
  {cpu}
  <features><acpi/><apic/>{"<smm state='on'/>" if q35 else ''}</features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{shutil.which('qemu-system-x86_64')}</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='unsafe'/>
      <source file='{escape(self.disk)}'/>
      <target dev='vda' bus='virtio'/>
      <boot order='1'/>
    </disk>{self._more_disks()}
    {'' if q35 else "<controller type='ide' index='0'/>"}
    <serial type='file'>
      <source path='{escape(self.serial)}'/>
      <target port='0'/>
    </serial>
    <memballoon model='none'/>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-netdev'/>
    <qemu:arg value='{escape(netdev)}'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='{nic}'/>{self._more_nics(q35)}
  </qemu:commandline>
</domain>"""

    def _more_disks(self) -> str:
        return ''.join(f"""
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='unsafe'/>
      <source file='{escape(path)}'/>
      <target dev='vd{chr(ord("a") + i)}' bus='virtio'/>
    </disk>""" for i, path in enumerate(self.disks) if i)

    def _more_nics(self, q35: bool) -> str:
        out = ''
        for i, mac in enumerate(self.macs):
            if not i:
                continue
            out += (f"""
    <qemu:arg value='-netdev'/>
    <qemu:arg value='user,id=bmnet{i},net=10.0.{2 + i}.0/24'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='virtio-net-pci,netdev=bmnet{i},mac={mac},"""
                    f"""bus={"pcie.0" if q35 else "pci.0"},"""
                    f"""addr={hex(0x10 + i)}'/>""")
        return out

    def _loader(self) -> str:
        if self.firmware == 'uefi-secure':
            # as sushy-tools writes it when it turns Secure Boot on
            return ("<loader readonly='yes' secure='yes' type='pflash'>%s"
                    "</loader><nvram template='%s'/>"
                    % (OVMF_CODE_SECURE, OVMF_VARS_SECURE))
        if self.firmware != 'uefi':
            return ''
        # as sushy-tools writes it when it switches a machine to UEFI
        return ("<loader readonly='yes' secure='no' type='pflash'>%s"
                "</loader><nvram template='%s'/>" % (OVMF_CODE, OVMF_VARS))

    def create(self, disk_gib: int = 4) -> 'Machine':
        for path in self.disks:
            with open(path, 'wb') as f:
                f.truncate(disk_gib * GIB)
        os.makedirs(self.pool_dir, exist_ok=True)
        conn = _conn()
        try:
            # where sushy-tools puts the virtual media it downloads
            self._pool = conn.storagePoolCreateXML(
                "<pool type='dir'><name>%s</name><target><path>%s</path>"
                "</target></pool>" % (self.pool_name,
                                      escape(self.pool_dir)), 0)
            self._dom = conn.defineXML(self.xml())
        finally:
            conn.close()
        return self

    def is_on(self) -> bool:
        conn = _conn()
        try:
            return bool(conn.lookupByUUIDString(self.uuid).isActive())
        finally:
            conn.close()

    def qemu_pid(self) -> int | None:
        path = '/run/libvirt/qemu/%s.pid' % self.name
        try:
            return int(open(path).read().strip())
        except (OSError, ValueError):
            return None

    def serial_log(self) -> str:
        try:
            with open(self.serial, errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def clear_serial(self) -> None:
        """Forget what the console said so far (libvirt also starts the
        file afresh at each power on)."""
        with open(self.serial, 'w'):
            pass

    def wait_serial(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout * timeout_factor()
        while text not in self.serial_log():
            if time.monotonic() > deadline:
                raise AssertionError('%r not on the serial console in %ss:'
                                     '\n%s' % (text, timeout,
                                               self.serial_log()[-3000:]))
            time.sleep(0.5)

    NVRAM_DIR = '/var/lib/libvirt/qemu/nvram'

    def nvram(self) -> bytes:
        """The machine's UEFI variables (libvirt's copy of the OVMF_VARS
        template, which OVMF writes while it runs): b'' if none."""
        import xml.etree.ElementTree as ET
        conn = _conn()
        try:
            tree = ET.fromstring(  # noqa: S314  (libvirt's own XML)
                conn.lookupByUUIDString(self.uuid).XMLDesc(0))
        finally:
            conn.close()
        path = tree.findtext('os/nvram') or os.path.join(
            self.NVRAM_DIR, '%s_VARS.fd' % self.name)
        try:
            with open(path, 'rb') as f:
                return f.read()
        except OSError:
            return b''

    def _kill_qemu(self, pid: int | None) -> None:
        """Stop this machine's QEMU by its PID, when libvirt cannot (its
        daemon gone): only the process whose command line names it."""
        if pid is None:
            return
        try:
            with open('/proc/%d/cmdline' % pid, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            return
        if b'guest=%s,' % self.name.encode() not in b' '.join(argv) + b',':
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def destroy(self) -> None:
        import libvirt
        pid = self.qemu_pid()
        try:
            conn = _conn()
        except libvirt.libvirtError:
            self._kill_qemu(pid)
            raise
        try:
            with contextlib.suppress(libvirt.libvirtError):
                dom = conn.lookupByUUIDString(self.uuid)
                if dom.isActive():
                    dom.destroy()
                # and the machine's copy of the UEFI variables
                dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_NVRAM)
            # left by a domain switched to SeaBIOS (tests/vm/ipmi_bmc.py)
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.NVRAM_DIR,
                                       '%s_VARS.fd' % self.name))
            if self._pool is not None:
                with contextlib.suppress(libvirt.libvirtError):
                    self._pool.destroy()
        finally:
            conn.close()


class RedfishBMC:
    """The sushy-tools emulator on its libvirt driver, allowed to see
    one machine only, on a free loopback port."""

    def __init__(self, tmp, machine: Machine) -> None:
        self.dir = os.path.join(str(tmp), 'sushy')
        os.makedirs(self.dir, exist_ok=True)
        self.machine = machine
        self.port = processes.free_port()
        self.proc: subprocess.Popen | None = None
        self.log_file = os.path.join(self.dir, 'log')

    @property
    def address(self) -> str:
        return 'http://127.0.0.1:%d' % self.port

    @property
    def system_id(self) -> str:
        return '/redfish/v1/Systems/%s' % self.machine.uuid

    def start(self) -> 'RedfishBMC':
        conf = os.path.join(self.dir, 'emulator.conf')
        secure = self.machine.firmware == 'uefi-secure'
        with open(conf, 'w') as f:
            f.write('SUSHY_EMULATOR_LISTEN_IP = "127.0.0.1"\n'
                    'SUSHY_EMULATOR_LISTEN_PORT = %d\n'
                    'SUSHY_EMULATOR_LIBVIRT_URI = %r\n'
                    'SUSHY_EMULATOR_ALLOWED_INSTANCES = [%r]\n'
                    'SUSHY_EMULATOR_STORAGE_POOL = %r\n'
                    'SUSHY_EMULATOR_STATE_DIR = %r\n'
                    'SUSHY_EMULATOR_VMEDIA_VERIFY_SSL = False\n'
                    # UEFI: OVMF without Secure Boot (the emulator's
                    # default needs a q35 machine with SMM) unless the
                    # machine is one; Secure Boot toggled by the
                    # variables' template (keys enrolled or none);
                    # Legacy: SeaBIOS
                    'SUSHY_EMULATOR_BOOT_LOADER_MAP = %r\n'
                    'SUSHY_EMULATOR_SECURE_BOOT_ENABLED_NVRAM = %r\n'
                    'SUSHY_EMULATOR_SECURE_BOOT_DISABLED_NVRAM = %r\n'
                    % (self.port, LIBVIRT_URI, self.machine.uuid,
                       self.machine.pool_name, self.dir,
                       {'UEFI': {'x86_64': OVMF_CODE_SECURE if secure
                                 else OVMF_CODE},
                        'Legacy': {'x86_64': SEABIOS}},
                       OVMF_VARS_SECURE, OVMF_VARS))
        log = open(self.log_file, 'ab')
        env = dict(os.environ, NO_PROXY='127.0.0.1,localhost',
                   no_proxy='127.0.0.1,localhost',
                   SUSHY_EMULATOR_CONFIG=conf, TMPDIR=self.dir)
        self.proc = subprocess.Popen(
            [os.path.join(processes.BIN, 'sushy-emulator'), '--config',
             conf, '--libvirt-uri', LIBVIRT_URI, '-i', '127.0.0.1',
             '-p', str(self.port)],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        import urllib.request
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.address + self.system_id,
                                       timeout=2).read()
                return self
            except OSError:
                if self.proc.poll() is not None or \
                        time.monotonic() > deadline:
                    raise RuntimeError('sushy-emulator did not start:\n%s'
                                       % self.log())
                time.sleep(0.1)

    def log(self) -> str:
        try:
            return open(self.log_file, errors='replace').read()[-4000:]
        except OSError:
            return ''

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


USERS_PATH = '/tmp/baremetal-vm-libvirtd.users'
START_PATH = '/tmp/baremetal-vm-libvirtd.start'


@contextlib.contextmanager
def shared_libvirtd(tmp):
    """libvirtd for this process's VM tests, shared with every other
    test process using VMs (the other pytest worker of this run, which
    runs the second group of VM tests, or another checkout's run).

    Each user holds a shared flock on USERS_PATH while it uses libvirtd;
    a process finding none running starts one (one at a time, under
    START_PATH).  The process that started it stops it at its end, once
    it is the last user: it waits for an exclusive flock, which the
    kernel grants when every other user has let go (however it ended).
    A user arriving meanwhile waits for the stop, then starts its own."""
    import fcntl
    users = open(USERS_PATH, 'a+')
    try:
        fcntl.flock(users, fcntl.LOCK_SH)
        with open(START_PATH, 'a+') as start:
            fcntl.flock(start, fcntl.LOCK_EX)
            daemon = Libvirt(tmp).start()
        try:
            yield daemon
        finally:
            if daemon.procs:
                try:
                    fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    print('VM test bed: waiting for the other users of '
                          'libvirtd to finish before stopping it',
                          flush=True)
                    fcntl.flock(users, fcntl.LOCK_EX)
                daemon.stop()
    finally:
        users.close()


def tmpdir() -> str:
    """A directory QEMU (running as root) and libvirt may use."""
    return tempfile.mkdtemp(prefix='baremetal-vm-')


class IPMIBMC:
    """tests/vm/ipmi_bmc.py for one machine, on a free loopback UDP
    port."""

    def __init__(self, tmp, machine: Machine) -> None:
        self.dir = os.path.join(str(tmp), 'ipmi')
        os.makedirs(self.dir, exist_ok=True)
        self.machine = machine
        self.port = processes.free_port()
        self.log_file = os.path.join(self.dir, 'log')
        self.proc: subprocess.Popen | None = None
        self.user, self.password = 'admin', 'ipmi-secret'

    def start(self) -> 'IPMIBMC':
        log = open(self.log_file, 'ab')
        self.proc = subprocess.Popen(
            [sys.executable, '-m', 'tests.vm.ipmi_bmc', '--port',
             str(self.port), '--domain', self.machine.uuid, '--user',
             self.user, '--password', self.password, '--state-file',
             os.path.join(self.dir, 'state.json')],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        log.close()
        deadline = time.monotonic() + 20
        while 'listening' not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError('the IPMI BMC did not start:\n%s'
                                   % self.log())
            time.sleep(0.1)
        return self

    def log(self) -> str:
        try:
            return open(self.log_file, errors='replace').read()[-4000:]
        except OSError:
            return ''

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
