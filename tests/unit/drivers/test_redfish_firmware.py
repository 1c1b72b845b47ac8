"""The redfish firmware interface: components read from the BMC, updates
flashed one after the other, each task polled to its end."""

import contextlib
import types

import pytest

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import firmware


class _Task:
    def __init__(self, state=states.CLEANING):
        self.node = types.SimpleNamespace(
            uuid='n1', driver_internal_info={}, provision_state=state,
            power_state=states.POWER_OFF)
        self.conductor = types.SimpleNamespace(conf=None)
        self.upgrades = 0

    def upgrade_lock(self):
        self.upgrades += 1


@pytest.fixture
def bmc(monkeypatch):
    state = types.SimpleNamespace(submitted=[], outcomes={}, restarts=0)
    manager = types.SimpleNamespace(firmware_version='2.10', model='X1')
    system = types.SimpleNamespace(bios_version='1.0.0', managers=[manager],
                                   json={'Links': {'ManagedBy': [
                                       {'@odata.id': '/m/1'}]}}, chassis=[])
    state.system = system
    monkeypatch.setattr(client, 'get_system', lambda node, conf: system)
    monkeypatch.setattr(client, 'call',
                        lambda node, conf, what: contextlib.nullcontext())

    def submit(node, conf, url):
        state.submitted.append(url)
        return '/tm/%d' % len(state.submitted)
    monkeypatch.setattr(client, 'simple_update', submit)

    def outcome(node, conf, uri):
        result = state.outcomes.get(uri, [''])
        value = result.pop(0) if len(result) > 1 else result[0]
        if isinstance(value, Exception):
            raise value
        return value
    monkeypatch.setattr(client, 'task_outcome', outcome)

    def power_action(task, new_state):
        # the conductor's power action (task.power_action) reboots
        assert new_state == states.REBOOT
        state.restarts += 1
        task.node.power_state = states.POWER_ON
    monkeypatch.setattr(_Task, 'power_action', power_action, raising=False)
    return state


def test_components_are_the_bios_and_the_bmc(bmc):
    assert firmware.RedfishFirmware().cache_firmware_components(
        _Task()) == [
        {'component': 'bios', 'current_version': '1.0.0'},
        {'component': 'bmc', 'current_version': '2.10', 'model': 'X1'}]


def test_a_system_naming_no_manager_has_no_bmc_component(bmc, caplog,
                                                        monkeypatch):
    """(Redfish makes ManagedBy optional: no warning for each read)"""
    class System(types.SimpleNamespace):
        @property
        def managers(self):
            # sushy's MissingAttributeError, as client.call maps it
            raise exception.RedfishError(
                error='The attribute Links/ManagedBy is missing')
    system = System(bios_version='1.0.0', json={'Links': {}}, chassis=[])
    monkeypatch.setattr(client, 'get_system', lambda node, conf: system)
    assert firmware.RedfishFirmware().cache_firmware_components(
        _Task()) == [{'component': 'bios', 'current_version': '1.0.0'}]
    assert 'no BMC firmware version' not in caplog.text


def _adapter(ident, *versions):
    return types.SimpleNamespace(
        identity=ident, manufacturer='Acme', model='X710',
        serial_number='SN-' + ident, controllers=[
            types.SimpleNamespace(firmware_package_version=v)
            for v in versions])


def test_network_adapters_of_the_first_chassis_are_nic_components(bmc):
    adapters = [_adapter('NIC.Slot.1', None, '22.5.7'),
                _adapter('NIC.Embedded.1'),    # reports no version
                _adapter('NIC.Slot.2', '14.1')]
    first = types.SimpleNamespace(
        json={'NetworkAdapters': {}}, network_adapters=types.SimpleNamespace(
            get_members=lambda: adapters))
    other = types.SimpleNamespace(json={'NetworkAdapters': {}})
    bmc.system.json['Links']['Chassis'] = [{}, {}]
    bmc.system.chassis = [first, other]
    got = firmware.RedfishFirmware().cache_firmware_components(_Task())
    assert got[2:] == [
        {'component': 'nic:NIC.Slot.1', 'current_version': '22.5.7',
         'vendor': 'Acme', 'model': 'X710',
         'serial_number': 'SN-NIC.Slot.1'},
        {'component': 'nic:NIC.Slot.2', 'current_version': '14.1',
         'vendor': 'Acme', 'model': 'X710',
         'serial_number': 'SN-NIC.Slot.2'}]


