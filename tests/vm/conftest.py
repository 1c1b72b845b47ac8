"""Fixtures of the VM test bed (see tests/vm/bed.py).

Every test module here sets ``pytestmark = bed.MARKS`` or
``bed.MARKS_B``: the ``vm`` marker and the xdist group ``vm`` or
``vm-b``, so that each group runs on one pytest worker, one machine at
a time, the two groups side by side, sharing one libvirtd
(``bed.shared_libvirtd``); the rest of the suite fills the workers as
they free up.
They skip with the reason where the bed cannot run (not root, QEMU or
libvirt missing); with CI=true or BAREMETAL_REQUIRE_VM=1 that is a
failure instead.
"""

import functools
import os
import secrets
import shutil
import time

import bcrypt
import pytest

from tests import glance_service
from tests import keystone_service
from tests.functional import processes
from tests.vm import bed

REQUIRED = (os.environ.get('CI') == 'true' or
            os.environ.get('BAREMETAL_REQUIRE_VM') == '1')


@pytest.fixture(scope='session')
def vm_host(tmp_path_factory):
    """libvirtd running, the agent ramdisk built: (kernel, initramfs)."""
    reason = bed.why_not()
    if reason:
        if REQUIRED:
            pytest.fail('VM tests required here but: %s' % reason)
        pytest.skip(reason)
    print('VM test bed: accelerator %s' % bed.accel_note())
    started = time.monotonic()
    ramdisk = bed.ramdisk()
    print('VM test bed: ramdisk ready in %.0f s' % (
        time.monotonic() - started))
    tmp = bed.tmpdir()
    try:
        with bed.shared_libvirtd(tmp):
            yield _linked(ramdisk, os.path.join(tmp, 'ramdisk'))
    finally:
        # its hard links would keep a ramdisk the cache has replaced on
        # the disk (about 100 MB a run), and libvirtd's log
        shutil.rmtree(tmp, ignore_errors=True)


def _linked(paths, where: str) -> tuple[str, str]:
    """The ramdisk's files hard-linked (or copied) into ``where``: the
    server reads local images only from the directories its
    [conductor]file_url_allowed_paths lists, and never under /root,
    where the ramdisk cache is when root's HOME is /root."""
    os.makedirs(where, exist_ok=True)
    out = []
    for path in paths:
        dest = os.path.join(where, os.path.basename(path))
        try:
            os.link(path, dest)
        except OSError:
            shutil.copyfile(path, dest)
        out.append(dest)
    return out[0], out[1]


class Bed:
    """A machine, its Redfish BMC and a baremetal-server set up to
    provision it."""

    def __init__(self, ramdisk, server, machine, bmc, tmp: str) -> None:
        self.kernel, self.initramfs = ramdisk
        self.server = server
        self.machine = machine
        self.bmc = bmc
        self.dir = tmp
        # keystone_redfish_bed's peers
        self.keystone = None
        self.glance = None

    def logs(self) -> str:
        out = ('--- baremetal-server\n%s\n--- sushy-emulator\n%s\n'
               '--- serial console\n%s' % (
                   self.server.log(tail=20000), self.bmc.log(),
                   self.machine.serial_log()[-6000:]))
        if self.keystone is not None:
            out += '\n--- keystone\n%s' % self.keystone.log()
        if self.glance is not None:
            out += '\n--- glance\n%s\n%s' % (
                self.glance.log(), '\n'.join(self.glance.requests()))
        return out


