"""Change tracking of records: only what changed is written, including
JSON fields mutated in place, also after a previous save."""

from baremetal import objects


def test_in_place_changes_are_saved_across_saves(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    info = node.driver_internal_info
    info['step'] = 0
    node.save()
    info['step'] = 1          # the same dict, after the save
    assert node.changes() == {'driver_internal_info': {'step': 1}}
    node.save()
    assert objects.Node.get(n['uuid']).driver_internal_info == {'step': 1}


def test_nothing_changed_writes_nothing(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    assert node.driver_info == {}  # read only
    assert node.changes() == {}
    before = api.node(n['uuid'])['updated_at']
    node.save()
    assert api.node(n['uuid'])['updated_at'] == before


def test_assignment_is_tracked(api):
    n = api.create_node()
    node = objects.Node.get(n['uuid'])
    node.name = 'renamed'
    assert node.changes() == {'name': 'renamed'}
    node.save()
    assert api.node(n['uuid'])['name'] == 'renamed'
