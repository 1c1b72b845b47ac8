"""/v1/nodes/{node}/firmware (API 1.86): the node's firmware components
and their versions, as its firmware interface last reported them."""

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.conductor import firmware

_FIELDS = ('component', 'initial_version', 'current_version',
           'last_version_flashed')


@route('GET', '/v1/nodes/{node}/firmware', min_version=versions.FIRMWARE)
def list_firmware(req, node):
    policy.authorize(req, 'baremetal:node:firmware:get')
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return {'firmware': [
        dict({f: c[f] for f in _FIELDS},
             created_at=node_view.iso(c['created_at']),
             updated_at=node_view.iso(c['updated_at']))
        for c in firmware.components(row['id'])]}
