"""db/volume.py: the node condition of volume connector and target
lists, against a real (SQLite) database."""

from baremetal.db import api as db
from baremetal.db import volume as db_volume


def test_on_node_picks_the_nodes_connectors_and_targets(api):
    a = db.create(db.NODES, {'driver': 'fake-hardware'})
    b = db.create(db.NODES, {'driver': 'fake-hardware'})
    vc, vt = db.T['volume_connectors'], db.T['volume_targets']
    mine = db.create(vc, {'node_id': a['id'], 'type': 'iqn',
                          'connector_id': 'iqn.a'})
    db.create(vc, {'node_id': b['id'], 'type': 'iqn',
                   'connector_id': 'iqn.b'})
    target = db.create(vt, {'node_id': b['id'], 'volume_type': 'iscsi',
                            'volume_id': 'v1', 'boot_index': 0})
    assert [r['uuid'] for r in db.query(
        vc, (db_volume.on_node(vc, a['id']),))] == [mine['uuid']]
    assert [r['uuid'] for r in db.query(
        vt, (db_volume.on_node(vt, b['id']),))] == [target['uuid']]
    assert db.query(vt, (db_volume.on_node(vt, a['id']),)) == []
