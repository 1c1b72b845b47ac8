"""conductor/allocations.py on its own (the API's allocation tests are
in tests/unit/api/test_resources.py, backfill and release in
tests/unit/db/test_allocations.py): what it reads and writes through
db.allocations.ROWS and db.nodes.ROWS."""

import pytest

from baremetal.common import exception
from baremetal.conductor import allocations
from baremetal.db import allocations as db_allocations
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows


def _alloc(**fields):
    return db_allocations.ROWS.create(dict(
        {'resource_class': 'gold', 'state': 'allocating'}, **fields))


def test_an_unknown_allocation_is_not_found(api):
    missing = db_rows.new_uuid()
    with pytest.raises(exception.AllocationNotFound) as e:
        allocations.allocate(missing)
    assert str(e.value) == 'Allocation %s could not be found.' % missing


def test_no_matching_node_is_an_error_on_the_allocation(api):
    alloc = _alloc(traits=['CUSTOM_X'])
    got = allocations.allocate(alloc['uuid'])
    assert got['state'] == 'error'
    assert got['last_error'] == ('No available nodes match the resource '
                                 'class gold and traits CUSTOM_X')
    assert db_allocations.ROWS.get(alloc['id'])['state'] == 'error'


def test_allocate_claims_a_matching_node(api):
    node = api.make_available(resource_class='gold')
    alloc = allocations.allocate(_alloc()['uuid'])
    assert alloc['state'] == 'active'
    row = db_nodes.ROWS.get(node['uuid'])
    assert (row['allocation_id'], row['instance_uuid']) == (
        alloc['id'], alloc['uuid'])


def test_an_allocation_deleted_while_allocating_takes_no_node(
        api, monkeypatch):
    node = api.make_available(resource_class='gold')
    alloc = _alloc()
    found = db_allocations.available_nodes

    def deleted_meanwhile(*args):
        rows = found(*args)
        db_allocations.release(db_allocations.ROWS.get(alloc['id']))
        return rows

    monkeypatch.setattr(db_allocations, 'available_nodes',
                        deleted_meanwhile)
    assert allocations.allocate(alloc['uuid']) is None
    row = db_nodes.ROWS.get(node['uuid'])
    assert (row['allocation_id'], row['instance_uuid']) == (None, None)


def test_an_allocation_deleted_before_its_error_is_stored(api, monkeypatch):
    alloc = _alloc()
    found = db_allocations.available_nodes

    def deleted_meanwhile(*args):
        db_allocations.release(db_allocations.ROWS.get(alloc['id']))
        return found(*args)

    monkeypatch.setattr(db_allocations, 'available_nodes',
                        deleted_meanwhile)
    assert allocations.allocate(alloc['uuid']) is None
