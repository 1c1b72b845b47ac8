"""db/portgroups.py: the conditions of a port group list and the
uuids of port groups by id, against a real (SQLite) database."""

from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import portgroups as db_portgroups
from baremetal.db import rows as db_rows

PORTGROUPS = models.TABLES['portgroups']
NODES = db_nodes.NODES


def _node(**fields):
    return db_rows.create(NODES, dict({'driver': 'fake-hardware'}, **fields))


def _uuids(*filters):
    return {r['uuid'] for r in db_rows.query(PORTGROUPS, filters)}


def test_list_conditions_pick_their_port_groups(api):
    a = _node(conductor_group='rack1', shard='s1')
    b = _node(conductor_group='rack2', shard='s2')
    pa = db_rows.create(PORTGROUPS, {'node_id': a['id'],
                                     'address': '52:54:00:00:00:01'})
    pb = db_rows.create(PORTGROUPS, {'node_id': b['id']})
    assert _uuids(db_portgroups.on_node(a['id'])) == {pa['uuid']}
    assert _uuids(db_portgroups.with_address('52:54:00:00:00:01')) == {
        pa['uuid']}
    assert _uuids(db_portgroups.on_nodes_in_groups(['rack2'])) == {
        pb['uuid']}
    assert _uuids(db_portgroups.on_nodes_in_groups(['rack1', 'rack2'])) \
        == {pa['uuid'], pb['uuid']}
    assert _uuids(db_portgroups.on_nodes_in_shards(['s1'])) == {pa['uuid']}
    assert _uuids(db_portgroups.on_nodes_in_shards(['s3'])) == set()


def test_uuids_by_id(api):
    n = _node()
    pgs = [db_rows.create(PORTGROUPS, {'node_id': n['id']}) for _ in range(3)]
    assert db_portgroups.uuids_by_id({pgs[0]['id'], pgs[2]['id']}) == {
        pgs[0]['id']: pgs[0]['uuid'], pgs[2]['id']: pgs[2]['uuid']}
    assert db_portgroups.uuids_by_id({9999}) == {}
