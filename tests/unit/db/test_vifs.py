"""db/vifs.py: the ports and port groups a VIF is bound on, against a
real (SQLite) database."""

from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from baremetal.db import vifs

NODES = db_nodes.NODES
PORTGROUPS = models.TABLES['portgroups']
PORTS = models.TABLES['ports']


def test_port_by_uuid_and_ports_of_node(api):
    a = db_rows.create(NODES, {'driver': 'fake-hardware'})
    b = db_rows.create(NODES, {'driver': 'fake-hardware'})
    p = db_rows.create(PORTS, {'node_id': a['id'],
                               'address': '52:54:00:00:00:01',
                               'internal_info': {'tenant_vif_port_id': 'v'}})
    db_rows.create(PORTS, {'node_id': b['id'],
                           'address': '52:54:00:00:00:02'})
    pg = db_rows.create(PORTGROUPS, {'node_id': a['id']})

    assert vifs.port_by_uuid('ports', p['uuid']) == {
        'id': p['id'], 'node_id': a['id'],
        'internal_info': {'tenant_vif_port_id': 'v'}}
    assert vifs.port_by_uuid('portgroups', pg['uuid'])['id'] == pg['id']
    assert vifs.port_by_uuid('ports', pg['uuid']) is None
    assert vifs.ports_of_node('ports', a['id']) == [
        {'id': p['id'], 'internal_info': {'tenant_vif_port_id': 'v'}}]
    assert [r['id'] for r in vifs.ports_of_node('portgroups', a['id'])] \
        == [pg['id']]
    assert vifs.ports_of_node('portgroups', b['id']) == []


def test_set_internal_info_of_a_port_or_port_group(api):
    node = db_rows.create(NODES, {'driver': 'fake-hardware'})
    p = db_rows.create(PORTS, {'node_id': node['id'],
                               'address': '52:54:00:00:00:03'})
    pg = db_rows.create(PORTGROUPS, {'node_id': node['id']})
    vifs.set_internal_info('ports', p['id'], {'tenant_vif_port_id': 'v1'})
    vifs.set_internal_info('portgroups', pg['id'], {'x': 1})
    assert vifs.port_by_uuid('ports', p['uuid'])['internal_info'] == {
        'tenant_vif_port_id': 'v1'}
    assert vifs.port_by_uuid('portgroups', pg['uuid'])['internal_info'] \
        == {'x': 1}
