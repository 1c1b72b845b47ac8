"""A node's inventory (API 1.81): what its last inspection found, in
the agent's inventory format, and the plugin data the inspection (and
the inspection rules, API 1.96) added to it."""

from baremetal.db import api as db

INVENTORY = db.T['node_inventory']


def store(node_id: int, inventory: dict, plugin_data: dict) -> None:
    """Keep this inspection's data in place of the last one's."""
    with db.writer() as conn:
        conn.execute(INVENTORY.delete().where(
            INVENTORY.c.node_id == node_id))
        conn.execute(INVENTORY.insert().values(
            node_id=node_id, inventory_data=inventory,
            plugin_data=plugin_data, created_at=db.utcnow()))


def update_plugin_data(node_id: int, plugin_data: dict) -> None:
    with db.writer() as conn:
        conn.execute(INVENTORY.update().where(
            INVENTORY.c.node_id == node_id).values(
            plugin_data=plugin_data, updated_at=db.utcnow()))
