"""db/history.py: the reads of a node's history, against a real
(SQLite) database."""

from baremetal.db import history as db_history
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

H = models.TABLES['node_history']


def _node():
    return db_rows.create(db_nodes.NODES, {'driver': 'fake-hardware'})


def _event(node, text):
    return db_rows.create(H, {'node_id': node['id'], 'event': text,
                              'severity': 'ERROR', 'event_type': 'cleaning',
                              'uuid': db_rows.new_uuid()})


def test_events_of_node_page_oldest_first(api):
    a, b = _node(), _node()
    mine = [_event(a, 'e%d' % i) for i in range(5)]
    _event(b, 'other')
    assert [e['event'] for e in db_history.events_of_node(a['id'])] == [
        'e0', 'e1', 'e2', 'e3', 'e4']
    first = db_history.events_of_node(a['id'], 2)
    assert [e['event'] for e in first] == ['e0', 'e1']
    after = db_history.marker(first[-1]['uuid'])
    assert after == {'id': mine[1]['id'], 'uuid': mine[1]['uuid']}
    assert [e['event'] for e in db_history.events_of_node(
        a['id'], 2, after)] == ['e2', 'e3']
    assert db_history.marker(db_rows.new_uuid()) is None


def test_event_of_node_only_the_nodes(api):
    a, b = _node(), _node()
    ev = _event(a, 'boom')
    assert db_history.event_of_node(a['id'], ev['uuid'])['event'] == 'boom'
    assert db_history.event_of_node(b['id'], ev['uuid']) is None


def test_add_stores_an_event(api):
    node = _node()
    db_history.add({'uuid': db_rows.new_uuid(), 'node_id': node['id'],
                    'event': 'stored', 'severity': 'INFO',
                    'event_type': 'monitoring', 'user': 'u1'})
    got = db_history.events_of_node(node['id'])
    assert [(e['event'], e['user']) for e in got] == [('stored', 'u1')]
    assert got[0]['created_at'] is not None
