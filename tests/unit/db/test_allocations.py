"""db/allocations.py: the list conditions, the nodes an allocation may
get, claiming one, backfilling and releasing, against a real database
(SQLite; backfill and release on PostgreSQL and MariaDB too)."""

import pytest

from baremetal.common import exception
from baremetal.db import allocations as db_allocations
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits


def _node(**fields):
    return db_nodes.ROWS.create(dict({'driver': 'fake-hardware',
                                      'provision_state': 'available',
                                      'maintenance': False,
                                      'resource_class': 'gold'}, **fields))


def _alloc(**fields):
    return db_allocations.ROWS.create(dict({'resource_class': 'gold',
                                            'state': 'allocating'},
                                           **fields))


def _names(*filters):
    return sorted(r['name'] for r in
                  db_allocations.ROWS.list_page(filters))


def _claims(node_id: int) -> tuple:
    row = db_nodes.get_node(node_id)
    return row['allocation_id'], row['instance_uuid'], row['instance_info']


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
                   {'retired': True}, {'instance_uuid': db_rows.new_uuid()},
                   {'resource_class': 'silver'}):
        _node(**fields)
    taken = _node()
    db_nodes.ROWS.update(taken['id'], {
        'allocation_id': _alloc(node_id=taken['id'])['id']})

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
    assert _claims(n['id']) == (first['id'], first['uuid'], {
        'image_source': 'img', 'traits': ['CUSTOM_A']})
    row = db_allocations.ROWS.get(first['id'])
    assert (row['node_id'], row['state'], row['last_error']) == (
        n['id'], 'active', None)

    # the node is taken: nothing changes for the second one
    assert not db_allocations.claim_node(second, n['id'])
    assert db_nodes.get_node(n['id'])['allocation_id'] == first['id']
    row = db_allocations.ROWS.get(second['id'])
    assert (row['node_id'], row['state']) == (None, 'allocating')


def test_claim_node_skips_a_locked_node(api):
    n = _node(reservation='host1')
    alloc = _alloc()
    assert not db_allocations.claim_node(alloc, n['id'])
    assert db_nodes.get_node(n['id'])['allocation_id'] is None


def _backfill(node_id, **fields):
    return db_allocations.create_backfilled(
        dict({'resource_class': 'gold', 'state': 'allocating'}, **fields),
        node_id)


def _allocations():
    return [(r['name'], r['node_id'], r['state'])
            for r in db_allocations.ROWS.list_page()]


def test_backfill_keeps_the_instance_uuid(any_db_api):
    instance = db_rows.new_uuid()
    n = _node(provision_state='active', instance_uuid=instance)
    alloc = _backfill(n['id'], traits=[], name='a1')
    assert _claims(n['id']) == (alloc['id'], instance, {'traits': []})
    row = db_allocations.ROWS.get(alloc['id'])
    assert (row['node_id'], row['state'], row['name']) == (
        n['id'], 'active', 'a1')
    # as stored (MySQL keeps whole seconds of created_at)
    assert {k: v for k, v in row.items() if k != 'created_at'} == {
        k: v for k, v in alloc.items() if k != 'created_at'}
    # once only, and the refused one is not stored
    with pytest.raises(exception.InvalidState) as e:
        _backfill(n['id'], name='a2')
    assert str(e.value) == 'Node %s already has an allocation' % n['uuid']
    assert _allocations() == [('a1', n['id'], 'active')]


def test_backfill_without_instance_takes_the_allocations(any_db_api):
    n = _node(provision_state='active')
    db_traits.set_node_traits(n['id'], ['CUSTOM_A'])
    alloc = _backfill(n['id'], traits=['CUSTOM_A'])
    assert _claims(n['id']) == (alloc['id'], alloc['uuid'],
                                {'traits': ['CUSTOM_A']})


def test_backfill_names_every_mismatch(api):
    n = _node(provision_state='available', resource_class='silver')
    other = _node()
    with pytest.raises(exception.InvalidState) as e:
        _backfill(n['id'], traits=['CUSTOM_B'],
                  candidate_nodes=[other['uuid']])
    assert str(e.value) == (
        'Cannot backfill an allocation for node %s: Node must be in the '
        '"active" state, but the current state is "available"; Resource '
        'class silver does not match the requested resource class gold; '
        'The node lacks the requested traits CUSTOM_B; Candidate nodes '
        'must be empty or contain the target node, but got %s'
        % (n['uuid'], other['uuid']))
    assert _claims(n['id']) == (None, None, None)
    assert _allocations() == []


