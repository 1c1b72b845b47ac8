"""``redfish`` inspect interface: CPU, memory, disks and NICs from the
BMC into ``node.properties`` and ports; then the inspection rules (API
1.96) run on what it found."""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import mac_address
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client
from baremetal.objects import inventory as inventory_store

LOG = log.getLogger(__name__)

_ARCH = {'x86': 'x86_64', 'IA-64': 'ia64', 'ARM': 'aarch64',
         'MIPS': 'mips64', 'OEM': None}


def _value(x):
    return getattr(x, 'value', x)


def _inventory(found: dict, disks: list[int], macs: list[str]) -> dict:
    """What the BMC told, in the agent's inventory format (the parts
    it has)."""
    return {'cpu': {'count': found.get('cpus'),
                    'architecture': found.get('cpu_arch')},
            'memory': {'physical_mb': found.get('memory_mb')},
            'disks': [{'size': size} for size in disks],
            'interfaces': [{'mac_address': mac} for mac in macs]}


class RedfishInspect(client.Interface, base.InspectInterface):
    def inspect_hardware(self, task):
        node = task.node
        conf = task.conductor.conf
        system = client.get_system(node, conf)
        found = {}
        with client.call(node, conf, 'read processors'):
            summary = system.processors.summary
            if summary.count:
                found['cpus'] = summary.count
            arch = _ARCH.get(_value(summary.architecture))
            if arch:
                found['cpu_arch'] = arch
        with client.call(node, conf, 'read memory'):
            size = system.memory_summary and system.memory_summary.size_gib
            if size:
                found['memory_mb'] = int(size * 1024)
        disks = self._disk_sizes(node, conf, system)
        if disks:
            # the root device candidate: the smallest disk of 4 GiB or
            # more, less 1 GiB for partitioning, as Ironic computes it
            usable = [s for s in disks if s >= 4 << 30]
            if usable:
                found['local_gb'] = (min(usable) >> 30) - 1
        with client.call(node, conf, 'read network interfaces'):
            reported = list(system.ethernet_interfaces.summary)
        # what is no MAC address is neither a port nor in the inventory
        macs = sorted(mac_address.usable(reported, node.uuid, 'the BMC'))
        props = node.properties
        props.update(found)
        node.properties = props
        for mac in macs:
            task.create_port(mac)
        LOG.info('Node %s: inspection found %s and NICs %s', node.uuid,
                 found, macs)
        # kept as the node's inventory (API 1.81) in the agent's format;
        # the inspection rules see it as they see an agent's
        inventory, plugin_data = _inventory(found, disks, macs), {}
        inventory_store.store(node.id, inventory, plugin_data)
        task.apply_inspection_rules(inventory, plugin_data)
        if plugin_data:
            inventory_store.update_plugin_data(node.id, plugin_data)
        return states.MANAGEABLE

    @staticmethod
    def _disk_sizes(node, conf, system) -> list[int]:
        for what, key in (('simple_storage', 'SimpleStorage'),
                          ('storage', 'Storage')):
            if key not in system.json:
                # many BMCs (and the emulator) lack one of the two: not
                # a BMC error
                continue
            try:
                with client.call(node, conf, 'read the disks (%s)' % what):
                    coll = getattr(system, what)
                    sizes = (coll.disks_sizes_bytes
                             if what == 'simple_storage'
                             else coll.volumes_sizes_bytes)
                if sizes:
                    return sorted(sizes)
            except exception.RedfishError as e:
                # one whose answer cannot be read is no disk sizes
                LOG.warning('Node %s: no disk sizes from the BMC: %s',
                            node.uuid, e)
        return []
