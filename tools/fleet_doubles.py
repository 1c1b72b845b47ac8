"""The simulated fleet behind tools/bench-fleet: Redfish BMCs and
ironic-python-agents, many of each in this one process.

``RedfishFleet`` serves N ComputerSystems from B BMC addresses: one
loopback port per BMC (so that "requests to one BMC at once" means what
it means on real hardware), each BMC holding a block of systems.  All
ports are watched by one selector thread; each accepted connection gets
a thread (keep-alive, as sushy's ``requests`` session expects).  Every
request waits a latency drawn from a range and fails with a 503 at a
settable rate (for the whole fleet, or for one BMC with
``set_bmc``).  It serves what the ``redfish`` power and management
interfaces ask for: the service root, SessionService (sessions are
accepted and not checked), the Systems collection, a System (GET,
PATCH of Boot), its Reset action, its SecureBoot resource, its BIOS
attributes and what the ``redfish`` inspect interface reads (a
processor, a NIC, the memory); where a system's ``storage`` is set, a
RAID controller of four drives whose volumes the ``redfish`` RAID
interface builds and deletes (at once, or through a task monitor where
its ``raid_tasks`` is set); where its ``manager`` is set, a Manager
(the BMC's firmware version) with a CD and a USB stick of virtual
media; where its ``chassis`` is set, a Chassis with a temperature, a
fan and a power supply (Thermal, Power) and a network adapter.  Its
BIOS settings are staged (``Bios/Settings``) and applied at the
system's next start (a restart, or on from off); ``Bios.ResetBios``
stages the defaults.  The UpdateService's ``SimpleUpdate`` answers a
task monitor whose task sets the BIOS version of its target system (the
image's file name without its extension), or its Manager's firmware
version where the file's name holds "bmc".
A system's ``busy_writes`` makes its BMC answer that many of its next
writes (POST, PATCH, DELETE) 503, taking none of them.
A system's ``odd`` (a function of the System's document, returning
another document, the raw bytes of the answer, or a tuple of the
answer's status, body and headers) makes its BMC answer that instead,
for tests of BMCs that send what no Redfish service should;
``odd_bios``, ``odd_cpu`` and ``odd_nic`` the same for its Bios,
processor and NIC, ``odd_storages``, ``odd_storage``, ``odd_drive``,
``odd_volumes``, ``odd_volume`` and ``odd_task`` for its Storage
collection, controller, drives, Volumes collection, volumes and the
tasks' final answers, ``odd_manager``, ``odd_vmedia_list`` and
``odd_vmedia`` for its Manager and virtual media, ``odd_chassis``,
``odd_thermal``, ``odd_power``, ``odd_adapters`` and ``odd_adapter`` for
its Chassis, ``odd_update_service``
and ``odd_bios_settings`` for its BMC's UpdateService and its staged
BIOS settings; ``odd_simple_update``, ``odd_bios_patch`` and
``odd_bios_reset`` (functions of the regular answer, a tuple of status,
body and headers, returning another or a body) for the answers to a
SimpleUpdate, a PATCH of the staged settings and a ResetBios
(``odd_raid_task``: a volume's creation or deletion through a task),
whose changes are made all the same.  Requests are
counted per system.  With a TLS context the BMCs speak HTTPS, as real
ones do (the handshake in the connection's thread).

``AgentFleet`` stands in for the agents: one HTTP server answers IPA's
command API for every node under ``/agent/<node uuid>``.  An agent
"boots" when its system is powered on at the BMC, unless the disk was
written (``standby.sync`` after the image) and the node has not been
powered off since it booted that disk: then the instance runs and no
agent.  After a boot delay the agent looks the node up (``GET
/v1/lookup``), again while the answer is 404, 409 or 503, backing off
from 1.5 to 30 s (as IPA, which restarts when its lookup times out);
then it heartbeats at IPA's interval (0.3-0.6 of the lookup's
``heartbeat_timeout``, or a set one), and once more right after a
command ends, as IPA does.  Commands stay RUNNING for a settable time,
then succeed; ``get_clean_steps`` answers at once.
"""

import http.client
import http.server
import itertools
import json
import os
import random
import selectors
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

STEPS = [
    {'step': 'erase_devices_metadata', 'priority': 99,
     'interface': 'deploy', 'reboot_requested': False, 'abortable': True},
    {'step': 'erase_devices', 'priority': 10, 'interface': 'deploy',
     'reboot_requested': False, 'abortable': True},
]
SYNC = frozenset(('clean.get_clean_steps', 'deploy.get_deploy_steps',
                  'standby.sync', 'standby.get_partition_uuids',
                  'log.collect_system_logs'))