def test_network_adapters_that_cannot_be_read_leave_the_others(
        bmc, monkeypatch):
    @contextlib.contextmanager
    def call(node, conf, what):
        if what == 'read the network adapters':
            raise exception.RedfishError(error='adapters: 500')
        yield
    monkeypatch.setattr(client, 'call', call)
    bmc.system.json['Links']['Chassis'] = [{}]
    got = firmware.RedfishFirmware().cache_firmware_components(_Task())
    assert [c['component'] for c in got] == ['bios', 'bmc']


def test_no_version_at_all_is_an_error(bmc):
    bmc.system.bios_version = None
    bmc.system.managers = []
    with pytest.raises(exception.RedfishError):
        firmware.RedfishFirmware().cache_firmware_components(_Task())


def test_updates_run_in_turn_and_bios_reboots(bmc):
    task = _Task(states.SERVICING)
    fw = firmware.RedfishFirmware()
    settings = [{'component': 'bios', 'url': 'http://f/bios.bin'},
                {'component': 'bmc', 'url': 'https://f/bmc.bin'}]
    assert fw.update(task, settings) == states.SERVICEWAIT
    assert bmc.submitted == ['http://f/bios.bin']
    bmc.outcomes['/tm/1'] = [None, '']
    step = {'step': 'update'}
    assert fw.poll_step(task, step) is False       # still running
    assert bmc.submitted == ['http://f/bios.bin'] and bmc.restarts == 0
    assert fw.poll_step(task, step) is False       # bios done, bmc next
    assert bmc.restarts == 1
    assert bmc.submitted == ['http://f/bios.bin', 'https://f/bmc.bin']
    # the progress is kept: the lock was made exclusive to save it
    assert task.node.driver_internal_info[firmware._PENDING]['index'] == 1
    assert task.upgrades >= 1
    # the BMC restarts into its new firmware: unreachable is not failed
    bmc.outcomes['/tm/2'] = [exception.RedfishConnectionError(
        node='n1', error='down'), '']
    assert fw.poll_step(task, step) is False
    assert fw.poll_step(task, step) is True
    assert firmware._PENDING not in task.node.driver_internal_info
    assert bmc.restarts == 1


def test_wait_holds_the_next_component(bmc, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(firmware.time, 'time', lambda: now[0])
    task = _Task()
    fw = firmware.RedfishFirmware()
    fw.update(task, [{'component': 'bmc', 'url': 'http://f/a', 'wait': 30},
                     {'component': 'bmc', 'url': 'http://f/b'}])
    assert fw.poll_step(task, {}) is False
    assert bmc.submitted == ['http://f/a']
    now[0] += 31
    assert fw.poll_step(task, {}) is False
    assert bmc.submitted == ['http://f/a', 'http://f/b']


def test_a_failed_task_fails_the_step(bmc):
    task = _Task()
    fw = firmware.RedfishFirmware()
    fw.update(task, [{'component': 'bios', 'url': 'http://f/x'}])
    bmc.outcomes['/tm/1'] = ['image is not signed']
    with pytest.raises(exception.RedfishError,
                       match='bios firmware update of node n1 from '
                             'http://f/x failed on the BMC: image is not '
                             'signed'):
        fw.poll_step(task, {})
    assert bmc.restarts == 0


@pytest.mark.parametrize('settings', [
    None, [], [{'component': 'nic:1', 'url': 'http://f'}],
    [{'component': 'bios', 'url': ''}],
    [{'component': 'bios', 'url': 'http://f', 'wait': 0}]])
def test_bad_settings_reach_no_bmc(bmc, settings):
    with pytest.raises(exception.InvalidParameterValue,
                       match='Invalid firmware update'):
        firmware.RedfishFirmware().update(_Task(), settings)
    assert bmc.submitted == []
