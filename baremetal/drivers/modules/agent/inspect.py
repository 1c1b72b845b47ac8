"""The ``agent`` inspect interface: in-band inspection.

The node boots the agent ramdisk with ``ipa-inspection-callback-url``
pointing at ``/v1/continue_inspection`` (API 1.84); ironic-python-agent
collects the machine's inventory and posts it there.  The conductor
stores it (``GET /v1/nodes/{node}/inventory``), sets the scheduling
properties from it, adds a port for every NIC it does not know yet and
powers the node off.
"""

import uuid as uuidlib

from oslo_log import log

from baremetal.common import inventory as inventory_mod
from baremetal.common import states
from baremetal.db import api as db
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
        now = db.utcnow()
        inventory_store.store(node.id, inventory, plugin_data)
        node.properties.update(inventory_mod.properties_from(inventory))
        known = {p.address for p in task.ports}
        for mac in inventory_mod.macs_of(inventory):
            if mac not in known:
                db.create(db.PORTS, {
                    'uuid': str(uuidlib.uuid4()), 'address': mac,
                    'node_id': node.id, 'pxe_enabled': True,
                    'created_at': now})
                LOG.info('Node %s: inspection found NIC %s, port added',
                         node.uuid, mac)
        agent_deploy.shut_down_agent(task)
