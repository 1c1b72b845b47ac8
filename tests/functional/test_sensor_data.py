"""Sensor data notifications over a real RabbitMQ, read by
ironic-prometheus-exporter's own code.

baremetal-server with ``[sensor_data]send_sensor_data`` (every second)
and a notification transport on a vhost of this test's own; an IPMI
node on the pyghmi BMC double (tests/bmc/ipmi_server.py, with its SDR
sensors) and a Redfish node on the sushy-tools emulator (Thermal from
sushy-tools, Power from tests/bmc/redfish_power.py); a third node in
maintenance must never be read.  An oslo.messaging listener on the
sensor topic takes ``hardware.ipmi.metrics`` and
``hardware.redfish.metrics``; each is checked field by field, then fed
to the exporter's notifier driver (``PrometheusFileDriver``, what
operators plug into Ironic's notifier) and the Prometheus metrics it
writes are checked.
"""

import re
import threading
import time
import uuid as uuidlib

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs
from tests.functional import notification_listener
from tests.functional import processes

UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}$')
STAMP = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$')


class Collector:
    def __init__(self) -> None:
        self.got: list[dict] = []
        self.cond = threading.Condition()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        with self.cond:
            self.got.append({'publisher_id': publisher_id,
                             'event_type': event_type, 'payload': payload})
            self.cond.notify_all()

    def wait_for(self, event_type: str, node_uuid: str,
                 timeout: float = 90) -> dict:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for m in self.got:
                    if m['event_type'] == event_type and \
                            m['payload'].get('node_uuid') == node_uuid:
                        return m
                left = deadline - time.monotonic()
                assert left > 0, 'no %s for %s in %s' % (
                    event_type, node_uuid,
                    [(m['event_type'], m['payload'].get('node_uuid'))
                     for m in self.got])
                self.cond.wait(left)


@pytest.fixture
def listener():
    with notification_listener.listening(Collector(),
                                         'notifications') as bus:
        yield bus


def exporter_metrics(tmp_path, message: dict) -> dict:
    """{(metric, frozenset(labels)): value} as ironic-prometheus-exporter
    writes them for one notification."""
    from ironic_prometheus_exporter import messaging as ipe
    from oslo_config import cfg
    from prometheus_client import parser
    conf = cfg.ConfigOpts()
    ipe.register_opts(conf)
    location = tmp_path / ('ipe-%s' % uuidlib.uuid4().hex[:6])
    conf.set_override('location', str(location),
                      group='oslo_messaging_notifications')
    conf([], project='ipe-test')
    driver = ipe.PrometheusFileDriver(conf, None, None)
    driver.notify({}, message, 'info', None)
    out = {}
    for path in location.iterdir():
        for family in parser.text_string_to_metric_families(
                path.read_text()):
            for s in family.samples:
                out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def values(metrics: dict, name: str, **labels) -> list[float]:
    return [v for (n, ls), v in metrics.items() if n == name
            and set(labels.items()) <= ls]


def check_body(msg: dict, node: dict, driver: str) -> dict:
    body = msg['payload']
    assert msg['publisher_id'] == 'ironic-conductor.sensors-host'
    assert set(body) == {'message_id', 'instance_uuid', 'node_uuid',
                         'node_name', 'event_type', 'timestamp',
                         'payload'}, body
    assert (body['node_uuid'], body['node_name'],
            body['instance_uuid']) == (node['uuid'], node['name'], None)
    assert body['event_type'] == 'hardware.%s.metrics.update' % driver
    assert UUID.match(body['message_id']), body
    assert STAMP.match(body['timestamp']), body
    return body['payload']


