"""/v1/nodes/{node}/inventory (API 1.81): what inspection found on the
node, as it was stored."""

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import inventory as db_inventory


@route('GET', '/v1/nodes/{node}/inventory', min_version=versions.INVENTORY)
def get_inventory(req, node):
    policy.authorize(req, 'baremetal:node:inventory:get')
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    found = db_inventory.of_node(row['id'])
    if found is None:
        raise exception.ResourceNotFound(
            'Node %s has no inventory: it has not been inspected yet'
            % row['uuid'])
    return {'inventory': found['inventory_data'] or {},
            'plugin_data': found['plugin_data'] or {}}