def server_conf(tmp, api_port: int, http_port: int, **overrides) -> dict:
    """A baremetal-server for real machines: redfish and ipmi, the agent
    ramdisk booted by virtual media or iPXE, deploy direct/ramdisk."""
    c = processes.base_conf(
        tmp,
        conductor={'check_provision_state_interval': 1,
                   'async_step_poll_interval': 1,
                   'sync_power_state_interval': 60,
                   # the VM reaches the host's loopback as 10.0.2.2
                   'api_url': 'http://10.0.2.2:%d' % api_port,
                   'clean_callback_timeout': 300,
                   'deploy_callback_timeout': 300},
        api={'ramdisk_heartbeat_timeout': 30},
        deploy={'http_server_host': '127.0.0.1',
                'http_server_port': http_port,
                'http_url': 'http://10.0.2.2:%d' % http_port,
                'external_http_url': 'http://127.0.0.1:%d' % http_port,
                # the metadata eraser only: shredding 4 GiB takes minutes
                'erase_devices_priority': 0,
                # the machines are SeaBIOS ones unless the test asks for
                # OVMF (uefi_redfish_bed) and its node for boot_mode:uefi
                'default_boot_mode': 'bios'},
        redfish={'connection_attempts': 2, 'connection_retry_interval': 1,
                 'connection_timeout': 30, 'power_poll_interval': 0},
        agent={'command_poll_max_interval': 1})
    c['DEFAULT'].update({
        'enabled_hardware_types': ['redfish', 'ipmi'],
        'enabled_power_interfaces': ['redfish', 'ipmi'],
        'enabled_management_interfaces': ['redfish', 'ipmi'],
        'enabled_boot_interfaces': ['redfish-virtual-media', 'ipxe'],
        'enabled_deploy_interfaces': ['direct', 'ramdisk'],
        'enabled_rescue_interfaces': ['no-rescue', 'agent'],
        'enabled_bios_interfaces': ['no-bios'],
        'enabled_inspect_interfaces': ['no-inspect'],
        'enabled_raid_interfaces': ['no-raid'],
    })
    for key, value in overrides.items():
        group, _, name = key.rpartition('.')
        c.setdefault(group or 'DEFAULT', {})[name] = value
    return c


def _bed(vm_host, request, bmc_class, boot_ipxe: bool,
         firmware: str = 'bios', tmp: str | None = None,
         conf: dict | None = None, started=None, disks: int = 1,
         nics: int = 1, disk_gib: int = 4, http_basic: bool = False):
    """The bed's machine, BMC and server (``conf``: more server
    options, as server_conf's; ``started(b)``: called once the server
    answers, before the test runs)."""
    own_dir = tmp is None
    tmp = tmp or bed.tmpdir()
    # bound later: the API's once the machine and its BMC are up, the
    # file server's when the first boot ISO is published
    api_port, http_port = bed.late_port(), bed.late_port()
    machine = bed.Machine(
        tmp, boot_url=('http://10.0.2.2:%d/boot.ipxe' % http_port
                       if boot_ipxe else None),
        firmware=firmware, disks=disks, nics=nics).create(disk_gib)
    bmc = bmc_class(tmp, machine).start()
    marker = request.node.get_closest_marker('server_conf')
    conf = server_conf(tmp, api_port, http_port, **{
        # local images: the bed's files and the ramdisk (vm_host)
        'conductor.file_url_allowed_paths': [
            tmp, os.path.dirname(vm_host[0])],
        **(conf or {}), **(marker.kwargs if marker else {})})
    if http_basic:
        # the API behind HTTP basic authentication; the agent's
        # endpoints stay public, as in Ironic
        password = secrets.token_urlsafe(12)
        htpasswd = os.path.join(tmp, 'htpasswd')
        with open(htpasswd, 'w') as f:
            f.write('admin:%s\n' % bcrypt.hashpw(
                password.encode(), bcrypt.gensalt(4)).decode())
        conf['DEFAULT'].update(auth_strategy='http_basic',
                               http_basic_auth_user_file=htpasswd)
    server = processes.Service('baremetal-server', tmp, 'server', conf,
                               port=api_port)
    if http_basic:
        server.basic_auth = ('admin', password)
    b = Bed(vm_host, server, machine, bmc, tmp)
    request.node.vm_bed = b
    try:
        server.start()
        if started is not None:
            started(b)
        yield b
    finally:
        try:
            server.stop()
        finally:
            try:
                # the BMC first: a command it is still carrying out (the
                # IPMI double rewrites the domain's definition for a boot
                # device or firmware) would otherwise define the machine
                # again after it was removed (a run left one defined)
                bmc.stop()
            finally:
                machine.destroy()
                if own_dir:
                    # its disk image, ISOs and logs: half a gigabyte a
                    # test (a failed test's logs are in its report)
                    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def redfish_bed(vm_host, request):
    """A fresh machine behind sushy-tools and a fresh baremetal-server.
    Options for the server: ``@pytest.mark.server_conf(**{'group.opt':
    value})``."""
    yield from _bed(vm_host, request, bed.RedfishBMC, boot_ipxe=False)