def test_sensor_data_reaches_ironic_prometheus_exporter(tmp_path,
                                                        listener):
    url, topic, col = listener
    ipmi_bmc = fixtures.IPMIBMC(tmp_path, name='ipmi-bmc')
    system = {'uuid': str(uuidlib.uuid4()), 'name': 'sys-0',
              'power_state': 'Off', 'disks': [40, 20]}
    redfish_bmc = fixtures.RedfishBMC(tmp_path, [system])
    conf = bs.conf(tmp_path)
    conf['DEFAULT']['host'] = 'sensors-host'
    conf['oslo_messaging_notifications'] = {'transport_url': url,
                                            'topics': topic}
    conf['sensor_data'] = {'send_sensor_data': 'true', 'interval': 1,
                           'enable_for_undeployed_nodes': 'true'}
    server = processes.Service('baremetal-server', tmp_path, 'server',
                               conf, port=processes.free_port())
    try:
        server.start()
        ipmi_node = bs.create(server, driver='ipmi', name='ipmi-0',
                              driver_info=ipmi_bmc.driver_info())
        rf_node = bs.create(server, driver='redfish', name='redfish-0',
                            driver_info=redfish_bmc.driver_info(
                                system['uuid']))
        idle = bs.create(server, driver='ipmi', name='in-maintenance',
                         driver_info=ipmi_bmc.driver_info())
        st, body = bs.http(server, 'PUT', '/v1/nodes/%s/maintenance'
                           % idle['uuid'], {'reason': 'repair'})
        assert st == 202, body

        # IPMI: the SDR sensors, as Ironic's ipmitool parsing shows them
        msg = col.wait_for('hardware.ipmi.metrics', ipmi_node['uuid'])
        data = check_body(msg, ipmi_node, 'ipmi')
        assert set(data) == {'Temperature', 'Fan', 'Voltage',
                             'Management'}, data
        inlet = data['Temperature']['Inlet Temp (0x5)']
        assert inlet == {
            'Sensor ID': 'Inlet Temp (0x5)',
            'Entity ID': '7 (System board)',
            'Sensor Type (Threshold)': 'Temperature (0x01)',
            'Sensor Reading': '21 (+/- 0.5) degrees C', 'Status': 'ok'}
        assert data['Fan']['Fan1 (0x30)']['Sensor Reading'] == \
            '5600 (+/- 25) RPM'
        assert data['Management']['Mgmt Health (0x23)'][
            'Sensor Reading'] == '0h'
        m = exporter_metrics(tmp_path, msg)
        node_labels = {'node_uuid': ipmi_node['uuid'],
                       'node_name': 'ipmi-0'}
        assert values(m, 'baremetal_inlet_temp_celsius',
                      **node_labels) == [21.0], m
        assert values(m, 'baremetal_cpu_temp_celsius',
                      entity_id='3 (Processor)') == [44.0], m
        assert values(m, 'baremetal_fan_rpm',
                      sensor_id='Fan1 (0x30)') == [5600.0], m
        assert values(m, 'baremetal_voltage_volts', status='ok') == \
            [12.0], m
        assert values(m, 'baremetal_mgmt_health') == [0.0], m
        stamp = values(m, 'baremetal_last_payload_timestamp_seconds',
                       **node_labels)
        assert len(stamp) == 1 and abs(stamp[0] - time.time()) < 120, m

        # Redfish: Thermal and Power of the chassis, the system's drives
        msg = col.wait_for('hardware.redfish.metrics', rf_node['uuid'])
        data = check_body(msg, rf_node, 'redfish')
        assert set(data) == {'Extra', 'Temperature', 'Fan', 'Power',
                             'Drive'}, data
        assert data['Extra']['UUID'] == system['uuid']
        temps = {v['physical_context']: v['reading_celsius']
                 for v in data['Temperature'].values()}
        assert temps == {'CPU': 41, 'Intake': 25}, data
        assert sorted((v['last_power_output_watts'], v['health'])
                      for v in data['Power'].values()) == [
            (198, 'Warning'), (212, 'OK')], data
        assert sorted(v['capacity_bytes'] for v in
                      data['Drive'].values()) == [20 << 30, 40 << 30]
        m = exporter_metrics(tmp_path, msg)
        labels = {'node_uuid': rf_node['uuid'], 'node_name': 'redfish-0'}
        assert values(m, 'baremetal_temp_cpu_celsius', **labels) == \
            [41.0], m
        assert values(m, 'baremetal_temp_intake_celsius', **labels) == \
            [25.0], m
        assert sorted(values(m, 'baremetal_power_status', **labels)) == \
            [0.0, 1.0], m
        fans = values(m, 'baremetal_fan_status', **labels)
        assert fans and set(fans) == {0.0}, m
        assert values(m, 'baremetal_drive_status', **labels) == \
            [0.0, 0.0], m
        assert values(m, 'baremetal_temperature_status',
                      redfish_system_uuid=system['uuid']) == [0.0, 0.0]

        # the conductor's own figures ([sensor_data]enable_for_conductor,
        # on by default as in Ironic): a timer per periodic task, which
        # the exporter turns into its conductor gauges
        msg = col.wait_for('ironic.metrics', None)
        body = msg['payload']
        assert msg['publisher_id'] == 'ironic-conductor.sensors-host'
        assert (body['hostname'], body['event_type'],
                body['node_uuid']) == ('sensors-host',
                                       'ironic.metrics.update', None)
        assert STAMP.match(body['timestamp']), body
        timers = body['payload']
        sync = timers['ironic.conductor.manager.ConductorManager.'
                      '_sync_power_states']
        assert sync['type'] == 'timer' and sync['count'] >= 1 and \
            sync['sum'] > 0, timers
        m = exporter_metrics(tmp_path, msg)
        conductor = {'hostname': 'sensors-host', 'component': 'conductor'}
        assert values(m, 'ironic_conductormanager_sync_power_states'
                      '_call_count', **conductor) == [sync['count']], m
        assert values(m, 'ironic_conductormanager_sync_power_states_time',
                      **conductor) == [sync['sum']], m

        # a later round again; never the node in maintenance
        n = len(col.got)
        deadline = time.monotonic() + 30
        while len(col.got) < n + 2:
            assert time.monotonic() < deadline, col.got
            time.sleep(0.2)
        assert not [g for g in col.got
                    if g['payload'].get('node_uuid') == idle['uuid']]
    except Exception:
        print(server.log())
        raise
    finally:
        server.stop()
        ipmi_bmc.stop()
        redfish_bmc.stop()