def test_backfill_of_a_locked_node_stores_nothing(any_db_api):
    """The allocation's INSERT and the node's claim are one transaction:
    when the claim finds the node locked, no allocation is left behind
    (nor one in state "allocating" that no conductor works on)."""
    n = _node(provision_state='active', reservation='host1',
              instance_info={'image': 'x'})
    before = db_nodes.get_node(n['id'])
    with pytest.raises(exception.NodeLocked):
        _backfill(n['id'], name='locked')
    assert db_nodes.get_node(n['id']) == before
    assert _allocations() == []


def test_backfill_with_a_taken_name_leaves_the_node(any_db_api):
    n = _node(provision_state='active')
    other = _node(provision_state='active')
    _backfill(other['id'], name='taken')
    before = db_nodes.get_node(n['id'])
    with pytest.raises(exception.Conflict):
        _backfill(n['id'], name='taken')
    assert db_nodes.get_node(n['id']) == before
    assert _allocations() == [('taken', other['id'], 'active')]


def test_backfill_of_a_missing_node(api):
    with pytest.raises(exception.NodeNotFound):
        _backfill(12345)
    assert _allocations() == []


def test_release_frees_the_node_and_deletes_the_allocation(any_db_api):
    instance = db_rows.new_uuid()
    kept = _node(provision_state='active', instance_uuid=instance)
    freed = _node()
    first = _backfill(kept['id'])
    second = _alloc()
    assert db_allocations.claim_node(second, freed['id'])
    db_nodes.ROWS.update(kept['id'], {'maintenance': True})
    for alloc in (first, second):
        db_allocations.release(db_allocations.ROWS.get(alloc['id']))
        with pytest.raises(exception.AllocationNotFound):
            db_allocations.ROWS.get(alloc['id'])
    # an instance UUID that was not the allocation's stays
    assert _claims(kept['id'])[:2] == (None, instance)
    assert _claims(freed['id'])[:2] == (None, None)
    # an allocation without a node just goes
    alone = _alloc()
    db_allocations.release(alone)
    assert db_allocations.ROWS.list_page() == []


def test_release_frees_a_node_claimed_after_the_allocation_was_read(
        any_db_api):
    # DELETE read the allocation while it was allocating; the conductor
    # claimed a node before the release ran: the node is freed too
    n = _node()
    alloc = _alloc()
    assert db_allocations.claim_node(alloc, n['id'])
    db_allocations.release(alloc)           # alloc: node_id None
    assert db_allocations.ROWS.list_page() == []
    assert _claims(n['id'])[:2] == (None, None)


def test_claim_of_a_deleted_allocation_leaves_the_node_free(any_db_api):
    # the conductor read the allocation, then DELETE removed it: the
    # claim takes nothing (a node with a dangling instance UUID could
    # not be deleted)
    n = _node()
    alloc = _alloc()
    db_allocations.release(alloc)
    with pytest.raises(exception.AllocationNotFound):
        db_allocations.claim_node(alloc, n['id'])
    assert _claims(n['id'])[:2] == (None, None)
    # nor does a claim of an allocation no longer allocating
    failed = _alloc(state='error')
    with pytest.raises(exception.AllocationNotFound):
        db_allocations.claim_node(failed, n['id'])
    assert _claims(n['id'])[:2] == (None, None)


def test_release_of_a_released_allocation_is_not_found(api):
    alloc = _alloc()
    db_allocations.release(alloc)
    with pytest.raises(exception.AllocationNotFound):
        db_allocations.release(alloc)


@pytest.mark.parametrize('fields, error', [
    ({'provision_state': 'active'}, exception.InvalidState),
    ({'provision_state': 'available', 'reservation': 'host1'},
     exception.NodeLocked),
])
def test_release_refused_changes_nothing(api, fields, error):
    n = _node(provision_state='available')
    alloc = _alloc()
    assert db_allocations.claim_node(alloc, n['id'])
    db_nodes.ROWS.update(n['id'], fields)
    alloc = db_allocations.ROWS.get(alloc['id'])
    with pytest.raises(error):
        db_allocations.release(alloc)
    assert _claims(n['id'])[:2] == (alloc['id'], alloc['uuid'])
    assert db_allocations.ROWS.get(alloc['id'])['node_id'] == n['id']


def test_uuids_by_id(api):
    rows = [_alloc() for _ in range(3)]
    assert db_allocations.uuids_by_id({rows[0]['id'], rows[2]['id']}) == {
        rows[0]['id']: rows[0]['uuid'], rows[2]['id']: rows[2]['uuid']}
    assert db_allocations.uuids_by_id({999}) == {}
