"""db/firmware.py: a node's firmware components stored as the hardware
reports them, against a real database (SQLite, PostgreSQL, MariaDB:
the statements run prepared on SQLite, through SQLAlchemy in the
others' transactions)."""

from baremetal.db import firmware
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows


def test_store_components_tracks_versions(any_db_api):
    n = db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})
    other = db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})
    firmware.store_components(n['id'], [
        {'component': 'bmc', 'current_version': '1.0', 'vendor': 'V'},
        {'component': 'bios', 'current_version': '2.0'}])
    firmware.store_components(other['id'], [
        {'component': 'bios', 'current_version': '9.9'}])
    got = firmware.components(n['id'])
    assert [(c['component'], c['initial_version'], c['current_version'],
             c['last_version_flashed'], c['vendor']) for c in got] == [
        ('bios', '2.0', '2.0', None, None),
        ('bmc', '1.0', '1.0', None, 'V')]

    # bios flashed, bmc gone, nic new; the other node's stays
    firmware.store_components(n['id'], [
        {'component': 'bios', 'current_version': '2.1'},
        {'component': 'nic', 'current_version': None}])
    got = firmware.components(n['id'])
    assert [(c['component'], c['initial_version'], c['current_version'],
             c['last_version_flashed']) for c in got] == [
        ('bios', '2.0', '2.1', '2.1'), ('nic', '', None, None)]
    assert got[0]['updated_at'] is not None
    assert [c['current_version'] for c in firmware.components(
        other['id'])] == ['9.9']
    # created_at is a datetime (the prepared INSERT converts it as
    # SQLAlchemy does)
    assert got[0]['created_at'] is not None
    assert got[0]['created_at'].year >= 2024
