"""db/inventory.py: a node's inventory stored, replaced and read,
against a real (SQLite) database."""

from baremetal.db import inventory as db_inventory
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows


def test_store_replaces_and_of_node_reads(api):
    a = db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})
    b = db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})
    assert db_inventory.of_node(a['id']) is None

    db_inventory.store(a['id'], {'cpu': {'count': 1}}, {'x': 1})
    db_inventory.store(a['id'], {'cpu': {'count': 2}}, {'x': 2})
    db_inventory.store(b['id'], {'cpu': {'count': 9}}, {})
    row = db_inventory.of_node(a['id'])
    assert (row['inventory_data'], row['plugin_data']) == (
        {'cpu': {'count': 2}}, {'x': 2})
    assert len(db_rows.query(db_inventory.INVENTORY)) == 2

    db_inventory.update_plugin_data(a['id'], {'y': 3})
    row = db_inventory.of_node(a['id'])
    assert (row['inventory_data'], row['plugin_data']) == (
        {'cpu': {'count': 2}}, {'y': 3})
    assert row['updated_at'] is not None
    assert db_inventory.of_node(b['id'])['plugin_data'] == {}
