"""A BMC whose Chassis answers what no Redfish service should: a
Chassis, its Thermal or Power resource, its network adapters that are
not JSON, not an object, or have odd fields (temperatures, fans and
power supplies that are no list or have no id, readings that are words,
ids that are 100 KB or hold a NUL, firmware versions of every shape),
from the fleet's Redfish double (tools/fleet_doubles.py: a system's
``odd_chassis``, ``odd_thermal``, ``odd_power``, ``odd_adapters`` and
``odd_adapter``).

Each node is driven as an operator meets it: verification (which reads
the network adapters' firmware versions), the firmware components (API
1.86), and the conductor's sensor data notification of the node (what
``[sensor_data]send_sensor_data`` sends each interval).  As for odd
Systems (test_redfish_odd_systems): every request is answered, no work
ends in an unexpected exception, no node is left locked or in a
transient state.  Each odd answer also has the outcome it must have: a
resource that cannot be read leaves its sensors (or the ``nic``
component) out, and the rest is read and sent."""

import threading

import pytest

from baremetal.common import notifications
from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
_set, _drop, _text = odd_systems._set, odd_systems._drop, odd_systems._text
FIRMWARE = '/v1/nodes/%s/firmware'
ALL = ('Fan', 'Power', 'Temperature')
THERMAL = ('Power',)
POWER = ('Fan', 'Temperature')

# the service as the odd Systems' sweep has it
api = odd_systems.api


class Odd:
    """What a system's Chassis resource answers (``key``: the fleet
    double's), and the outcome: the ``nic`` firmware component's version
    (None: none) and the sensor types sent with readings."""

    def __init__(self, key, odd, nic=fleet_doubles.NIC_FIRMWARE,
                 sensors=ALL) -> None:
        self.key, self.odd, self.nic, self.sensors = key, odd, nic, sensors


def Chassis(odd, nic=None, sensors=()):
    return Odd('odd_chassis', odd, nic, sensors)


def Thermal(odd, sensors=THERMAL):
    return Odd('odd_thermal', odd, sensors=sensors)


def Power(odd, sensors=POWER):
    return Odd('odd_power', odd, sensors=sensors)


def Adapters(odd, nic=None):
    return Odd('odd_adapters', odd, nic)


def Adapter(odd, nic=None):
    return Odd('odd_adapter', odd, nic)


TEMPERATURE = ('Temperatures', 0)
FAN = ('Fans', 0)
SUPPLY = ('PowerSupplies', 0)
VERSION = ('Controllers', 0, 'FirmwarePackageVersion')
ODD = {
    'as-sent': Odd(None, None),
    'chassis-not-json': Chassis(lambda doc: b'<html>'),
    'chassis-a-list': Chassis(lambda doc: b'[]'),
    'chassis-no-id': Chassis(_drop('Id')),
    'chassis-thermal-number': Chassis(_set(('Thermal',), 5),
                                      nic=fleet_doubles.NIC_FIRMWARE,
                                      sensors=('Power',)),
    'chassis-no-adapters': Chassis(_drop('NetworkAdapters'),
                                   sensors=ALL),
    'thermal-not-json': Thermal(lambda doc: b'<html>'),
    'thermal-a-list': Thermal(lambda doc: b'[1]'),
    'thermal-temperatures-string': Thermal(_set(('Temperatures',), 'hot')),
    'thermal-temperature-null': Thermal(_set(TEMPERATURE, None)),
    'thermal-no-member-id': Thermal(_drop(*TEMPERATURE, 'MemberId')),
    'thermal-member-100k': Thermal(_set(TEMPERATURE + ('MemberId',),
                                        't' * 100000), sensors=ALL),
    'thermal-member-nul': Thermal(_set(TEMPERATURE + ('MemberId',),
                                       'CPU\u0000'), sensors=ALL),
    'thermal-reading-word': Thermal(_set(TEMPERATURE + ('ReadingCelsius',),
                                         'hot'), sensors=ALL),
    'thermal-sensor-number-word': Thermal(_set(
        TEMPERATURE + ('SensorNumber',), 'one')),
    'fan-reading-word': Thermal(_set(FAN + ('Reading',), 'fast')),
    'fan-units-unknown': Thermal(_set(FAN + ('ReadingUnits',), 'Knots'),
                                 sensors=ALL),
    'fan-status-string': Thermal(_set(FAN + ('Status',), 'OK')),
    'power-not-json': Power(lambda doc: b'<html>'),
    'power-no-id': Power(_drop('Id')),
    'power-supplies-null': Power(_set(('PowerSupplies',), None)),
    'power-capacity-word': Power(_set(SUPPLY + ('PowerCapacityWatts',),
                                      'big')),
    'power-capacity-huge': Power(_set(SUPPLY + ('PowerCapacityWatts',),
                                      2 ** 70), sensors=ALL),
    'power-serial-100k': Power(_set(SUPPLY + ('SerialNumber',),
                                    's' * 100000), sensors=ALL),
    'adapters-not-json': Adapters(lambda doc: b'<html>'),
    'adapters-members-string': Adapters(_set(('Members',), 'NIC.1')),
    'adapter-not-json': Adapter(lambda doc: b'nic'),
    'adapter-controllers-string': Adapter(_set(('Controllers',), 'c')),
    'adapter-version-100k': Adapter(_set(VERSION, 'v' * 100000),
                                    nic='v' * 252 + '...'),
    'adapter-version-nul': Adapter(_set(VERSION, '22\u0000'),
                                   nic='22\\x00'),
    'adapter-version-number': Adapter(_set(VERSION, 22.5), nic='22.5'),
    'adapter-version-null': Adapter(_set(VERSION, None)),
}


