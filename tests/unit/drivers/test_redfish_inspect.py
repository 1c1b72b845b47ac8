"""The redfish inspect interface keeps what the BMC reported as the
node's inventory and hands it to the inspection rules."""

import contextlib
import types

from baremetal.common import states
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import inspect as redfish_inspect


class _Task:
    def __init__(self):
        self.node = types.SimpleNamespace(id=7, uuid='n1', properties={})
        self.conductor = types.SimpleNamespace(conf=None)
        self.ports = []
        self.rules_saw = None

    def create_port(self, mac):
        self.ports.append(mac)

    def apply_inspection_rules(self, inventory, plugin_data):
        # the rules run after the properties and ports are in place
        self.rules_saw = (inventory, plugin_data, dict(self.node.properties),
                          list(self.ports))


def _system():
    summary = types.SimpleNamespace(count=8, architecture='x86')
    return types.SimpleNamespace(
        json={'SimpleStorage': {'@odata.id': '/redfish/v1/Systems/1/'
                                             'SimpleStorage'}},
        processors=types.SimpleNamespace(summary=summary),
        memory_summary=types.SimpleNamespace(size_gib=16),
        simple_storage=types.SimpleNamespace(
            disks_sizes_bytes=[100 << 30, 2 << 30]),
        ethernet_interfaces=types.SimpleNamespace(
            summary={'52:54:00:aa:00:02': 'up', '52:54:00:aa:00:01': 'up'}))


def test_inspection_rules_see_an_inventory(monkeypatch):
    monkeypatch.setattr(client, 'get_system', lambda node, conf: _system())
    monkeypatch.setattr(client, 'call',
                        lambda node, conf, what: contextlib.nullcontext())
    stored = []
    monkeypatch.setattr(redfish_inspect.inventory_store, 'store',
                        lambda *a: stored.append(a))
    task = _Task()
    result = redfish_inspect.RedfishInspect().inspect_hardware(task)
    assert result == states.MANAGEABLE
    inventory, plugin_data, props, ports = task.rules_saw
    assert inventory == {
        'cpu': {'count': 8, 'architecture': 'x86_64'},
        'memory': {'physical_mb': 16384},
        'disks': [{'size': 2 << 30}, {'size': 100 << 30}],
        'interfaces': [{'mac_address': '52:54:00:aa:00:01'},
                       {'mac_address': '52:54:00:aa:00:02'}]}
    assert plugin_data == {}
    # kept as the node's inventory before the rules ran
    assert stored == [(7, inventory, {})]
    assert props['cpus'] == 8 and props['local_gb'] == 99
    assert ports == ['52:54:00:aa:00:01', '52:54:00:aa:00:02']



def test_storage_the_system_does_not_link_is_not_asked_for(monkeypatch):
    """Most BMCs lack SimpleStorage or Storage: what the System does not
    link is not read (reading it failed, and counted among the BMC's
    failed operations in the metrics, at every inspection)."""
    system = _system()
    system.json = {}
    monkeypatch.setattr(client, 'get_system', lambda node, conf: system)
    monkeypatch.setattr(client, 'call',
                        lambda node, conf, what: contextlib.nullcontext())
    monkeypatch.setattr(redfish_inspect.inventory_store, 'store',
                        lambda *a: None)
    task = _Task()
    redfish_inspect.RedfishInspect().inspect_hardware(task)
    inventory, _, props, _ = task.rules_saw
    assert inventory['disks'] == [] and 'local_gb' not in props
