"""db/allocations.py: the list conditions, the nodes an allocation may
get, and claiming one, against a real (SQLite) database."""

from baremetal.db import allocations as db_allocations
from baremetal.db import api as db

A = db.T['allocations']


def _node(**fields):
    return db.create(db.NODES, dict({'driver': 'fake-hardware',
                                     'provision_state': 'available',
                                     'maintenance': False,
                                     'resource_class': 'gold'}, **fields))


def _alloc(**fields):
    return db.create(A, dict({'resource_class': 'gold',
                              'state': 'allocating'}, **fields))


def _names(*filters):
    return sorted(r['name'] for r in db.query(A, filters))


def test_list_conditions_pick_their_allocations(api):
    n = _node()
    _alloc(name='a', node_id=n['id'], state='active', owner='p1')
    _alloc(name='b', resource_class='silver', state='error')
    _alloc(name='c')
    assert _names(db_allocations.on_node(n['id'])) == ['a']
    assert _names(db_allocations.with_resource_class('silver')) == ['b']
    assert _names(db_allocations.in_state('allocating')) == ['c']
    assert _names(db_allocations.with_owner('p1')) == ['a']
    assert _names(db_allocations.with_owner('p2')) == []


def test_available_nodes_are_free_nodes_of_the_class(api):
    ok = _node(name='ok')
    also = _node(name='also', retired=None)
    # locked for a moment: a candidate still (the claim waits for it)
    locked = _node(name='locked', reservation='host1')
    for fields in ({'provision_state': 'active'}, {'maintenance': True},
                   {'retired': True}, {'instance_uuid': db._new_uuid()},
                   {'resource_class': 'silver'}):
        _node(**fields)
    taken = _node()
    db.update(db.NODES, taken['id'],
              {'allocation_id': _alloc(node_id=taken['id'])['id']})

    got = db_allocations.available_nodes('gold')
    assert sorted(r['uuid'] for r in got) == sorted(
        [ok['uuid'], also['uuid'], locked['uuid']])
    assert set(got[0]) == {'id', 'uuid', 'name', 'reservation'}
    assert {r['name']: r['reservation'] for r in got}['locked'] == 'host1'
    assert [r['uuid'] for r in db_allocations.available_nodes(
        'gold', [also['uuid'], taken['uuid']])] == [also['uuid']]
    assert db_allocations.available_nodes('bronze') == []


def test_claim_node_gives_the_node_once(api):
    n = _node(instance_info={'image_source': 'img'})
    first = _alloc(traits=['CUSTOM_A'])
    second = _alloc()
    assert db_allocations.claim_node(first, n['id'])
    node = db.get_node(n['id'])
    assert node['allocation_id'] == first['id']
    assert node['instance_uuid'] == first['uuid']
    assert node['instance_info'] == {'image_source': 'img',
                                     'traits': ['CUSTOM_A']}
    row = db.get(A, first['id'], LookupError)
    assert (row['node_id'], row['state'], row['last_error']) == (
        n['id'], 'active', None)

    # the node is taken: nothing changes for the second one
    assert not db_allocations.claim_node(second, n['id'])
    assert db.get_node(n['id'])['allocation_id'] == first['id']
    row = db.get(A, second['id'], LookupError)
    assert (row['node_id'], row['state']) == (None, 'allocating')


def test_claim_node_skips_a_locked_node(api):
    n = _node(reservation='host1')
    alloc = _alloc()
    assert not db_allocations.claim_node(alloc, n['id'])
    assert db.get_node(n['id'])['allocation_id'] is None


def test_backfill_node_keeps_the_instance_uuid(api):
    instance = db._new_uuid()
    n = _node(provision_state='active', instance_uuid=instance)
    alloc = _alloc(traits=[])
    node = db.get_node(n['id'])
    assert db_allocations.backfill_node(alloc, node)
    node = db.get_node(n['id'])
    assert (node['allocation_id'], node['instance_uuid']) == (
        alloc['id'], instance)
    assert node['instance_info'] == {'traits': []}
    # the allocation row is the caller's to update
    assert db.get(A, alloc['id'], LookupError)['node_id'] is None
    # once only
    assert not db_allocations.backfill_node(_alloc(), node)


def test_backfill_node_without_instance_takes_the_allocations(api):
    n = _node(provision_state='active')
    alloc = _alloc()
    assert db_allocations.backfill_node(alloc, db.get_node(n['id']))
    assert db.get_node(n['id'])['instance_uuid'] == alloc['uuid']
    locked = _node(provision_state='active', reservation='host1')
    assert not db_allocations.backfill_node(_alloc(),
                                            db.get_node(locked['id']))


def test_uuids_by_id(api):
    rows = [_alloc() for _ in range(3)]
    assert db_allocations.uuids_by_id({rows[0]['id'], rows[2]['id']}) == {
        rows[0]['id']: rows[0]['uuid'], rows[2]['id']: rows[2]['uuid']}
    assert db_allocations.uuids_by_id({999}) == {}
