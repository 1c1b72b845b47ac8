"""The sensor data round (conductor/sensor_data.py) on fake-hardware,
whose management interface reports one fake sensor: what is read, what
is skipped, what is sent."""

import re

import pytest

from baremetal import conf as baremetal_conf
from baremetal.common import notifications
from baremetal.conductor import sensor_data
from baremetal.conductor import task_manager
from tests import harness
from tests.notify_recorder import Recorder

FAKE = {'Fake': {'FakeSensor': {'Sensor Reading': '1 RPM'}}}


@pytest.fixture
def sensors(tmp_path):
    """(harness, recorder, overrides-setter) with sensor data on and
    undeployed nodes included, the conductor's own message off (its
    tests turn it on)."""
    h = harness.Harness(tmp_path, overrides={
        'sensor_data.send_sensor_data': True,
        'sensor_data.enable_for_undeployed_nodes': True,
        'sensor_data.enable_for_conductor': False})
    rec = Recorder()
    notifications.setup(baremetal_conf.CONF, notifier=rec)
    yield h, rec
    notifications.drain()
    notifications.reset()
    h.conductor.sensors.stop()
    h.close()


def _sent(rec):
    return [m for m in rec.messages()
            if m['event_type'].startswith('hardware.')]


def test_a_round_sends_each_nodes_readings(sensors):
    h, rec = sensors
    node = h.create_node(driver='fake-hardware', name='n1')
    assert h.conductor.sensors.run() == 1
    [msg] = _sent(rec)
    assert (msg['event_type'], msg['priority'], msg['publisher_id']) == (
        'hardware.fake-hardware.metrics', 'info',
        'ironic-conductor.test-conductor')
    body = msg['payload']
    assert body['payload'] == FAKE
    assert (body['node_uuid'], body['node_name'], body['instance_uuid'],
            body['event_type']) == (
        node['uuid'], 'n1', None, 'hardware.fake-hardware.metrics.update')
    assert re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$',
                    body['timestamp'])


def test_maintenance_and_locked_nodes_are_skipped(sensors):
    h, rec = sensors
    h.create_node(driver='fake-hardware', maintenance=True)
    held = h.create_node(driver='fake-hardware')
    with task_manager.acquire(h.conductor, held['uuid'], shared=False):
        assert h.conductor.sensors.run() == 0
    assert _sent(rec) == []
    assert h.conductor.sensors.run() == 1


def test_only_deployed_nodes_unless_told(sensors):
    h, rec = sensors
    h.create_node(driver='fake-hardware')
    baremetal_conf.CONF.set_override('enable_for_undeployed_nodes', False,
                                     group='sensor_data')
    try:
        assert h.conductor.sensors.run() == 0
    finally:
        baremetal_conf.CONF.clear_override('enable_for_undeployed_nodes',
                                           group='sensor_data')


def test_enable_for_nodes_false_reads_nothing(sensors):
    h, rec = sensors
    h.create_node(driver='fake-hardware')
    baremetal_conf.CONF.set_override('enable_for_nodes', False,
                                     group='sensor_data')
    try:
        assert h.conductor.sensors.run() == 0
    finally:
        baremetal_conf.CONF.clear_override('enable_for_nodes',
                                           group='sensor_data')


def test_data_types_filter_the_payload():
    data = {'Temperature': {'a': {}}, 'Fan': {'b': {}}, 'Power': {}}
    assert sensor_data.filter_types(data, ['ALL']) is data
    assert sensor_data.filter_types(data, ['fan', 'temperature']) == {
        'Temperature': {'a': {}}, 'Fan': {'b': {}}}
    assert sensor_data.filter_types(data, ['Voltage']) == {}


def test_nothing_left_after_the_filter_sends_nothing(sensors):
    h, rec = sensors
    h.create_node(driver='fake-hardware')
    baremetal_conf.CONF.set_override('data_types', ['Temperature'],
                                     group='sensor_data')
    try:
        assert h.conductor.sensors.run() == 0
    finally:
        baremetal_conf.CONF.clear_override('data_types',
                                           group='sensor_data')
    assert _sent(rec) == []


def test_a_failing_bmc_is_logged_and_skipped(sensors, monkeypatch):
    from baremetal.common import exception
    from baremetal.drivers.modules import fake
    h, rec = sensors
    h.create_node(driver='fake-hardware')

    def broken(self, task):
        raise exception.BMCConnectionError(node=task.node.uuid,
                                           error='no answer')
    monkeypatch.setattr(fake.FakeManagement, 'get_sensors_data', broken)
    assert h.conductor.sensors.run() == 0
    assert _sent(rec) == []


def test_the_conductor_sends_its_periodic_task_timers(sensors):
    """[sensor_data]enable_for_conductor: one ironic.metrics per round,
    a timer per periodic task measured, under Ironic's name where
    Ironic's conductor times the same job."""
    h, rec = sensors
    from baremetal.conductor import periodics
    harness.CONF.set_override('enable_for_conductor', True,
                              group='sensor_data')
    for watcher in periodics.build(h.conductor).iter_watchers():
        if watcher.work.name.endswith('sync_power_states'):
            watcher.work.callback()
    try:
        assert h.conductor.sensors.run() == 1   # no node: the conductor's
    finally:
        harness.CONF.clear_override('enable_for_conductor',
                                    group='sensor_data')
    [msg] = [m for m in rec.messages()
             if m['event_type'] == 'ironic.metrics']
    body = msg['payload']
    assert (body['hostname'], body['node_uuid'], body['event_type']) == (
        'test-conductor', None, 'ironic.metrics.update')
    sync = body['payload'][
        'ironic.conductor.manager.ConductorManager._sync_power_states']
    assert sync['type'] == 'timer' and sync['count'] >= 1
    assert all(k.startswith('ironic.conductor.manager.ConductorManager.')
               for k in body['payload'])


def test_enable_for_conductor_false_sends_no_conductor_metrics(sensors):
    h, rec = sensors        # the fixture's setting
    assert h.conductor.sensors.run() == 0
    assert not [m for m in rec.messages()
                if m['event_type'] == 'ironic.metrics']