@pytest.fixture
def keystone_redfish_bed(vm_host, request):
    """As redfish_bed, behind a real Keystone and with a real Glance
    (tests/keystone_service.py, tests/glance_service.py), both started
    for the test: the server validates tokens as Keystone's ``service``
    user (``auth_strategy = keystone``) and is the catalog's
    ``baremetal`` endpoint; the ``service`` role in project ``service``
    has elevated access (what Nova's service user needs); the conductor
    reads images from Glance, found in the catalog, as that user.  The
    bed's own REST calls (tests/vm/api.py) carry a system admin's
    token.  ``b.keystone``, ``b.glance``: the peers."""
    tmp = bed.tmpdir()
    ks = keystone_service.start_or_skip(os.path.join(tmp, 'ks'))
    glance = None
    try:
        glance = glance_service.Glance(os.path.join(tmp, 'gl'),
                                       keystone=ks).start()
        glance.register(ks)
        yield from _bed(vm_host, request, bed.RedfishBMC, boot_ipxe=False,
                        tmp=tmp, conf=_keystone_conf(ks),
                        started=functools.partial(_behind_keystone, ks,
                                                  glance))
    finally:
        try:
            if glance is not None:
                glance.stop()
                # its store holds a copy of the image (50 MiB)
                shutil.rmtree(glance.dir, ignore_errors=True)
        finally:
            ks.stop()
            shutil.rmtree(tmp, ignore_errors=True)


def _keystone_conf(ks) -> dict:
    """server_conf entries: tokens validated at ``ks``; Glance through
    its catalog with the service user's credentials."""
    authtoken = ks.authtoken_conf()
    creds = {k: authtoken[k] for k in (
        'auth_type', 'auth_url', 'username', 'password',
        'user_domain_name', 'project_name', 'project_domain_name')}
    conf = {'DEFAULT.auth_strategy': 'keystone',
            'DEFAULT.rbac_service_role_elevated_access': 'true'}
    conf.update(('keystone_authtoken.%s' % k, v)
                for k, v in authtoken.items())
    conf.update(('glance.%s' % k, v) for k, v in creds.items())
    conf.update({'glance.region_name': keystone_service.REGION,
                 'glance.valid_interfaces': 'internal'})
    conf.update(('service_user.%s' % k, v) for k, v in creds.items())
    conf['service_user.send_service_user_token'] = 'true'
    return conf


def _behind_keystone(ks, glance, b) -> None:
    ks.set_baremetal_endpoint(b.server.endpoint)
    b.server.token = lambda: ks.token('system-admin')
    b.keystone, b.glance = ks, glance


@pytest.fixture
def uefi_redfish_bed(vm_host, request):
    """As redfish_bed, the machine's firmware OVMF (UEFI, no Secure
    Boot)."""
    yield from _bed(vm_host, request, bed.RedfishBMC, boot_ipxe=False,
                    firmware='uefi')


@pytest.fixture
def raid_redfish_bed(vm_host, request):
    """As uefi_redfish_bed, the machine with two 6 GiB disks (software
    RAID-1 across them leaves more than the 4 GiB the agent installs
    on) and two NICs (the second on a user-mode network of its own),
    the API behind HTTP basic authentication (the bed's requests carry
    the credentials: tests/vm/api.py)."""
    yield from _bed(vm_host, request, bed.RedfishBMC, boot_ipxe=False,
                    firmware='uefi', disks=2, nics=2, disk_gib=6,
                    http_basic=True)


@pytest.fixture
def secure_redfish_bed(vm_host, request):
    """As redfish_bed, the machine a q35 one whose OVMF enforces Secure
    Boot, which is on (Microsoft's keys enrolled)."""
    yield from _bed(vm_host, request, bed.RedfishBMC, boot_ipxe=False,
                    firmware='uefi-secure')


@pytest.fixture
def ipmi_bed(vm_host, request):
    """A fresh machine behind an IPMI BMC that network-boots into the
    service's boot.ipxe (QEMU's DHCP hands it out), and a fresh
    baremetal-server."""
    yield from _bed(vm_host, request, bed.IPMIBMC, boot_ipxe=True)


@pytest.fixture
def uefi_ipmi_bed(vm_host, request):
    """As ipmi_bed, the machine's firmware OVMF: the BMC keeps it while
    the boot device it is sent carries the EFI flag, and the iPXE that
    network-boots it is the EFI one of QEMU's NIC ROM."""
    yield from _bed(vm_host, request, bed.IPMIBMC, boot_ipxe=True,
                    firmware='uefi')


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    b = getattr(item, 'vm_bed', None)
    if rep.failed and b is not None and call.when == 'call':
        rep.sections.append(('VM test bed logs', b.logs()))
