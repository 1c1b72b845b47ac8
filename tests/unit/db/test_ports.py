"""db/ports.py: the conditions of a port list and the queries on ports,
against a real (SQLite) database."""

from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports
from baremetal.db import rows as db_rows

PORTS = models.TABLES['ports']
NODES = db_nodes.NODES


def _node(**fields):
    return db_rows.create(NODES, dict({'driver': 'fake-hardware'}, **fields))


def _port(node, address, **fields):
    return db_rows.create(PORTS, dict({'node_id': node['id'],
                                       'address': address}, **fields))


def _addresses(*filters):
    return sorted(r['address'] for r in db_rows.query(PORTS, filters))


def test_list_conditions_pick_their_ports(api):
    a = _node(conductor_group='rack1', shard='s1')
    b = _node(conductor_group='rack2', shard='s2')
    pg = db_rows.create(models.TABLES['portgroups'], {'node_id': a['id']})
    _port(a, '52:54:00:00:00:01', portgroup_id=pg['id'],
          description='uplink 100%')
    _port(a, '52:54:00:00:00:02', description='uplink 1000')
    _port(b, '52:54:00:00:00:03')

    assert _addresses(db_ports.on_node(a['id'])) == [
        '52:54:00:00:00:01', '52:54:00:00:00:02']
    assert _addresses(db_ports.in_portgroup(pg['id'])) == [
        '52:54:00:00:00:01']
    assert _addresses(db_ports.with_address('52:54:00:00:00:03')) == [
        '52:54:00:00:00:03']
    # % is a character, not a wildcard
    assert _addresses(db_ports.description_contains('100%')) == [
        '52:54:00:00:00:01']
    assert _addresses(db_ports.on_nodes_in_groups(['rack2'])) == [
        '52:54:00:00:00:03']
    assert _addresses(db_ports.on_nodes_in_groups(['rack1', 'rack2'])) \
        == ['52:54:00:00:00:01', '52:54:00:00:00:02', '52:54:00:00:00:03']
    assert _addresses(db_ports.on_nodes_in_shards(['s1'])) == [
        '52:54:00:00:00:01', '52:54:00:00:00:02']
    assert _addresses(db_ports.on_nodes_in_shards(['nope'])) == []


def test_of_node_and_node_ids_with_addresses(api):
    a, b = _node(), _node()
    _port(a, '52:54:00:00:00:02')
    _port(a, '52:54:00:00:00:01')
    _port(b, '52:54:00:00:00:03')
    assert [p['address'] for p in db_ports.of_node(a['id'])] == [
        '52:54:00:00:00:02', '52:54:00:00:00:01']     # by id
    assert db_ports.of_node(_node()['id']) == []
    assert db_ports.node_ids_with_addresses(
        ['52:54:00:00:00:01', '52:54:00:00:00:02']) == {a['id']}
    assert db_ports.node_ids_with_addresses(
        ['52:54:00:00:00:01', '52:54:00:00:00:03']) == {a['id'], b['id']}
    assert db_ports.node_ids_with_addresses(['52:54:00:00:00:09']) == set()


def test_portgroup_members_and_their_physical_networks(api):
    n = _node()
    pg = db_rows.create(models.TABLES['portgroups'], {'node_id': n['id']})
    other = db_rows.create(models.TABLES['portgroups'], {'node_id': n['id']})
    p1 = _port(n, '52:54:00:00:00:01', portgroup_id=pg['id'],
               physical_network='net1')
    _port(n, '52:54:00:00:00:02', portgroup_id=pg['id'],
          physical_network=None)
    _port(n, '52:54:00:00:00:03', portgroup_id=other['id'],
          physical_network='net9')
    assert db_ports.count_in_portgroup(pg['id']) == 2
    assert db_ports.count_in_portgroup(other['id']) == 1
    assert db_ports.physnets_in_portgroup(pg['id']) == {'net1', None}
    assert db_ports.physnets_in_portgroup(pg['id'], p1['id']) == {None}

    db_ports.set_physnet_of_portgroup(pg['id'], 'net2')
    assert db_ports.physnets_in_portgroup(pg['id']) == {'net2'}
    assert db_ports.physnets_in_portgroup(other['id']) == {'net9'}
    changed = db_rows.get(PORTS, p1['id'], LookupError)
    assert changed['updated_at'] is not None
    db_ports.set_physnet_of_portgroup(pg['id'], None)
    assert db_ports.physnets_in_portgroup(pg['id']) == {None}
