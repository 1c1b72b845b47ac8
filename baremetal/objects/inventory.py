"""A node's inventory (API 1.81): what its last inspection found, in
the agent's inventory format, and the plugin data the inspection (and
the inspection rules, API 1.96) added to it."""

from baremetal.db import inventory as db_inventory


def store(node_id: int, inventory: dict, plugin_data: dict) -> None:
    """Keep this inspection's data in place of the last one's."""
    db_inventory.store(node_id, inventory, plugin_data)


def update_plugin_data(node_id: int, plugin_data: dict) -> None:
    db_inventory.update_plugin_data(node_id, plugin_data)
