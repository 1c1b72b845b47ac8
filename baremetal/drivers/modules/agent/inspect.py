"""The ``agent`` inspect interface: in-band inspection.

The node boots the agent ramdisk with ``ipa-inspection-callback-url``
pointing at ``/v1/continue_inspection`` (API 1.84); ironic-python-agent
collects the machine's inventory and posts it there.  The conductor
stores it (``GET /v1/nodes/{node}/inventory``), sets the scheduling
properties from it, adds a port for every NIC it does not know yet (PXE
enabled on the NIC the machine booted from only, when the agent says
which: the ``BOOTIF`` it was given) and powers the node off (with fast
track the agent keeps running instead: ``common/fast_track.py``).
"""

from oslo_log import log

from baremetal.common import inventory as inventory_mod
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules import ramdisk_boot
from baremetal.drivers.modules.agent import deploy as agent_deploy
from baremetal.objects import inventory as inventory_store

LOG = log.getLogger(__name__)


class AgentInspect(base.InspectInterface):
    """Inspection by the agent on the node."""

    def get_properties(self):
        return dict(ramdisk_boot.PROPERTIES)

    def validate(self, task):
        task.driver.boot.validate(task)

    def inspect_hardware(self, task):
        url = ramdisk_boot.api_url(task.conductor.conf) + \
            '/v1/continue_inspection'
        agent_deploy.boot_agent(task, {
            'kernel_params': 'ipa-inspection-callback-url=%s' % url})
        return states.INSPECTWAIT

    def abort(self, task):
        agent_deploy.shut_down_agent(task)

    def continue_inspection(self, task, inventory: dict,
                            plugin_data: dict) -> None:
        """The agent's inventory arrived: keep it, learn from it."""
        node = task.node
        inventory_store.store(node.id, inventory, plugin_data)
        node.properties.update(inventory_mod.properties_from(inventory))
        # PXE stays enabled on the NIC the machine booted from only,
        # when the agent knows which (as Ironic's inspection does); on
        # every NIC when it does not
        booted = inventory_mod.boot_mac(inventory)
        known = {p.address.lower(): p for p in task.ports}
        for mac in inventory_mod.macs_of(inventory):
            pxe = booted is None or mac == booted
            port = known.get(mac)
            if port is None:
                task.create_port(mac, pxe_enabled=pxe)
                LOG.info('Node %s: inspection found NIC %s, port added '
                         '(PXE %s)', node.uuid, mac,
                         'enabled' if pxe else 'disabled')
            elif booted is not None and bool(port.pxe_enabled) != pxe:
                port.pxe_enabled = pxe
                port.save()
                LOG.info('Node %s: port %s PXE %s (the machine booted '
                         'from %s)', node.uuid, mac,
                         'enabled' if pxe else 'disabled', booted)

    def end_inspection_boot(self, task):
        """Once the inspection's outcome is saved: the agent is shut
        down (kept up with fast track)."""
        agent_deploy.end_agent_boot(task)
