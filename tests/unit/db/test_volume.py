"""db/volume.py: the rows of volume connectors and targets, and the node
condition of their lists, against a real (SQLite) database."""

import pytest

from baremetal.common import exception
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from baremetal.db import volume as db_volume


def _node():
    return db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})


def test_on_node_picks_the_nodes_connectors_and_targets(api):
    a, b = _node(), _node()
    vc, vt = db_volume.CONNECTORS, db_volume.TARGETS
    mine = vc.create({'node_id': a['id'], 'type': 'iqn',
                      'connector_id': 'iqn.a'})
    vc.create({'node_id': b['id'], 'type': 'iqn', 'connector_id': 'iqn.b'})
    target = vt.create({'node_id': b['id'], 'volume_type': 'iscsi',
                        'volume_id': 'v1', 'boot_index': 0})
    assert [r['uuid'] for r in vc.list_page(
        (db_volume.on_node(vc, a['id']),))] == [mine['uuid']]
    assert [r['uuid'] for r in vt.list_page(
        (db_volume.on_node(vt, b['id']),))] == [target['uuid']]
    assert vt.list_page((db_volume.on_node(vt, a['id']),)) == []


def test_missing_connector_and_target_name_what_was_asked(api):
    with pytest.raises(exception.VolumeConnectorNotFound) as e:
        db_volume.CONNECTORS.get(db_rows.new_uuid(), shown_as='c1')
    assert 'c1' in str(e.value)
    with pytest.raises(exception.VolumeTargetNotFound) as e:
        db_volume.TARGETS.get('not-a-uuid')
    assert 'not-a-uuid' in str(e.value)


def test_duplicates_are_conflicts_naming_the_values(api):
    node = _node()
    db_volume.CONNECTORS.create({'node_id': node['id'], 'type': 'iqn',
                                 'connector_id': 'iqn.x'})
    with pytest.raises(exception.VolumeConnectorAlreadyExists):
        db_volume.CONNECTORS.create({'node_id': node['id'], 'type': 'iqn',
                                     'connector_id': 'iqn.x'})
    db_volume.TARGETS.create({'node_id': node['id'], 'volume_type': 'iscsi',
                              'volume_id': 'v1', 'boot_index': 0})
    with pytest.raises(exception.VolumeTargetAlreadyExists):
        db_volume.TARGETS.create({'node_id': node['id'],
                                  'volume_type': 'iscsi',
                                  'volume_id': 'v2', 'boot_index': 0})