# the BMCs listen on their own loopback address: a fleet binds hundreds
# of ports, and on 127.0.0.1 one of them could be a port another test
# process has just picked as free for its own server (tests pick a free
# port on 127.0.0.1, then bind it)
BMC_HOST = '127.0.0.2'


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 128
    tls: ssl.SSLContext | None = None

    def get_request(self):
        sock, addr = super().get_request()
        if self.tls is not None:
            # the handshake in the connection's thread (finish_request)
            sock = self.tls.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False)
        return sock, addr

    def finish_request(self, request, client_address):
        if self.tls is not None:
            request.settimeout(30)
            request.do_handshake()
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        if self.tls is not None and isinstance(sys.exc_info()[1], OSError):
            return      # a client that refused the certificate, say
        if isinstance(sys.exc_info()[1], (BrokenPipeError,
                                          ConnectionResetError)):
            return      # a client gone (a conductor killed, say)
        super().handle_error(request, client_address)

    def server_bind(self):
        # HTTPServer's own asks the resolver for the host's FQDN, which
        # on a machine without DNS costs ~0.1 s per port: minutes for a
        # fleet
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class RedfishFleet:
    def __init__(self, systems: int, per_bmc: int | list[int] = 1,
                 latency_ms=(0.0, 0.0), error_rate: float = 0.0,
                 on_power=None, tls: ssl.SSLContext | None = None) -> None:
        self.latency = latency_ms
        self.tls = tls
        self.error_rate = error_rate
        self.on_power = on_power or (lambda sid, on: None)
        self.lock = threading.Lock()
        self.systems: dict[str, dict] = {}
        self.counts: dict[str, int] = {}
        self.gets: dict[str, list[float]] = {}   # system GET times
        self.unknown: dict[str, int] = {}
        self.by_route: dict[str, int] = {}
        self.tasks: dict[str, dict] = {}     # task monitors' tasks
        self.injected = 0
        self.busy: dict[int, int] = {}       # port -> requests in flight
        self.max_busy: dict[int, int] = {}
        self.busy_total = 0                  # requests in flight, all BMCs
        self.max_busy_total = 0
        self.by_port: dict[int, int] = {}    # port -> requests
        self.faults: dict[int, dict] = {}    # port -> latency/error rate
        self.bmcs: list[tuple[int, list[str]]] = []
        self._servers = []
        self._sel = selectors.DefaultSelector()
        self._stop = threading.Event()
        handler = self._handler()
        ids = ['sys-%05d' % i for i in range(systems)]
        # a block size for every BMC, or one for all
        sizes = list(per_bmc) if isinstance(per_bmc, (list, tuple)) else \
            [per_bmc] * -(-systems // per_bmc)
        first = 0
        for size in sizes:
            block = ids[first:first + size]
            first += size
            if not block:
                break
            srv = _Server((BMC_HOST, 0), handler)
            srv.fleet_systems = block
            srv.tls = tls
            port = srv.server_address[1]
            self.bmcs.append((port, block))
            self._servers.append(srv)
            self._sel.register(srv.socket, selectors.EVENT_READ, srv)
            for sid in block:
                self.systems[sid] = {
                    'power': 'Off', 'target': 'None', 'enabled': 'Disabled',
                    'mode': 'UEFI', 'secure_boot': False, 'port': port}
                self.counts[sid] = 0
                self.gets[sid] = []
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def set_bmc(self, port: int, latency_ms=None,
                error_rate: float | None = None) -> None:
        """This BMC's own latency range and error rate (None: the
        fleet's)."""
        with self.lock:
            self.faults[port] = {'latency': latency_ms,
                                 'error_rate': error_rate}

    def _fault(self, port: int, what: str):
        value = self.faults.get(port, {}).get(what)
        return value if value is not None else getattr(self, what)

    def address(self, sid: str) -> str:
        return '%s://%s:%d' % ('https' if self.tls else 'http', BMC_HOST,
                               self.systems[sid]['port'])

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(0.2):
                key.data._handle_request_noblock()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for srv in self._servers:
            srv.server_close()

    def total_requests(self) -> int:
        with self.lock:
            return sum(self.counts.values())

    def _handler(self):
        fleet = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def _send(self, status, body=None, headers=()):
                if isinstance(body, bytes):
                    data = body     # an odd system's answer, as it is
                else:
                    data = json.dumps(body).encode() if body is not None \
                        else b''
                # the answer is ready: the request is no longer in
                # flight (counted before the client can have it, so its
                # next request never overlaps this one in the count)
                self._done()
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                if body is not None:
                    self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                if self.close_connection:
                    # sushy asks every request 'Connection: close': say
                    # it is closing, as HTTP/1.1 wants (else the client
                    # may send its next request on this connection while
                    # it closes: 'Remote end closed connection')
                    self.send_header('Connection', 'close')
                self.end_headers()
                self.wfile.write(data)

            def _serve(self, method):
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                port = self.server.server_address[1]
                with fleet.lock:
                    fleet.by_port[port] = fleet.by_port.get(port, 0) + 1
                    latency = fleet._fault(port, 'latency')
                    error_rate = fleet._fault(port, 'error_rate')
                    fleet.busy[port] = fleet.busy.get(port, 0) + 1
                    fleet.max_busy[port] = max(fleet.max_busy.get(port, 0),
                                               fleet.busy[port])
                    fleet.busy_total += 1
                    fleet.max_busy_total = max(fleet.max_busy_total,
                                               fleet.busy_total)
                self._in_flight = port
                try:
                    lo, hi = latency
                    if hi > 0:
                        time.sleep(random.uniform(lo, hi) / 1000.0)
                    self._answer(method, raw, error_rate)
                finally:
                    self._done()

            def _done(self):
                port, self._in_flight = \
                    getattr(self, '_in_flight', None), None
                if port is not None:
                    with fleet.lock:
                        fleet.busy[port] -= 1
                        fleet.busy_total -= 1

            def _answer(self, method, raw, error_rate):
                parts = _parts(self.path)
                block = self.server.fleet_systems
                # a system's resources, its manager's and its
                # chassis' (of its id)
                sid = parts[1] if len(parts) > 1 and parts[0] in \
                    OWNED else None
                with fleet.lock:
                    key = sid if sid in block else block[0]
                    fleet.counts[key] += 1
                    if sid in block and len(parts) == 2 and method == 'GET' \
                            and parts[0] == 'Systems':
                        fleet.gets[sid].append(time.monotonic())
                if (error_rate and random.random() < error_rate) or \
                        _busy(fleet, block, sid, method):
                    with fleet.lock:
                        fleet.injected += 1
                    return self._send(503, _error('injected failure'))
                body = json.loads(raw) if raw else {}
                if sid is not None and sid not in block:
                    return self._send(404, _error('no such system'))
                route = (method, tuple(
                    '{}' if _variable(parts, i, sid) else p
                    for i, p in enumerate(parts)))
                # the path's other ids (a session, a drive, a task)
                ids = tuple(p for i, p in enumerate(parts)
                            if route[1][i] == '{}' and
                            not (i == 1 and parts[0] in OWNED))
                fn = ROUTES.get(route)
                with fleet.lock:
                    name = '%s /%s' % (method, '/'.join(route[1]))
                    fleet.by_route[name] = fleet.by_route.get(name, 0) + 1
                if fn is None:
                    with fleet.lock:
                        name = '%s %s' % route
                        fleet.unknown[name] = fleet.unknown.get(name, 0) + 1
                    return self._send(404, _error('not served here'))
                self._send(*_answered(fn(fleet, block, sid, body, *ids)))

            def do_GET(self):
                self._serve('GET')

            def do_POST(self):
                self._serve('POST')

            def do_PATCH(self):
                self._serve('PATCH')

            def do_DELETE(self):
                self._serve('DELETE')

        return Handler


def _parts(target: str) -> list[str]:
    """A request's path after /redfish/v1, split; one of no route for a
    path elsewhere."""
    path = urllib.parse.urlsplit(target).path.rstrip('/')
    if path != '/redfish/v1' and not path.startswith('/redfish/v1/'):
        return ['(not Redfish)']
    return path.split('/')[3:]


def _busy(fleet, block, sid, method: str) -> bool:
    """Whether this write is one of the first ``busy_writes`` of the
    system's, which its BMC answers 503 (it takes none of them)."""
    if method == 'GET' or sid not in block:
        return False
    with fleet.lock:
        system = fleet.systems[sid]
        busy = system.get('busy_writes', 0)
        if busy:
            system['busy_writes'] = busy - 1
    return bool(busy)


def _answered(answer: tuple) -> tuple:
    """A route's (status, body, headers); an odd answer (a tuple for a
    body) brings its own status and headers."""
    return answer[1] if isinstance(answer[1], tuple) else answer


# the collections whose members are a system's (of its id)
OWNED = ('Systems', 'Managers', 'Chassis')


def _variable(parts: list[str], i: int, sid: str | None) -> bool:
    """Whether the path's part ``i`` is an id (a route's ``{}``)."""
    if parts[0] in OWNED:
        return (i == 1 and parts[1] == sid) or (
            i in (3, 5) and parts[i - 1] in ('Storage', 'Drives',
                                             'Volumes', 'VirtualMedia',
                                             'NetworkAdapters'))
    return (i == 1 and parts[0] == 'TaskMonitors') or (
        i == 2 and parts[:2] == ['SessionService', 'Sessions'])


def _error(msg):
    return {'error': {'code': 'Base.1.0.GeneralError', 'message': msg}}


def _root(fleet, block, sid, body):
    return 200, {
        '@odata.id': '/redfish/v1/', '@odata.type':
        '#ServiceRoot.v1_5_0.ServiceRoot', 'Id': 'RootService',
        'Name': 'Fleet double', 'RedfishVersion': '1.6.0',
        'UUID': '00000000-0000-0000-0000-000000000000',
        'Systems': {'@odata.id': '/redfish/v1/Systems'},
        'SessionService': {'@odata.id': '/redfish/v1/SessionService'},
        'UpdateService': {'@odata.id': '/redfish/v1/UpdateService'},
        'Links': {'Sessions': {
            '@odata.id': '/redfish/v1/SessionService/Sessions'}}}, ()


def _session_service(fleet, block, sid, body):
    return 200, {
        '@odata.id': '/redfish/v1/SessionService', 'Id': 'SessionService',
        'Name': 'Sessions', 'ServiceEnabled': True, 'SessionTimeout': 3600,
        'Sessions': {'@odata.id':
                     '/redfish/v1/SessionService/Sessions'}}, ()


_SESSIONS = itertools.count(1)


def _new_session(fleet, block, sid, body):
    n = next(_SESSIONS)
    where = '/redfish/v1/SessionService/Sessions/%d' % n
    return 201, {'@odata.id': where, 'Id': str(n), 'Name': 'Session',
                 'UserName': body.get('UserName')}, (
        ('X-Auth-Token', 'token-%d' % n), ('Location', where))


def _delete_session(fleet, block, sid, body, session):
    return 204, None, ()


def _systems(fleet, block, sid, body):
    return 200, {'@odata.id': '/redfish/v1/Systems', 'Name': 'Systems',
                 'Members@odata.count': len(block),
                 'Members': [{'@odata.id': '/redfish/v1/Systems/%s' % s}
                             for s in block]}, ()


MEMORY_GIB = 64
CORES = 8
BIOS_VERSION = '1.0.0'
BIOS = {'BootMode': 'Uefi', 'ProcTurboMode': 'Enabled'}


RESETS = ['On', 'ForceOff', 'GracefulShutdown', 'GracefulRestart',
          'ForceRestart', 'Nmi', 'ForceOn', 'PushPowerButton']
TARGETS = ['None', 'Pxe', 'Cd', 'Hdd', 'BiosSetup', 'UefiHttp']


def _system(fleet, block, sid, body):
    with fleet.lock:
        s = dict(fleet.systems[sid])
    base = '/redfish/v1/Systems/%s' % sid
    doc = {
        '@odata.id': base, '@odata.type': '#ComputerSystem.v1_10_0.'
        'ComputerSystem', 'Id': sid, 'Name': sid, 'UUID': sid,
        'PowerState': s['power'], 'SystemType': 'Physical',
        'BiosVersion': s.get('bios_version', BIOS_VERSION),
        'Status': {'State': 'Enabled', 'Health': 'OK'},
        'Boot': {'BootSourceOverrideTarget': s['target'],
                 'BootSourceOverrideEnabled': s['enabled'],
                 'BootSourceOverrideMode': s['mode'],
                 'BootSourceOverrideTarget@Redfish.AllowableValues':
                     TARGETS},
        'SecureBoot': {'@odata.id': base + '/SecureBoot'},
        'Bios': {'@odata.id': base + '/Bios'},
        'MemorySummary': {'TotalSystemMemoryGiB': MEMORY_GIB},
        'Processors': {'@odata.id': base + '/Processors'},
        'EthernetInterfaces': {'@odata.id': base + '/EthernetInterfaces'},
        'Actions': {'#ComputerSystem.Reset': {
            'target': base + '/Actions/ComputerSystem.Reset',
            'ResetType@Redfish.AllowableValues': RESETS}}}
    if s.get('storage'):
        doc['Storage'] = {'@odata.id': base + '/Storage'}
    if s.get('manager'):
        doc.setdefault('Links', {})['ManagedBy'] = [
            {'@odata.id': '/redfish/v1/Managers/%s' % sid}]
    if s.get('chassis'):
        doc.setdefault('Links', {})['Chassis'] = [
            {'@odata.id': '/redfish/v1/Chassis/%s' % sid}]
    return 200, _as_set(fleet, sid, 'odd', doc), ()


def _members(base, ids):
    return {'@odata.id': base, 'Name': base.rsplit('/', 1)[-1],
            'Members@odata.count': len(ids),
            'Members': [{'@odata.id': '%s/%s' % (base, i)} for i in ids]}


def _processors(fleet, block, sid, body):
    return 200, _members('/redfish/v1/Systems/%s/Processors' % sid,
                         ['CPU0']), ()


def _as_set(fleet, sid: str, key: str, doc: dict):
    """``doc``, or what the system's odd function of ``key`` makes of
    it."""
    with fleet.lock:
        odd = fleet.systems[sid].get(key)
    return odd(doc) if odd else doc


def _processor(fleet, block, sid, body):
    return 200, _as_set(fleet, sid, 'odd_cpu', {
        '@odata.id': '/redfish/v1/Systems/%s/Processors/CPU0' % sid,
        'Id': 'CPU0', 'Name': 'CPU0', 'ProcessorType': 'CPU',
        'ProcessorArchitecture': 'x86', 'InstructionSet': 'x86-64',
        'TotalCores': CORES, 'TotalThreads': CORES,
        'Status': {'State': 'Enabled', 'Health': 'OK'}}), ()


def _bios(fleet, block, sid, body):
    base = '/redfish/v1/Systems/%s/Bios' % sid
    with fleet.lock:
        current = dict(fleet.systems[sid].get('bios', BIOS))
    return 200, _as_set(fleet, sid, 'odd_bios', {
        '@odata.id': base,
        '@odata.type': '#Bios.v1_0_0.Bios', 'Id': 'BIOS', 'Name': 'BIOS',
        'AttributeRegistry': 'BiosAttributeRegistry.v1_0_0',
        'Attributes': current,
        '@Redfish.Settings': {
            '@odata.type': '#Settings.v1_0_0.Settings',
            'SettingsObject': {'@odata.id': base + '/Settings'}},
        'Actions': {'#Bios.ResetBios': {
            'target': base + '/Actions/Bios.ResetBios'}}}), ()


def _bios_settings(fleet, block, sid, body):
    """The settings staged for the system's next start."""
    with fleet.lock:
        s = fleet.systems[sid]
        staged = dict(BIOS) if s.get('bios_reset') else \
            dict(s.get('bios', BIOS))
        staged.update(s.get('bios_staged') or {})
    return 200, _as_set(fleet, sid, 'odd_bios_settings', {
        '@odata.id': '/redfish/v1/Systems/%s/Bios/Settings' % sid,
        '@odata.type': '#Bios.v1_0_0.Bios', 'Id': 'Settings',
        'Name': 'BIOS settings staged', 'Attributes': staged}), ()


def _written(fleet, sid: str, key: str, answer: tuple) -> tuple:
    """A write's ``answer`` (status, body, headers), or what the
    system's odd function of ``key`` makes of it."""
    with fleet.lock:
        odd = fleet.systems[sid].get(key)
    if odd is None:
        return answer
    made = odd(answer)
    return made if isinstance(made, tuple) else (answer[0], made, answer[2])


def _patch_bios_settings(fleet, block, sid, body):
    wanted = body.get('Attributes')
    if not isinstance(wanted, dict) or set(wanted) - set(BIOS):
        return 400, _error('no such BIOS settings: %r' % (wanted,)), ()
    with fleet.lock:
        fleet.systems[sid].setdefault('bios_staged', {}).update(wanted)
    return _written(fleet, sid, 'odd_bios_patch', (204, None, ()))


def _reset_bios(fleet, block, sid, body):
    with fleet.lock:
        s = fleet.systems[sid]
        s['bios_reset'], s['bios_staged'] = True, {}
    return _written(fleet, sid, 'odd_bios_reset', (204, None, ()))


def _started(s: dict) -> None:
    """A system starts: the BIOS settings staged apply (under the
    fleet's lock)."""
    if s.get('bios_reset'):
        s['bios'] = dict(BIOS)
    if s.get('bios_staged'):
        s['bios'] = dict(s.get('bios', BIOS), **s['bios_staged'])
    s['bios_reset'], s['bios_staged'] = False, {}


def nic_mac(sid: str) -> str:
    """The MAC of a system's one NIC."""
    n = int(sid.rsplit('-', 1)[-1])
    return '52:54:%02x:%02x:%02x:%02x' % (
        n >> 24 & 255, n >> 16 & 255, n >> 8 & 255, n & 255)


def _nics(fleet, block, sid, body):
    return 200, _members('/redfish/v1/Systems/%s/EthernetInterfaces' % sid,
                         ['nic0']), ()


def _nic(fleet, block, sid, body):
    return 200, _as_set(fleet, sid, 'odd_nic', {
        '@odata.id': '/redfish/v1/Systems/%s/EthernetInterfaces/nic0' % sid,
        'Id': 'nic0', 'Name': 'nic0', 'MACAddress': nic_mac(sid),
        'Status': {'State': 'Enabled', 'Health': 'OK'}}), ()


def _patch_system(fleet, block, sid, body):
    boot = body.get('Boot') or {}
    with fleet.lock:
        s = fleet.systems[sid]
        for field, key in (('BootSourceOverrideTarget', 'target'),
                           ('BootSourceOverrideEnabled', 'enabled'),
                           ('BootSourceOverrideMode', 'mode')):
            if field in boot:
                s[key] = boot[field]
    return 204, None, ()


def _reset(fleet, block, sid, body):
    kind = body.get('ResetType')
    if kind not in RESETS:
        return 400, _error('bad ResetType %r' % kind), ()
    with fleet.lock:
        s = fleet.systems[sid]
        was = s['power']
        if kind in ('On', 'ForceOn'):
            s['power'] = 'On'
        elif kind in ('ForceOff', 'GracefulShutdown'):
            s['power'] = 'Off'
        elif kind == 'PushPowerButton':
            s['power'] = 'Off' if was == 'On' else 'On'
        now = s['power']
        restart = kind in ('GracefulRestart', 'ForceRestart') and \
            now == 'On'
        if restart or (now == 'On' and was != 'On'):
            _started(s)
    if restart:
        fleet.on_power(sid, False)
    if now != was or restart:
        fleet.on_power(sid, now == 'On')
    return 204, None, ()


def _secure_boot(fleet, block, sid, body):
    with fleet.lock:
        on = fleet.systems[sid]['secure_boot']
    return 200, {
        '@odata.id': '/redfish/v1/Systems/%s/SecureBoot' % sid,
        'Id': 'SecureBoot', 'Name': 'UEFI Secure Boot',
        'SecureBootEnable': on,
        'SecureBootCurrentBoot': 'Enabled' if on else 'Disabled',
        'SecureBootMode': 'DeployedMode'}, ()


def _patch_secure_boot(fleet, block, sid, body):
    if 'SecureBootEnable' in body:
        with fleet.lock:
            fleet.systems[sid]['secure_boot'] = bool(
                body['SecureBootEnable'])
    return 204, None, ()


# one RAID controller of four drives in every system; its volumes are
# the system's ``volumes``; a system whose ``raid_tasks`` is set
# answers a volume's POST or DELETE with a task that runs for
# TASK_POLLS reads of its monitor, then applies the change
STORAGE = 'RAID.1'
DRIVES = ('D0', 'D1', 'D2', 'D3')
DRIVE_BYTES = 100 << 30
RAID_TYPES = {'RAID0': (1, lambda n: n), 'RAID1': (2, lambda n: 1),
              'RAID5': (3, lambda n: n - 1), 'RAID10': (4, lambda n: n // 2)}
TASK_POLLS = 1
_IDS = itertools.count(1)


def _storage_path(sid: str) -> str:
    return '/redfish/v1/Systems/%s/Storage/%s' % (sid, STORAGE)


def _storages(fleet, block, sid, body):
    return 200, _as_set(fleet, sid, 'odd_storages', _members(
        '/redfish/v1/Systems/%s/Storage' % sid, [STORAGE])), ()


def _storage(fleet, block, sid, body, storage):
    if storage != STORAGE:
        return 404, _error('no such storage'), ()
    base = _storage_path(sid)
    return 200, _as_set(fleet, sid, 'odd_storage', {
        '@odata.id': base, '@odata.type': '#Storage.v1_7_0.Storage',
        'Id': STORAGE, 'Name': 'RAID controller',
        'Drives': [{'@odata.id': '%s/Drives/%s' % (base, d)}
                   for d in DRIVES],
        'Volumes': {'@odata.id': base + '/Volumes'},
        'Status': {'State': 'Enabled', 'Health': 'OK'}}), ()


def _drive(fleet, block, sid, body, storage, drive):
    if storage != STORAGE or drive not in DRIVES:
        return 404, _error('no such drive'), ()
    return 200, _as_set(fleet, sid, 'odd_drive', {
        '@odata.id': '%s/Drives/%s' % (_storage_path(sid), drive),
        '@odata.type': '#Drive.v1_4_0.Drive', 'Id': drive, 'Name': drive,
        'CapacityBytes': DRIVE_BYTES, 'MediaType': 'HDD',
        'Protocol': 'SAS'}), ()


def _volume_list(fleet, block, sid, body, storage):
    if storage != STORAGE:
        return 404, _error('no such storage'), ()
    with fleet.lock:
        ids = sorted(fleet.systems[sid].setdefault('volumes', {}))
    return 200, _as_set(fleet, sid, 'odd_volumes', _members(
        _storage_path(sid) + '/Volumes', ids)), ()


def _volume(fleet, block, sid, body, storage, volume):
    with fleet.lock:
        doc = fleet.systems[sid].setdefault('volumes', {}).get(volume)
    if storage != STORAGE or doc is None:
        return 404, _error('no such volume'), ()
    return 200, _as_set(fleet, sid, 'odd_volume', json.loads(
        json.dumps(doc))), ()


def _task(fleet, sid: str, change, name: str = 'RAID') -> tuple:
    """202 and the monitor of a task that makes ``change`` once it
    ends."""
    tid = '%s.%d' % (sid, next(_IDS))
    with fleet.lock:
        fleet.tasks[tid] = {'sid': sid, 'polls': TASK_POLLS,
                            'change': change, 'name': name}
    return 202, None, (('Location', '/redfish/v1/TaskMonitors/' + tid),)


def _new_volume(fleet, block, sid, body, storage):
    kind = body.get('RAIDType')
    links = (body.get('Links') or {}).get('Drives') or []
    base = _storage_path(sid)
    drives = [str(d.get('@odata.id', '')).rsplit('/', 1)[-1]
              for d in links if isinstance(d, dict)]
    with fleet.lock:
        volumes = fleet.systems[sid].setdefault('volumes', {})
        used = {d['@odata.id'].rsplit('/', 1)[-1] for v in volumes.values()
                for d in v['Links']['Drives']}
    if storage != STORAGE or kind not in RAID_TYPES or \
            len(drives) < RAID_TYPES[kind][0] or \
            any(d not in DRIVES or d in used for d in drives):
        return 400, _error('cannot build %s of %s' % (kind, drives)), ()
    size = body.get('CapacityBytes') or \
        RAID_TYPES[kind][1](len(drives)) * DRIVE_BYTES
    vid = 'V%d' % next(_IDS)
    doc = {'@odata.id': '%s/Volumes/%s' % (base, vid),
           '@odata.type': '#Volume.v1_3_0.Volume', 'Id': vid,
           'Name': body.get('Name') or vid, 'RAIDType': kind,
           'CapacityBytes': size, 'Links': {'Drives': [
               {'@odata.id': '%s/Drives/%s' % (base, d)} for d in drives]}}

    def change():
        volumes[vid] = doc
    if fleet.systems[sid].get('raid_tasks'):
        return _written(fleet, sid, 'odd_raid_task',
                        _task(fleet, sid, change))
    with fleet.lock:
        change()
    return 201, doc, (('Location', doc['@odata.id']),)


def _delete_volume(fleet, block, sid, body, storage, volume):
    with fleet.lock:
        volumes = fleet.systems[sid].setdefault('volumes', {})
        if storage != STORAGE or volume not in volumes:
            return 404, _error('no such volume'), ()

    def change():
        volumes.pop(volume, None)
    if fleet.systems[sid].get('raid_tasks'):
        return _written(fleet, sid, 'odd_raid_task',
                        _task(fleet, sid, change))
    with fleet.lock:
        change()
    return 204, None, ()


def _task_monitor(fleet, block, sid, body, tid):
    with fleet.lock:
        task = fleet.tasks.get(tid)
        if task is not None:
            task['polls'] -= 1
            running = task['polls'] >= 0
            if not running and task['change'] is not None:
                task['change']()
                task['change'] = None
    if task is None:
        return 404, _error('no such task'), ()
    doc = {'@odata.id': '/redfish/v1/TaskService/Tasks/' + tid,
           '@odata.type': '#Task.v1_4_3.Task', 'Id': tid,
           'Name': task['name'],
           'TaskState': 'Running' if running else 'Completed',
           'TaskStatus': 'OK', 'Messages': []}
    if running:
        return 202, doc, (('Location', '/redfish/v1/TaskMonitors/' + tid),)
    return 200, _as_set(fleet, task['sid'], 'odd_task', doc), ()


# a system's chassis (where its ``chassis`` is set): a temperature, a fan
# and a power supply, and a network adapter with its firmware version
NIC_FIRMWARE = '22.5.7'
OK = {'State': 'Enabled', 'Health': 'OK'}


def _chassis(fleet, block, sid, body):
    base = '/redfish/v1/Chassis/%s' % sid
    return 200, _as_set(fleet, sid, 'odd_chassis', {
        '@odata.id': base, '@odata.type': '#Chassis.v1_10_0.Chassis',
        'Id': sid, 'Name': 'Chassis of %s' % sid, 'ChassisType': 'RackMount',
        'Thermal': {'@odata.id': base + '/Thermal'},
        'Power': {'@odata.id': base + '/Power'},
        'NetworkAdapters': {'@odata.id': base + '/NetworkAdapters'},
        'Links': {'ComputerSystems': [
            {'@odata.id': '/redfish/v1/Systems/%s' % sid}]}}), ()


def _thermal(fleet, block, sid, body):
    base = '/redfish/v1/Chassis/%s/Thermal' % sid
    return 200, _as_set(fleet, sid, 'odd_thermal', {
        '@odata.id': base, '@odata.type': '#Thermal.v1_5_0.Thermal',
        'Id': 'Thermal', 'Name': 'Thermal',
        'Temperatures': [{
            '@odata.id': base + '#/Temperatures/0', 'MemberId': '0',
            'Name': 'CPU Temp', 'ReadingCelsius': 42, 'SensorNumber': 1,
            'PhysicalContext': 'CPU', 'MaxReadingRangeTemp': 100,
            'MinReadingRangeTemp': 0, 'Status': dict(OK)}],
        'Fans': [{
            '@odata.id': base + '#/Fans/0', 'MemberId': '0',
            'Name': 'Fan 1', 'Reading': 3000, 'ReadingUnits': 'RPM',
            'PhysicalContext': 'Fan', 'Status': dict(OK)}]}), ()


def _power(fleet, block, sid, body):
    base = '/redfish/v1/Chassis/%s/Power' % sid
    return 200, _as_set(fleet, sid, 'odd_power', {
        '@odata.id': base, '@odata.type': '#Power.v1_5_0.Power',
        'Id': 'Power', 'Name': 'Power',
        'PowerSupplies': [{
            '@odata.id': base + '#/PowerSupplies/0', 'MemberId': '0',
            'Name': 'PSU 1', 'PowerCapacityWatts': 800,
            'LineInputVoltage': 230, 'LastPowerOutputWatts': 250,
            'SerialNumber': 'PSU-%s' % sid, 'Status': dict(OK)}]}), ()


def _adapters(fleet, block, sid, body):
    return 200, _as_set(fleet, sid, 'odd_adapters', _members(
        '/redfish/v1/Chassis/%s/NetworkAdapters' % sid, ['NIC.1'])), ()


def _adapter(fleet, block, sid, body, adapter):
    if adapter != 'NIC.1':
        return 404, _error('no such network adapter'), ()
    return 200, _as_set(fleet, sid, 'odd_adapter', {
        '@odata.id': '/redfish/v1/Chassis/%s/NetworkAdapters/NIC.1' % sid,
        '@odata.type': '#NetworkAdapter.v1_0_0.NetworkAdapter',
        'Id': 'NIC.1', 'Name': 'NIC 1', 'Manufacturer': 'Fleet',
        'Model': 'X1', 'SerialNumber': 'SN-%s' % sid,
        'Controllers': [{'FirmwarePackageVersion': NIC_FIRMWARE,
                         'ControllerCapabilities': {
                             'NetworkPortCount': 2}}]}), ()


# a system's manager (where its ``manager`` is set): the BMC's firmware
# version, and a CD and a USB stick of virtual media
MANAGER_FIRMWARE = '2.5.1'
VMEDIA = {'CD1': ['CD', 'DVD'], 'USB1': ['USBStick']}


def _firmware(fleet, sid: str) -> str:
    with fleet.lock:
        return fleet.systems[sid].get('manager_firmware', MANAGER_FIRMWARE)


# the BMC's UpdateService: SimpleUpdate of a BIOS (or, a file named
# "bmc...", the BMC's firmware) through a task; its system is the one
# Targets names, or the BMC's first
UPDATE = '/redfish/v1/UpdateService'


def _update_service(fleet, block, sid, body):
    return 200, _as_set(fleet, block[0], 'odd_update_service', {
        '@odata.id': UPDATE, '@odata.type':
        '#UpdateService.v1_2_2.UpdateService', 'Id': 'UpdateService',
        'Name': 'Update service', 'ServiceEnabled': True,
        'Actions': {'#UpdateService.SimpleUpdate': {
            'target': UPDATE + '/Actions/UpdateService.SimpleUpdate',
            'TransferProtocol@Redfish.AllowableValues': ['HTTP',
                                                         'HTTPS']}}}), ()


def _simple_update(fleet, block, sid, body):
    image, targets = body.get('ImageURI'), body.get('Targets') or []
    target = block[0]
    if isinstance(targets, list) and targets:
        target = str(targets[0]).rstrip('/').rsplit('/', 1)[-1]
    if not isinstance(image, str) or target not in block or \
            body.get('TransferProtocol') not in ('HTTP', 'HTTPS'):
        return 400, _error('no image, or no system of this BMC'), ()
    name = image.rstrip('/').rsplit('/', 1)[-1]
    version = name.rsplit('.', 1)[0]
    field = 'manager_firmware' if 'bmc' in name else 'bios_version'

    def change():
        fleet.systems[target][field] = version
    return _written(fleet, target, 'odd_simple_update',
                    _task(fleet, target, change, 'Firmware update'))


def _manager(fleet, block, sid, body):
    base = '/redfish/v1/Managers/%s' % sid
    return 200, _as_set(fleet, sid, 'odd_manager', {
        '@odata.id': base, '@odata.type': '#Manager.v1_5_0.Manager',
        'Id': sid, 'Name': 'Manager of %s' % sid, 'ManagerType': 'BMC',
        'FirmwareVersion': _firmware(fleet, sid), 'Model': 'Fleet double',
        'VirtualMedia': {'@odata.id': base + '/VirtualMedia'},
        'Links': {'ManagerForServers': [
            {'@odata.id': '/redfish/v1/Systems/%s' % sid}]}}), ()


def _vmedia_list(fleet, block, sid, body):
    return 200, _as_set(fleet, sid, 'odd_vmedia_list', _members(
        '/redfish/v1/Managers/%s/VirtualMedia' % sid, sorted(VMEDIA))), ()


def _vmedia(fleet, block, sid, body, device):
    if device not in VMEDIA:
        return 404, _error('no such virtual media'), ()
    base = '/redfish/v1/Managers/%s/VirtualMedia/%s' % (sid, device)
    with fleet.lock:
        image = fleet.systems[sid].setdefault('media', {}).get(device)
    actions = base + '/Actions/VirtualMedia.'
    return 200, _as_set(fleet, sid, 'odd_vmedia', {
        '@odata.id': base, '@odata.type':
        '#VirtualMedia.v1_3_0.VirtualMedia', 'Id': device, 'Name': device,
        'MediaTypes': VMEDIA[device], 'Image': image,
        'Inserted': image is not None, 'WriteProtected': True,
        'ConnectedVia': 'URI' if image else 'NotConnected',
        'Actions': {
            '#VirtualMedia.InsertMedia': {'target': actions + 'InsertMedia'},
            '#VirtualMedia.EjectMedia': {'target': actions + 'EjectMedia'}},
    }), ()


def _insert_media(fleet, block, sid, body, device):
    if device not in VMEDIA or not isinstance(body.get('Image'), str):
        return 400, _error('no such device, or no Image'), ()
    with fleet.lock:
        fleet.systems[sid].setdefault('media', {})[device] = body['Image']
    return 204, None, ()


def _eject_media(fleet, block, sid, body, device):
    if device not in VMEDIA:
        return 404, _error('no such virtual media'), ()
    with fleet.lock:
        fleet.systems[sid].setdefault('media', {}).pop(device, None)
    return 204, None, ()


ROUTES = {
    ('GET', ()): _root,
    ('GET', ('SessionService',)): _session_service,
    ('POST', ('SessionService', 'Sessions')): _new_session,
    ('DELETE', ('SessionService', 'Sessions', '{}')): _delete_session,
    ('GET', ('Systems',)): _systems,
    ('GET', ('Systems', '{}')): _system,
    ('PATCH', ('Systems', '{}')): _patch_system,
    ('POST', ('Systems', '{}', 'Actions', 'ComputerSystem.Reset')): _reset,
    ('GET', ('Systems', '{}', 'SecureBoot')): _secure_boot,
    ('PATCH', ('Systems', '{}', 'SecureBoot')): _patch_secure_boot,
    ('GET', ('Systems', '{}', 'Bios')): _bios,
    ('GET', ('Systems', '{}', 'Bios', 'Settings')): _bios_settings,
    ('PATCH', ('Systems', '{}', 'Bios', 'Settings')): _patch_bios_settings,
    ('POST', ('Systems', '{}', 'Bios', 'Actions', 'Bios.ResetBios')):
        _reset_bios,
    ('GET', ('Systems', '{}', 'Processors')): _processors,
    ('GET', ('Systems', '{}', 'Processors', 'CPU0')): _processor,
    ('GET', ('Systems', '{}', 'EthernetInterfaces')): _nics,
    ('GET', ('Systems', '{}', 'EthernetInterfaces', 'nic0')): _nic,
    ('GET', ('Systems', '{}', 'Storage')): _storages,
    ('GET', ('Systems', '{}', 'Storage', '{}')): _storage,
    ('GET', ('Systems', '{}', 'Storage', '{}', 'Drives', '{}')): _drive,
    ('GET', ('Systems', '{}', 'Storage', '{}', 'Volumes')): _volume_list,
    ('POST', ('Systems', '{}', 'Storage', '{}', 'Volumes')): _new_volume,
    ('GET', ('Systems', '{}', 'Storage', '{}', 'Volumes', '{}')): _volume,
    ('DELETE', ('Systems', '{}', 'Storage', '{}', 'Volumes', '{}')):
        _delete_volume,
    ('GET', ('TaskMonitors', '{}')): _task_monitor,
    ('GET', ('UpdateService',)): _update_service,
    ('POST', ('UpdateService', 'Actions', 'UpdateService.SimpleUpdate')):
        _simple_update,
    ('GET', ('Managers', '{}')): _manager,
    ('GET', ('Chassis', '{}')): _chassis,
    ('GET', ('Chassis', '{}', 'Thermal')): _thermal,
    ('GET', ('Chassis', '{}', 'Power')): _power,
    ('GET', ('Chassis', '{}', 'NetworkAdapters')): _adapters,
    ('GET', ('Chassis', '{}', 'NetworkAdapters', '{}')): _adapter,
    ('GET', ('Managers', '{}', 'VirtualMedia')): _vmedia_list,
    ('GET', ('Managers', '{}', 'VirtualMedia', '{}')): _vmedia,
    ('POST', ('Managers', '{}', 'VirtualMedia', '{}', 'Actions',
              'VirtualMedia.InsertMedia')): _insert_media,
    ('POST', ('Managers', '{}', 'VirtualMedia', '{}', 'Actions',
              'VirtualMedia.EjectMedia')): _eject_media,
}


class IpmiFleet:
    """IPMI BMCs served by pyghmi's BMC server (tests/bmc/ipmi_server.py,
    one loop answering every BMC of its process), ``per_process`` BMCs
    to a process, each on a UDP port of loopback (with 100 to a process,
    four bursts in eight of 400 sessions opened at once by one client
    left some unanswered; with 10 to a process, none in six; with the
    client's pyghmi reads fixed, six in six with 100).  Power
    changes are POSTed to ``notify`` (the AgentFleet's server: the agent
    boots on power on); each process writes every second how many
    commands each BMC answered, by kind, and when its power state was
    read.  ``drop``: the share of session set-up packets (logins) each
    BMC drops, as on a lossy network."""

    def __init__(self, count: int, tmp: str, notify: str | None = None,
                 per_process: int = 10, delay: float = 0.001,
                 keep: float = 600.0, drop: float = 0.0) -> None:
        socks = []
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((BMC_HOST, 0))
            socks.append(s)
        self.ports = [s.getsockname()[1] for s in socks]
        for s in socks:
            s.close()
        self.stats_files: list[str] = []
        self.procs: list = []
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for i in range(0, count, per_process):
            ports = self.ports[i:i + per_process]
            stats = os.path.join(tmp, 'ipmi-stats-%d.json' % i)
            cmd = [sys.executable, '-m', 'tests.bmc.ipmi_server',
                   '--ports', ','.join(map(str, ports)), '--stats', stats,
                   '--address', BMC_HOST, '--keep', str(keep),
                   '--delay', str(delay), '--drop', str(drop)]
            if notify:
                cmd += ['--notify', notify]
            self.procs.append(subprocess.Popen(
                cmd, cwd=root, stdout=subprocess.PIPE,
                stderr=open(stats + '.log', 'w'), text=True))
            self.stats_files.append(stats)
        for proc in self.procs:
            line = proc.stdout.readline()
            if not line.startswith('listening'):
                raise RuntimeError('IPMI BMC double did not start: %r'
                                   % line)

    def stats(self) -> dict[int, dict]:
        """port -> {'commands': N, 'reads': [wall-clock times]}

        Each process writes its file once a second, so these counts
        span up to a second more at each end than a window read from
        the service's own counters."""
        out = {}
        for f in self.stats_files:
            if os.path.exists(f):
                with open(f) as fh:
                    out.update({int(k): v for k, v in json.load(fh).items()})
        return out

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except Exception:   # noqa: BLE001
                proc.kill()


def inventory(macs: list[str]) -> dict:
    """What IPA's inventory collection reports of a fleet machine: the
    NICs (booted from the first), 64 CPUs, 512 GiB, one 1,789 GiB disk
    (the scheduling properties bench-fleet enrolls with)."""
    return {
        'interfaces': [{'name': 'eth%d' % i, 'mac_address': mac,
                        'ipv4_address': None, 'has_carrier': True,
                        'speed_mbps': 25000}
                       for i, mac in enumerate(macs)],
        'cpu': {'model_name': 'Fleet CPU', 'count': 64,
                'architecture': 'x86_64', 'frequency': '2400'},
        'memory': {'total': 549755813888, 'physical_mb': 524288},
        'disks': [{'name': '/dev/sda', 'model': 'fleet disk',
                   'size': 1789 * 1024 ** 3, 'rotational': False}],
        'boot': {'current_boot_mode': 'uefi', 'pxe_interface': macs[0]},
        'bmc_address': '127.0.0.1',
        'system_vendor': {'manufacturer': 'Fleet', 'product_name': 'Double',
                          'serial_number': macs[0]},
    }


class AgentFleet:
    """Agents for many nodes; ``boot``/``power_off`` are called from
    the BMC double's power changes."""

    def __init__(self, api_endpoint: str, command_seconds: float = 1.0,
                 boot_seconds: float = 1.0,
                 heartbeat_seconds: float | None = None,
                 workers: int = 8) -> None:
        self.api = urllib.parse.urlsplit(api_endpoint)
        self.command_seconds = command_seconds
        self.boot_seconds = boot_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.lock = threading.Lock()
        self.agents: dict[str, dict] = {}     # node uuid -> state
        self.commands: dict[str, dict] = {}   # command id -> record
        self.ids = itertools.count(1)
        self.stats = {'lookups': 0, 'lookups_retried': 0,
                      'instance_boots': 0, 'heartbeats': 0, 'api_errors': 0,
                      'heartbeat_errors': 0, 'heartbeats_retried': 0,
                      'commands': 0,
                      'command_polls': 0, 'inventories': 0,
                      'inventories_retried': 0,
                      # the heartbeats' answers by HTTP status
                      'heartbeat_statuses': {}}
        self.errors: list[str] = []
        self._due: list[tuple[float, str, int]] = []  # (when, node, gen)
        self._wake = threading.Condition(self.lock)
        self._stop = False
        self._local = threading.local()
        # node uuid -> its NICs' MAC addresses: the ramdisk's next boot
        # inspects (posts the inventory) instead of looking up, as IPA
        # does when booted with ipa-inspection-callback-url
        self.inspecting: dict[str, list[str]] = {}
        # an IPMI BMC's (port) power change, from IpmiFleet's processes
        self.on_bmc_power = lambda port, on: None
        fleet = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self):
                u = urllib.parse.urlsplit(self.path)
                parts = u.path.strip('/').split('/')
                token = urllib.parse.parse_qs(u.query).get(
                    'agent_token', [None])[0]
                if len(parts) < 4 or parts[0] != 'agent':
                    return None, None, 'not an agent path'
                with fleet.lock:
                    agent = fleet.agents.get(parts[1])
                    if agent is None or not agent['up']:
                        return None, None, 'agent down'
                    if token != agent['token']:
                        return None, None, 'token'
                return parts[1], parts[4:], None

            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(length) or b'{}')
                if self.path.startswith('/bmc-port/'):
                    # an IPMI BMC double's power change (IpmiFleet)
                    port = int(self.path.split('/')[2])
                    fleet.on_bmc_power(port, bool(body.get('on')))
                    return self._send(200, {})
                node, rest, why = self._route()
                if why == 'token':
                    return self._send(401, {'faultstring': 'bad token'})
                if why:
                    # a powered-off machine does not answer: close
                    self.close_connection = True
                    return self._send(503, {'faultstring': why})
                busy = fleet._busy_with(node)
                if busy:
                    # IPA's AgentIsBusy
                    return self._send(409, {
                        'type': 'AgentIsBusy', 'code': 409,
                        'message': 'Agent is busy',
                        'details': 'executing command %s' % busy})
                self._send(200, fleet._run(node, body.get('name'),
                                           body.get('params') or {}))

            def do_GET(self):
                node, rest, why = self._route()
                if why == 'token':
                    return self._send(401, {'faultstring': 'bad token'})
                if why:
                    self.close_connection = True
                    return self._send(503, {'faultstring': why})
                if not rest:
                    return self._send(200, {'commands': fleet._listed(node)})
                cid = rest[-1] if rest else ''
                record = fleet._status(node, cid)
                if record is None:
                    return self._send(404, {'faultstring': 'no command'})
                self._send(200, record)

        self.server = _Server(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        self._threads = [threading.Thread(target=self.server.serve_forever,
                                          daemon=True)]
        self._threads += [threading.Thread(target=self._work, daemon=True)
                          for _ in range(workers)]
        for t in self._threads:
            t.start()

    # ---- power, from the BMC double ----
    def power(self, node: str, on: bool) -> None:
        with self.lock:
            a = self.agents.setdefault(node, {
                'up': False, 'token': None, 'gen': 0, 'interval': None,
                'disk': False, 'instance': False, 'lookup_delay': 1.0})
            a['gen'] += 1
            a['up'] = False
            a['token'] = None
            a['commands'] = []      # a new boot: IPA's list starts empty
            if not on:
                if a['instance']:
                    # the instance went down: the next boot is the
                    # ramdisk's (tear down, then cleaning)
                    a['instance'] = a['disk'] = False
                return
            if a['disk']:
                a['instance'] = True
                self.stats['instance_boots'] += 1
                return
            a['lookup_delay'] = 1.0
            self._schedule(node, a['gen'], self.boot_seconds)

    def boot_from_network(self, node: str) -> None:
        """The next power on boots the ramdisk, not a disk written
        before: what a boot interface that sets the boot device does
        (the fake one sets none), e.g. for the cleaning after a
        deployment that failed between the image's write and the
        instance's boot."""
        with self.lock:
            a = self.agents.get(node)
            if a is not None:
                a['disk'] = a['instance'] = False

    def _schedule(self, node, gen, delay):
        self._due.append((time.monotonic() + delay, node, gen))
        self._wake.notify()

    # ---- commands ----
    def _run(self, node, name, params):
        cid = str(next(self.ids))
        record = {'id': cid, 'command_name': name,
                  'command_status': 'RUNNING', 'command_result': None,
                  'command_error': None}
        if name == 'clean.get_clean_steps':
            record.update(command_status='SUCCEEDED', command_result={
                'clean_steps': {'GenericHardwareManager': STEPS},
                'hardware_manager_version': {'generic': '1.2'}})
        elif name in SYNC:
            record.update(command_status='SUCCEEDED', command_result={})
        with self.lock:
            self.stats['commands'] += 1
            if name == 'standby.sync':
                self.agents[node]['disk'] = True
            record['node'] = node
            record['done_at'] = time.monotonic() + self.command_seconds
            kind = name.split('.', 1)[0]
            if name == '%s.execute_%s_step' % (kind, kind):
                # IPA's step result names the step it ran
                record['ran'] = {'%s_result' % kind: None,
                                 '%s_step' % kind: params.get('step')}
            self.commands[cid] = record
            self.agents[node].setdefault('commands', []).append(cid)
            if record['command_status'] == 'RUNNING':
                # IPA heartbeats as soon as an asynchronous command ends
                self._schedule(node, self.agents[node]['gen'],
                               self.command_seconds + 0.05)
        return self._public(record)

    def _status(self, node, cid):
        with self.lock:
            self.stats['command_polls'] += 1
            record = self.commands.get(cid)
            if record is None or record['node'] != node:
                return None
            return self._public(self._settled(record))

    def _settled(self, record):
        """The record as it is now (a command ends command_seconds
        after it started); under the lock."""
        if record['command_status'] == 'RUNNING' and \
                time.monotonic() >= record['done_at']:
            record.update(command_status='SUCCEEDED',
                          command_result=record.get('ran') or {'ok': True})
        return record

    def _listed(self, node):
        """GET /v1/commands/: this boot's commands, in their order."""
        with self.lock:
            self.stats['command_polls'] += 1
            return [self._public(self._settled(self.commands[cid]))
                    for cid in self.agents[node].get('commands', [])]

    def _busy_with(self, node):
        """The command the agent still runs, if its last one does
        (IPA refuses another then: 409)."""
        with self.lock:
            cids = self.agents[node].get('commands')
            if not cids:
                return None
            last = self._settled(self.commands[cids[-1]])
            return last['command_name'] \
                if last['command_status'] == 'RUNNING' else None

    @staticmethod
    def _public(record):
        return {k: v for k, v in record.items()
                if k not in ('node', 'done_at', 'ran')}

    # ---- the agents' own side: lookup and heartbeat ----
    def _work(self):
        while True:
            with self.lock:
                while True:
                    if self._stop:
                        return
                    now = time.monotonic()
                    if self._due:
                        self._due.sort()
                        if self._due[0][0] <= now:
                            _, node, gen = self._due.pop(0)
                            break
                        self._wake.wait(self._due[0][0] - now)
                    else:
                        self._wake.wait(0.5)
                a = self.agents.get(node)
                if a is None or a['gen'] != gen:
                    continue        # powered off or rebooted since
                up, token = a['up'], a['token']
            try:
                if not up and node in self.inspecting:
                    self._inspect(node, gen)
                elif not up:
                    self._lookup(node, gen)
                else:
                    self._heartbeat(node, gen, token)
            except Exception as e:      # noqa: BLE001 (counted, reported)
                # no answer (a timeout, a reset): IPA tries again
                with self.lock:
                    self.stats['api_errors'] += 1
                    self.errors.append('%s: %s' % (node, e))
                    self._schedule(node, gen, 5)

    def _http(self, method, path, body=None, version='1.68'):
        conn = getattr(self._local, 'conn', None)
        if conn is None:
            conn = self._local.conn = http.client.HTTPConnection(
                self.api.hostname, self.api.port, timeout=60)
        data = json.dumps(body) if body is not None else None
        headers = {'Content-Type': 'application/json'}
        if version:
            headers['X-OpenStack-Ironic-API-Version'] = version
        for attempt in range(2):
            try:
                conn.request(method, path, data, headers)
                r = conn.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                if attempt:
                    raise

    def _lookup(self, node, gen):
        status, raw = self._http('GET', '/v1/lookup?node_uuid=%s' % node)
        with self.lock:
            self.stats['lookups'] += 1
            a = self.agents[node]
            if a['gen'] != gen:
                return
            if status in (404, 409, 503):
                # not yet in a state that expects the agent, or locked:
                # again and again, backing off to 30 s (IPA restarts
                # when its lookup times out, and looks up again)
                self.stats['lookups_retried'] += 1
                a['lookup_delay'] = min(30.0, a.get('lookup_delay', 1) * 1.5)
                self._schedule(node, gen, a['lookup_delay'])
                return
            if status != 200:
                self.errors.append('lookup %s: %d %s' % (node, status,
                                                         raw[:200]))
                return
            config = json.loads(raw)['config']
            a['up'] = True
            a['token'] = config.get('agent_token')
            timeout = config.get('heartbeat_timeout') or 300
            a['interval'] = self.heartbeat_seconds or \
                timeout * random.uniform(0.3, 0.6)
            self._schedule(node, gen, 0)

    def _inspect(self, node, gen):
        """Post the inventory to /v1/continue_inspection, as IPA does
        (no version header, no token): the service finds the node by its
        MAC addresses."""
        macs = self.inspecting[node]
        status, raw = self._http('POST', '/v1/continue_inspection', {
            'inventory': inventory(macs)}, version=None)
        with self.lock:
            self.stats['inventories'] += 1
            if status == 202:
                # the service has it (and may have powered the machine
                # off before this answer came back); IPA then looks its
                # node up, and heartbeats where the service lets it
                # (fast track)
                self.inspecting.pop(node, None)
                a = self.agents[node]
                if a['gen'] == gen:
                    a['lookup_delay'] = 1.0
                    self._schedule(node, gen, 0)
                return
            a = self.agents[node]
            if a['gen'] != gen:
                return
        if status == 404 and not self._inspection_expected(node):
            # the service expects no inventory any more (the inspection
            # ended without this boot hearing so: its answer lost with a
            # conductor): this boot goes on as IPA's does after its
            # inspection, looking its node up; the next boots do not
            # inspect
            with self.lock:
                self.inspecting.pop(node, None)
                if self.agents[node]['gen'] == gen:
                    self._schedule(node, gen, 0)
            return
        with self.lock:
            if status in (404, 409, 503):
                # not yet waiting for it (still powering on), or locked
                self.stats['inventories_retried'] += 1
                a['lookup_delay'] = min(30.0, a['lookup_delay'] * 1.5)
                self._schedule(node, gen, a['lookup_delay'])
                return
            self.errors.append('inventory %s: %d %s' % (node, status,
                                                        raw[:200]))

    def _inspection_expected(self, node) -> bool:
        """Whether the node is being inspected (what the boot's kernel
        parameters would tell IPA: the double reads the node instead)."""
        try:
            status, raw = self._http(
                'GET', '/v1/nodes/%s?fields=provision_state' % node)
        except (OSError, http.client.HTTPException):
            return True
        return status != 200 or json.loads(raw)['provision_state'] in (
            'inspecting', 'inspect wait')

    def _heartbeat(self, node, gen, token):
        status, raw = self._http('POST', '/v1/heartbeat/%s' % node, {
            'callback_url': '%s/agent/%s' % (self.url, node),
            'agent_token': token, 'agent_version': '9.11.0'})
        with self.lock:
            a = self.agents[node]
            self.stats['heartbeats'] += 1
            by = self.stats['heartbeat_statuses']
            by[str(status)] = by.get(str(status), 0) + 1
            if status not in (202, 409, 503) and a['gen'] == gen:
                self.stats['heartbeat_errors'] += 1
                self.errors.append('heartbeat %s: %d %s' % (
                    node, status, raw[:200]))
            if status != 202:
                self.stats['heartbeats_retried'] += 1
            if a['gen'] == gen and a['up']:
                # another is due at the interval (a command's end may
                # bring one sooner)
                self._due = [d for d in self._due
                             if not (d[1] == node and d[2] == gen)]
                # an error: again soon, as IPA (a 409: the node is busy)
                self._schedule(node, gen, a['interval'] if status == 202
                               else 1 if status == 409 else 5)

    def stop(self):
        with self.lock:
            self._stop = True
            self._wake.notify_all()
        self.server.shutdown()
        self.server.server_close()
