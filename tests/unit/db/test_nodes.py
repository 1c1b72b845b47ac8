"""db/nodes.py: the conditions of a node list, the node sub-selects of
port and port group lists, and the small reads of nodes, against a real
(SQLite) database."""

import pytest

from baremetal.common import exception
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows


def _node(name, **fields):
    return db_rows.create(db_nodes.NODES, dict({'driver': 'fake-hardware',
                                                'name': name}, **fields))


def _names(*filters):
    return sorted(r['name'] for r in db_rows.query(db_nodes.NODES, filters))


def test_list_conditions_pick_their_nodes(api):
    _node('a', instance_uuid=db_rows.new_uuid(), maintenance=True,
          retired=True, shard='s1', conductor_group='rack1',
          description='50% off')
    _node('b', maintenance=False, retired=False, shard='s2',
          description='500 off')
    _node('c', maintenance=False, retired=None, parent_node='a-parent')

    assert _names(db_nodes.equals('name', 'b')) == ['b']
    assert _names(db_nodes.equals('conductor_group', 'rack1')) == ['a']
    assert _names(db_nodes.associated(True)) == ['a']
    assert _names(db_nodes.associated(False)) == ['b', 'c']
    assert _names(db_nodes.in_maintenance(True)) == ['a']
    assert _names(db_nodes.in_maintenance(False)) == ['b', 'c']
    assert _names(db_nodes.retired(True)) == ['a']
    # never set counts as not retired
    assert _names(db_nodes.retired(False)) == ['b', 'c']
    assert _names(db_nodes.in_shards(['s1', 's2'])) == ['a', 'b']
    assert _names(db_nodes.in_shards([])) == []
    assert _names(db_nodes.sharded(True)) == ['a', 'b']
    assert _names(db_nodes.sharded(False)) == ['c']
    assert _names(db_nodes.without_parent()) == ['a', 'b']
    assert _names(db_nodes.description_contains('50%')) == ['a']
    assert _names(db_nodes.description_contains(' off')) == ['a', 'b']


def test_node_sub_selects(api):
    a = _node('a', conductor_group='rack1', shard='s1')
    b = _node('b', conductor_group='rack2', shard='s1')
    _node('c', conductor_group='rack2')
    ids = (db_nodes.NODES.c.id,)
    for sub, expected in ((db_nodes.ids_in_conductor_groups(['rack1']),
                           [a['id']]),
                          (db_nodes.ids_in_shards(['s1']),
                           [a['id'], b['id']]),
                          (db_nodes.ids_in_shards(['s9']), [])):
        got = db_rows.query(db_nodes.NODES, (ids[0].in_(sub),), ('id',))
        assert sorted(r['id'] for r in got) == expected


def test_uuids_children_chassis_and_shards(api):
    a = _node('a', shard='s1')
    b = _node('b', shard='s1', parent_node=a['uuid'])
    chassis = db_rows.create(models.TABLES['chassis'], {})
    c = _node('c', parent_node=a['uuid'], chassis_id=chassis['id'])
    _node('d')

    assert db_nodes.uuids_by_id({a['id'], c['id']}) == {
        a['id']: a['uuid'], c['id']: c['uuid']}
    assert db_nodes.uuids_by_id({12345}) == {}
    assert sorted(k['uuid'] for k in db_nodes.children(a['uuid'])) == \
        sorted([b['uuid'], c['uuid']])
    assert db_nodes.children(b['uuid']) == []
    assert db_nodes.count_in_chassis(chassis['id']) == 1
    assert db_nodes.count_in_chassis(chassis['id'] + 1) == 0
    assert sorted(map(tuple, db_nodes.shard_counts()),
                  key=lambda r: r[0] or '') == [(None, 2), ('s1', 2)]


def test_unreserved(api):
    _node('free')
    _node('held', reservation='host1')
    assert _names(db_nodes.unreserved()) == ['free']


def test_rows_name_the_node_asked_for(api):
    node = _node('named')
    assert db_nodes.ROWS.get('named')['id'] == node['id']
    assert db_nodes.get_node(node['uuid'], ('name',)) == {'name': 'named'}
    for lookup in (db_nodes.ROWS.get, db_nodes.get_node):
        with pytest.raises(exception.NodeNotFound) as e:
            lookup('nope')
        assert str(e.value) == 'Node nope could not be found.'


def test_rows_update_a_node_as_any_node_write(any_db_api):
    node = _node('n1', provision_state='enroll')
    assert db_nodes.ROWS.update(node['id'], {'provision_state': 'manageable'},
                                (db_nodes.unreserved(),)) == 1
    got = db_nodes.get_node(node['id'])
    assert got['provision_state'] == 'manageable'
    assert got['updated_at'] is not None
