"""A BMC that answers what no Redfish service should: every node of the
``redfish`` hardware type meets a ComputerSystem (or its BIOS, processor
or NIC) that is not JSON, not an object, empty, or has odd fields (power
states, boot objects, status, NUL characters, 100 KB strings, NaN, a
lone surrogate, JSON nested thousands deep, a 5,000-digit integer, MACs
that are none), from the fleet's Redfish double (tools/fleet_doubles.py:
a system's ``odd`` documents), and is driven through the
API as an operator would: validate, power on, the boot device read,
listed and set, verification (``manage``) and, where it got there,
inspection.

Each request is answered (a BMC's failure is an error naming the BMC,
as in Ironic; never "An internal error occurred"), no conductor work
ends in an unexpected exception, no node is left in a transient state,
and what a node records as its last error names the BMC, not a Python
exception alone.  The same sweep with the System as sent (``as-sent``)
has everything succeed, so the paths above are the ones taken."""

import json
import re
import time
from concurrent import futures

import pytest

from tests import fleet as test_fleet
from tests import harness

fleet_doubles = test_fleet.doubles()
POWER_PATH = '/v1/nodes/%s/states/power'
BOOT_DEVICE = '/v1/nodes/%s/management/boot_device'


def _set(path, value):
    """The document with ``value`` at ``path`` (keys, outermost first)."""
    def odd(doc):
        at = doc
        for key in path[:-1]:
            at = at[key]
        at[path[-1]] = value
        return doc
    return odd


def _drop(*path):
    def odd(doc):
        at = doc
        for key in path[:-1]:
            at = at[key]
        del at[path[-1]]
        return doc
    return odd


def _text(pattern, replacement):
    """The document's JSON with what matches ``pattern`` replaced (what
    json.dumps cannot write: NaN, integers of thousands of digits, deep
    nesting)."""
    def odd(doc):
        text, n = re.subn(pattern, lambda m: replacement,
                          json.dumps(doc).encode(), count=1)
        assert n == 1, pattern
        return text
    return odd


class Other:
    """An odd resource of the System's other than the System itself
    (``key``: the fleet double's, tools/fleet_doubles.py)."""

    def __init__(self, key: str, odd) -> None:
        self.key, self.odd = key, odd


def Bios(odd):
    return Other('odd_bios', odd)


def Cpu(odd):
    return Other('odd_cpu', odd)


def Nic(odd):
    return Other('odd_nic', odd)


