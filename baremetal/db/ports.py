"""Ports: the conditions their lists take, and the reads and writes of
ports beyond the generic calls of ``db.rows``."""

from baremetal.common import exception
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

P = models.TABLES['ports']
ROWS = db_rows.Rows(P, exception.PortNotFound, 'port')


def on_node(node_id: int):
    """Condition: ports of the node ``node_id``."""
    return P.c.node_id == node_id


def in_portgroup(portgroup_id: int):
    """Condition: ports that are members of the port group."""
    return P.c.portgroup_id == portgroup_id


def with_address(address: str):
    """Condition: the port with this MAC address (as stored: lower
    case)."""
    return P.c.address == address


def description_contains(text: str):
    """Condition: the description contains ``text`` (``%`` and ``_``
    match themselves)."""
    return P.c.description.contains(text, autoescape=True)


def on_nodes_in_groups(groups: list[str]):
    """Condition: ports of nodes in one of the conductor groups."""
    return P.c.node_id.in_(db_nodes.ids_in_conductor_groups(groups))


def on_nodes_in_shards(shards: list[str]):
    """Condition: ports of nodes in one of the shards."""
    return P.c.node_id.in_(db_nodes.ids_in_shards(shards))


def of_node(node_id: int) -> list[dict]:
    """Every port of the node (ordered by id)."""
    return db_rows.query(P, (on_node(node_id),))


def node_ids_with_addresses(addresses: list[str]) -> set[int]:
    """Ids of the nodes that have a port with one of the addresses."""
    return {r['node_id'] for r in db_rows.query(
        P, (P.c.address.in_(addresses),), columns=('node_id',))}


def count_in_portgroup(portgroup_id: int) -> int:
    """How many ports are members of the port group."""
    return db_rows.count(P, (in_portgroup(portgroup_id),))


def physnets_in_portgroup(portgroup_id: int,
                          except_port: int | None = None) -> set:
    """The physical networks of the port group's member ports (None
    counts as one), leaving out the port ``except_port``."""
    where = [P.c.portgroup_id == portgroup_id]
    if except_port is not None:
        where.append(P.c.id != except_port)
    return {r['physical_network'] for r in db_rows.query(
        P, where, columns=('id', 'physical_network'))}


def set_physnet_of_portgroup(portgroup_id: int,
                             physnet: str | None) -> None:
    """Give the port group's member ports the physical network
    ``physnet`` (those that have another one)."""
    with engine.writer() as conn:
        conn.execute(P.update().where(
            P.c.portgroup_id == portgroup_id,
            P.c.physical_network.is_distinct_from(physnet)).values(
                physical_network=physnet, updated_at=db_rows.utcnow()))
