"""The names db/api.py held before it was split, re-exported for the
callers that still import it (``from baremetal.db import api as db``).

A transition module: new code imports the module that does the work --
``engine`` (configure, the connections, ``reader``/``writer``/
``single``), ``rows`` (the generic create/get/update/delete/query/count
and ``Rows``), ``nodes``, ``reservations``, ``traits``, ``conductors``,
``bios`` -- and a caller moves to them when it is next touched.  The
conductor, api/controllers/v1/nodes.py, db/node_json.py and tests still
use these names; nothing is defined here.
"""

from baremetal.db import models
from baremetal.db.bios import (
    BIOS_REGISTRY_FIELDS,
    bios_settings,
    replace_bios_settings,
)
from baremetal.db.conductors import (
    dead_conductor_hosts,
    hardware_interfaces,
    list_conductors,
    live_conductors,
    register_conductor,
    touch_conductor,
    unregister_conductor,
)
from baremetal.db.engine import (
    close_connections,
    configure,
    engine,
    reader,
    retry_on_deadlock,
    safe_url,
    single,
    writer,
)
from baremetal.db.nodes import (
    destroy_node,
    get_node,
    nodes_for_sensors,
    nodes_in_states,
)
from baremetal.db.reservations import (
    release_node,
    release_reservations_of,
    reserve_node,
)
from baremetal.db.rows import (
    count,
    create,
    delete,
    get,
    is_uuid_like,
    query,
    update,
    utcnow,
)
from baremetal.db.rows import new_uuid as _new_uuid
from baremetal.db.traits import (
    add_node_trait,
    delete_node_trait,
    get_node_with_traits,
    set_node_traits,
    traits_for_nodes,
)

T = models.TABLES
NODES = T['nodes']
PORTS = T['ports']
PORTGROUPS = T['portgroups']
TRAITS = T['node_traits']
CONDUCTORS = T['conductors']
HW_IFACES = T['conductor_hardware_interfaces']
BIOS = T['bios_settings']

__all__ = [
    'BIOS', 'BIOS_REGISTRY_FIELDS', 'CONDUCTORS', 'HW_IFACES', 'NODES',
    'PORTGROUPS', 'PORTS', 'T', 'TRAITS', '_new_uuid', 'add_node_trait',
    'bios_settings', 'close_connections', 'configure', 'count', 'create',
    'dead_conductor_hosts', 'delete', 'delete_node_trait', 'destroy_node',
    'engine', 'get', 'get_node', 'get_node_with_traits',
    'hardware_interfaces', 'is_uuid_like', 'list_conductors',
    'live_conductors', 'nodes_for_sensors', 'nodes_in_states', 'query',
    'reader', 'register_conductor', 'release_node',
    'release_reservations_of', 'replace_bios_settings', 'reserve_node',
    'retry_on_deadlock', 'safe_url', 'set_node_traits', 'single',
    'touch_conductor', 'traits_for_nodes', 'unregister_conductor',
    'update', 'utcnow', 'writer',
]