POWER = rb'"PowerState": "[A-Za-z]*"'
MEMORY = rb'"TotalSystemMemoryGiB": [0-9]+'
ODD = {
    'as-sent': None,
    'not-json': lambda doc: b'<html><body>Service busy</body></html>',
    'a-list': lambda doc: b'["JSON", "but not a System"]',
    'a-string': lambda doc: b'"System"',
    'empty-object': lambda doc: b'{}',
    'empty-body': lambda doc: b'',
    'power-null': _set(('PowerState',), None),
    'power-number': _set(('PowerState',), 42),
    'power-unknown': _set(('PowerState',), 'Exploding'),
    'power-list': _set(('PowerState',), ['On']),
    'power-nul': _set(('PowerState',), 'Off\u0000'),
    'power-100k': _set(('PowerState',), 'O' * 100000),
    'power-nan': _text(POWER, b'"PowerState": NaN'),
    'power-surrogate': _text(POWER, b'"PowerState": "\\ud800"'),
    'no-power': _drop('PowerState'),
    'no-boot': _drop('Boot'),
    'boot-string': _set(('Boot',), 'Pxe'),
    'boot-null': _set(('Boot',), None),
    'boot-target-number': _set(('Boot', 'BootSourceOverrideTarget'), 42),
    'boot-target-unknown': _set(('Boot', 'BootSourceOverrideTarget'),
                                'Floppy'),
    'boot-mode-unknown': _set(('Boot', 'BootSourceOverrideMode'), 'Weird'),
    'boot-allowed-string': _set(
        ('Boot', 'BootSourceOverrideTarget@Redfish.AllowableValues'), 'Pxe'),
    'boot-allowed-numbers': _set(
        ('Boot', 'BootSourceOverrideTarget@Redfish.AllowableValues'), [1]),
    'status-string': _set(('Status',), 'OK'),
    'health-number': _set(('Status', 'Health'), 5),
    'health-unknown': _set(('Status', 'Health'), 'Glowing'),
    'no-actions': _drop('Actions'),
    'reset-target-null': _set(('Actions', '#ComputerSystem.Reset', 'target'),
                              None),
    'reset-allowed-string': _set(
        ('Actions', '#ComputerSystem.Reset',
         'ResetType@Redfish.AllowableValues'), 'On'),
    'secure-boot-null': _set(('SecureBoot',), None),
    'secure-boot-string': _set(('SecureBoot',), 'Enabled'),
    'bios-version-100k': _set(('BiosVersion',), 'v' * 100000),
    'bios-version-nul': _set(('BiosVersion',), '1.0\u0000'),
    'bios-version-surrogate': _text(rb'"BiosVersion": "[^"]*"',
                                    b'"BiosVersion": "\\udfff"'),
    'bios-version-number': _set(('BiosVersion',), 1.5),
    'bios-not-json': Bios(lambda doc: b'<html>'),
    'bios-attributes-string': Bios(_set(('Attributes',), 'BootMode=Uefi')),
    'bios-attributes-null': Bios(_set(('Attributes',), None)),
    'bios-name-300': Bios(_set(('Attributes', 'n' * 300), 'x')),
    'bios-name-nul': Bios(_set(('Attributes', 'Boot\u0000Mode'), 'x')),
    'bios-name-surrogate': Bios(_text(rb'"BootMode"', b'"Boot\\ud800"')),
    'bios-value-object': Bios(_set(('Attributes', 'BootMode'),
                                   {'deep': [1, {'er': None}]})),
    'bios-value-nul': Bios(_set(('Attributes', 'BootMode'), 'Uefi\u0000')),
    'bios-value-100k': Bios(_set(('Attributes', 'BootMode'), 'U' * 100000)),
    'bios-value-big-int': Bios(_set(('Attributes', 'BootMode'), 2 ** 70)),
    'cpu-cores-string': Cpu(_set(('TotalCores',), 'eight')),
    'cpu-cores-negative': Cpu(_set(('TotalCores',), -8)),
    'cpu-cores-huge': Cpu(_set(('TotalCores',), 2 ** 70)),
    'cpu-arch-object': Cpu(_set(('ProcessorArchitecture',), {'x': 86})),
    'cpu-not-json': Cpu(lambda doc: b'CPU0'),
    'nic-mac-null': Nic(_set(('MACAddress',), None)),
    'nic-mac-number': Nic(_set(('MACAddress',), 5254)),
    'nic-mac-odd': Nic(_set(('MACAddress',), 'not a MAC')),
    'nic-mac-nul': Nic(_set(('MACAddress',), '52:54:00:00:00:01\u0000')),
    'nic-mac-100k': Nic(_set(('MACAddress',), 'm' * 100000)),
    'nic-status-string': Nic(_set(('Status',), 'Enabled')),
    'name-100k': _set(('Name',), 'n' * 100000),
    'name-nul': _set(('Name',), 'sys\u0000'),
    'memory-string': _set(('MemorySummary', 'TotalSystemMemoryGiB'), 'lots'),
    'memory-list': _set(('MemorySummary',), [64]),
    'memory-5000-digits': _text(MEMORY,
                                b'"TotalSystemMemoryGiB": ' + b'9' * 5000),
    'memory-infinity': _text(MEMORY, b'"TotalSystemMemoryGiB": Infinity'),
    'processors-string': _set(('Processors',), 'many'),
    'processors-null': _set(('Processors',), None),
    'processors-elsewhere': _set(('Processors',),
                                 {'@odata.id': '/redfish/v1/Nowhere'}),
    'nics-string': _set(('EthernetInterfaces',), 'eth0'),
    'no-nics': _drop('EthernetInterfaces'),
    'deep-oem': _text(rb'"SystemType"',
                      b'"Oem": ' + b'[' * 5000 + b']' * 5000
                      + b', "SystemType"'),
}
# the odd Systems whose texts or numbers reach a column: what a database
# may refuse that another keeps
STORED = frozenset(n for n in ODD if n == 'as-sent' or any(
    w in n for w in ('nul', 'surrogate', '100k', '300', 'number', 'object',
                     'big-int', 'digits', 'huge')))
# what a node may rest in once its verification, cleaning or
# inspection ended
FAILED = ('inspect failed', 'clean failed')
RESTING = ('enroll', 'manageable') + FAILED


# the service as the sweeps have it: the redfish interfaces enabled, a
# BMC given one attempt and (whose PowerState never says On) a power on
# failed after a second
SERVICE = {
    'enabled_hardware_types': ['redfish'],
    'enabled_power_interfaces': ['redfish'],
    'enabled_management_interfaces': ['redfish'],
    'enabled_boot_interfaces': ['ipxe'],
    'enabled_deploy_interfaces': ['direct'],
    'enabled_bios_interfaces': ['no-bios', 'redfish'],
    'enabled_inspect_interfaces': ['no-inspect', 'redfish'],
    'enabled_raid_interfaces': ['no-raid', 'redfish'],
    'conductor.power_state_change_timeout': 1,
    'redfish.connection_attempts': 1,
    'redfish.connection_retry_interval': 0,
    'redfish.connection_timeout': 10,
    # steps polled every 0.2 s at most (the BMC's tasks end at once)
    'agent.command_poll_max_interval': 0.2,
    # sensor data read (when a sweep asks) of nodes not deployed
    'sensor_data.send_sensor_data': True,
    'sensor_data.enable_for_undeployed_nodes': True}