fleet = odd_systems.sized_fleet(len(ODD))


@pytest.fixture
def sent(monkeypatch):
    """The sensor data notifications sent, by node UUID."""
    out, lock = {}, threading.Lock()

    def emit(event_type, payload, context=None):
        with lock:
            out[payload['node_uuid']] = payload['payload']
    monkeypatch.setattr(notifications, 'emit_sensors', emit)
    return out


def _drive(api, fleet, name: str, index: int) -> odd_systems.Sweep:
    odd = ODD[name]
    sweep = odd_systems.odd_node(
        api, fleet, index, name, odd.key, odd.odd,
        system={'chassis': True, 'manager': True})
    if sweep.call('PUT', '/v1/nodes/%s/states/provision',
                  {'target': 'manage'})[0] == 202:
        sweep.settle()
    sweep.firmware = sweep.call('GET', FIRMWARE, version='1.86')[1]
    rows = [r for r in api.conductor.sensors.nodes()
            if r['uuid'] == sweep.uuid]
    sweep.sensors_sent = api.conductor.sensors.send_one(rows[0])
    return sweep


def test_odd_chassis_leave_out_what_cannot_be_read(api, fleet, sent):
    """Every odd answer on SQLite; on PostgreSQL and MariaDB those whose
    texts reach a column (a network adapter's firmware version)."""

    def outcome(name: str, sweep) -> list[str]:
        odd, out = ODD[name], []
        components = {c['component']: c['current_version']
                      for c in (sweep.firmware or {}).get('firmware', [])}
        if components.get('nic:NIC.1') != odd.nic or \
                components.get('bios') != fleet_doubles.BIOS_VERSION:
            out.append('%s: components %s' % (name, components))
        data = sent.get(sweep.uuid)
        if not sweep.sensors_sent or data is None:
            return out + ['%s: no sensor data sent' % name]
        read = tuple(sorted(k for k in ALL if data.get(k)))
        if read != tuple(odd.sensors) or \
                data['Extra'].get('UUID') != 'sys-%05d' % list(ODD).index(
                    name):
            out.append('%s: sensors %s, %s' % (name, read, data['Extra']))
        return out

    odd_systems.check(api, fleet, ODD, ODD if api.db_kind == 'sqlite' else [
        n for n in ODD if n == 'as-sent' or n.startswith('adapter-version')],
        _drive, outcome)
