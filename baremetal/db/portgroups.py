"""Port groups: the conditions their lists take, and the reads of port
groups beyond the generic calls of ``db.rows``."""

from baremetal.common import exception
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

PG = models.TABLES['portgroups']
ROWS = db_rows.Rows(PG, exception.PortgroupNotFound, 'portgroup')


def on_node(node_id: int):
    """Condition: port groups of the node ``node_id``."""
    return PG.c.node_id == node_id


def with_address(address: str):
    """Condition: port groups with this MAC address (lower case)."""
    return PG.c.address == address


def on_nodes_in_groups(groups: list[str]):
    """Condition: port groups of nodes in one of the conductor
    groups."""
    return PG.c.node_id.in_(db_nodes.ids_in_conductor_groups(groups))


def on_nodes_in_shards(shards: list[str]):
    """Condition: port groups of nodes in one of the shards."""
    return PG.c.node_id.in_(db_nodes.ids_in_shards(shards))


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the port groups with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db_rows.query(
        PG, (PG.c.id.in_(ids),), columns=('id', 'uuid'))}