# on SQLite here; on PostgreSQL and MariaDB (where a text a BMC sent
# that one of them refuses must not stop a node) with the functional
# tests (tests/functional/test_odd_sweeps_on_servers.py)
api = harness.on_databases(['sqlite'], SERVICE)


def sized_fleet(count: int):
    """A ``fleet`` fixture: the fleet's Redfish double of ``count``
    systems."""
    @pytest.fixture
    def fleet(api):
        f = fleet_doubles.RedfishFleet(count)
        yield f
        f.stop()
    return fleet


fleet = sized_fleet(len(ODD))


def _message(body) -> str:
    return harness.error_message(body) if isinstance(body, dict) else \
        repr(body)


def _settled(api, uuid: str, timeout: float = 30.0) -> dict:
    """The node once no power change or provision work is under way."""
    deadline = time.monotonic() + timeout
    while True:
        api.conductor.workers.wait_idle(timeout)
        node = api.node(uuid)
        if not node['reservation'] and node['target_power_state'] is None \
                and (node['target_provision_state'] is None
                     or node['provision_state'] in FAILED):
            return node
        assert time.monotonic() < deadline, 'node %s still busy: %s' % (
            node['name'], {k: node[k] for k in (
                'power_state', 'target_power_state', 'provision_state',
                'target_provision_state', 'reservation', 'last_error')})
        time.sleep(0.01)


class Sweep:
    """Drives one node and keeps what it was told."""

    def __init__(self, api, uuid: str) -> None:
        self.api, self.uuid = api, uuid
        self.answers: list[tuple[str, int, str]] = []
        self.errors: list[str] = []

    def call(self, method, path, body=None, version='1.81'):
        status, got, _ = self.api.request(method, path % self.uuid, body,
                                          version=version)
        self.answers.append(('%s %s' % (method, path), status,
                             _message(got) if status >= 400 else ''))
        return status, got

    def settle(self) -> dict:
        node = _settled(self.api, self.uuid)
        if node['last_error']:
            self.errors.append(node['last_error'])
        return node


# an odd System the double could not make (the test's own error)
BROKEN: list[str] = []


def _checked(odd, name: str):
    def checked(doc):
        try:
            return odd(doc)
        except Exception as e:
            BROKEN.append('%s: %r' % (name, e))
            raise
    return checked


def odd_node(api, fleet, index: int, name: str, key: str, odd,
             system: dict | None = None, **fields) -> Sweep:
    """A node (of ``fields``) of the fleet's system ``index``, whose
    resource ``key`` answers what ``odd`` makes of it (none: as sent)
    and which has ``system``'s settings (the double's ``storage``...)."""
    sid = 'sys-%05d' % index
    fleet.systems[sid].update(system or {})
    if odd is not None:
        fleet.systems[sid][key] = _checked(odd, name)
    node = api.create_node(
        driver='redfish', name='odd-%s' % name,
        driver_info={'redfish_address': fleet.address(sid),
                     'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
                     'redfish_username': 'admin',
                     'redfish_password': 'password'}, **fields)
    return Sweep(api, node['uuid'])


def _drive(api, fleet, name: str, index: int) -> Sweep:
    odd = ODD[name]
    key, odd = (odd.key, odd.odd) if isinstance(odd, Other) else ('odd', odd)
    sweep = odd_node(api, fleet, index, name, key, odd,
                     inspect_interface='redfish', bios_interface='redfish')
    sweep.call('GET', '/v1/nodes/%s/validate')
    if sweep.call('PUT', POWER_PATH, {'target': 'power on'})[0] == 202:
        sweep.settle()
    sweep.call('GET', BOOT_DEVICE)
    sweep.call('GET', BOOT_DEVICE + '/supported')
    sweep.call('PUT', BOOT_DEVICE, {'boot_device': 'pxe'})
    if sweep.call('PUT', '/v1/nodes/%s/states/provision',
                  {'target': 'manage'})[0] == 202:
        node = sweep.settle()
        if node['provision_state'] == 'manageable':
            if sweep.call('PUT', '/v1/nodes/%s/states/provision',
                          {'target': 'inspect'})[0] == 202:
                sweep.settle()
    return sweep


