"""A node's inventory (API 1.81): one row per inspected node."""

from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows

INVENTORY = models.TABLES['node_inventory']


def of_node(node_id: int) -> dict | None:
    """The node's inventory row (None: it was never inspected)."""
    found = db_rows.query(INVENTORY, (INVENTORY.c.node_id == node_id,))
    return found[0] if found else None


@engine.retry_on_deadlock
def store(node_id: int, inventory: dict, plugin_data: dict) -> None:
    """Keep this inspection's data in place of the last one's (on
    MariaDB two nodes' first stores at once can deadlock on the gap
    their DELETEs lock: the victim runs again)."""
    with engine.writer() as conn:
        conn.execute(INVENTORY.delete().where(
            INVENTORY.c.node_id == node_id))
        conn.execute(INVENTORY.insert().values(
            node_id=node_id, inventory_data=inventory,
            plugin_data=plugin_data, created_at=db_rows.utcnow()))


def update_plugin_data(node_id: int, plugin_data: dict) -> None:
    """Replace the plugin data of the node's inventory."""
    with engine.writer() as conn:
        conn.execute(INVENTORY.update().where(
            INVENTORY.c.node_id == node_id).values(
            plugin_data=plugin_data, updated_at=db_rows.utcnow()))