def sweep(api, fleet, odd: dict, names, drive
          ) -> tuple[dict, harness.ErrorRecords]:
    """The odd answers of ``names`` (keys of ``odd``, each the fleet's
    system of its place in ``odd``) driven once each by ``drive(api,
    fleet, name, index)``: their Sweeps, with the service's log
    records."""
    BROKEN.clear()
    # the nodes side by side (a BMC that never reports the power state
    # asked for takes power_state_change_timeout)
    with harness.ErrorRecords().watching() as records, \
            futures.ThreadPoolExecutor(16) as pool:
        running = {name: pool.submit(drive, api, fleet, name, i)
                   for i, name in enumerate(odd) if name in names}
        out = {name: f.result() for name, f in running.items()}
    assert BROKEN == []
    return out, records


def check(api, fleet, odd: dict, names, drive, outcome) -> None:
    """Sweep ``names`` (``sweep``) and find nothing wrong: no problem
    (``problems``), no answer whose outcome differs from the one it must
    have (``outcome(name, sweep)``: what differs), no conductor work
    ended in an unexpected exception."""
    sweeps, records = sweep(api, fleet, odd, names, drive)
    found = []
    for name, swept in sweeps.items():
        found += problems(api, name, swept) + outcome(name, swept)
    assert found == [], '\n'.join(found)
    assert records.unexpected() == [], '\n'.join(records.unexpected())


def _check_as_sent(api, sweep: Sweep) -> None:
    """The System as sent is read, set, verified and inspected."""
    assert [a for a in sweep.answers if a[1] >= 400] == [], sweep.answers
    assert sweep.errors == []
    node = api.node(sweep.uuid)
    assert (node['provision_state'], node['power_state']) == \
        ('manageable', 'power on')
    # inspected: what the BMC reports
    props = node['properties']
    assert (props['cpus'], props['cpu_arch'], props['memory_mb']) == \
        (fleet_doubles.CORES, 'x86_64', fleet_doubles.MEMORY_GIB * 1024)
    status, bios, _ = api.request('GET', '/v1/nodes/%s/bios' % sweep.uuid,
                                  version='1.40')
    assert {s['name']: s['value'] for s in bios['bios']} == \
        fleet_doubles.BIOS
    assert _ports(api, sweep) == [fleet_doubles.nic_mac('sys-00000')]


def _ports(api, sweep: Sweep) -> list[str]:
    status, ports, _ = api.request('GET', '/v1/ports?node_uuid=%s'
                                   % sweep.uuid)
    return [p['address'] for p in ports['ports']]


def problems(api, name: str, sweep: Sweep) -> list[str]:
    """What is wrong with how the service met an odd BMC: an answer
    that is an internal error or a 5xx not naming the BMC, a last error
    that does not name it or quotes it whole, a node not resting or
    locked."""
    out = []
    for what, status, message in sweep.answers:
        if 'internal error' in message.lower():
            out.append('%s: %s: %s' % (name, what, message))
        elif status >= 500 and 'redfish' not in message.lower() and \
                'bmc' not in message.lower():
            # a BMC's failure on a call answered at once: as Ironic, a
            # 500 whose message is the driver's
            out.append('%s: %s: %d %s' % (name, what, status, message))
    for error in sweep.errors:
        # what the BMC sent is quoted, not kept whole (100 KB here)
        if len(error) >= 1000 or 'internal error' in error.lower() or (
                'redfish' not in error.lower() and
                'bmc' not in error.lower()):
            out.append('%s: last_error %s' % (name, error[:1000]))
    node = api.node(sweep.uuid)
    if node['provision_state'] not in RESTING or node['reservation'] or (
            node['target_provision_state'] is not None and
            node['provision_state'] not in FAILED):
        out.append('%s: left %s (target %s), lock %s' % (
            name, node['provision_state'], node['target_provision_state'],
            node['reservation']))
    return out


def _problems(api, name: str, sweep: Sweep) -> list[str]:
    """What is wrong with how the service met an odd System."""
    out = problems(api, name, sweep)
    # no port of what is not a MAC address
    if _ports(api, sweep) not in (
            [], [fleet_doubles.nic_mac('sys-%05d' % list(ODD).index(name))]):
        out.append('%s: ports %s' % (name, _ports(api, sweep)))
    return out


def test_odd_systems_are_answered_naming_the_bmc_and_stop_no_node(
        api, fleet):
    """One test per database (a module-scoped fixture would run the
    sweep once per xdist worker): every odd System on SQLite, on
    PostgreSQL and MariaDB those whose texts or numbers a database may
    refuse (``STORED``; the rest takes the same paths everywhere)."""
    sweeps, records = sweep(api, fleet, ODD, ODD if api.db_kind == 'sqlite'
                            else STORED, _drive)
    _check_as_sent(api, sweeps['as-sent'])
    problems = [p for name, sweep in sweeps.items() if name != 'as-sent'
                for p in _problems(api, name, sweep)]
    assert problems == [], '\n'.join(problems)
    # no conductor work ended in an unexpected exception
    unexpected = records.unexpected()
    assert unexpected == [], '\n'.join(unexpected)
