"""An API update of a node saves onto the node as it read it: when a
conductor's task stored something in between (the API does not hold the
node's lock), the update is checked again against the node as now
stored and its changes go on top, JSON fields key by key; nothing the
task stored is lost, and a node that can no longer be updated answers
409 and keeps what the task stored."""

from baremetal.api import patching
from baremetal.common import states
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests import harness


def _updated(uuid: str) -> None:
    """The node has an updated_at (a new one has none): the conductor's
    write below comes within the same second as this one."""
    db_rows.update(db_nodes.NODES, db_nodes.get_node(uuid)['id'],
                   {'description': 'updated'})


def _meanwhile(monkeypatch, uuid: str, **values) -> None:
    """A conductor's write after the API read the node, before it
    saves (once)."""
    real = patching.node_changes
    done = []

    def node_changes(*args, **kwargs):
        if not done:
            done.append(1)
            db_rows.update(db_nodes.NODES,
                           db_nodes.get_node(uuid)['id'], values)
        return real(*args, **kwargs)
    monkeypatch.setattr(patching, 'node_changes', node_changes)


def test_a_patch_keeps_what_a_task_stored_meanwhile(any_db_api,
                                                    monkeypatch):
    """On every database: told apart within the same second (MariaDB's
    DATETIME kept seconds; nodes.updated_at is DATETIME(6) there)."""
    api = any_db_api
    n = api.create_node(properties={'memory_mb': 4096})
    _updated(n['uuid'])
    _meanwhile(monkeypatch, n['uuid'],
               properties={'memory_mb': 4096, 'cpus': 8},
               driver_internal_info={'agent_secret_token': 't'})
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/properties/local_gb', 'value': 50},
        {'op': 'add', 'path': '/extra/rack', 'value': 'r1'}])
    assert status == 200, body
    assert body['properties'] == {'memory_mb': 4096, 'cpus': 8,
                                  'local_gb': 50}
    row = db_nodes.get_node(n['uuid'])
    assert row['properties'] == body['properties']
    assert row['extra'] == {'rack': 'r1'}
    assert row['driver_internal_info'] == {'agent_secret_token': 't'}


def test_a_patch_removing_a_key_removes_only_that(api, monkeypatch):
    n = api.create_node(properties={'memory_mb': 4096, 'cpus': 2})
    _meanwhile(monkeypatch, n['uuid'],
               properties={'memory_mb': 4096, 'cpus': 2, 'local_gb': 9})
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'remove', 'path': '/properties/cpus'}])
    assert status == 200, body
    assert db_nodes.get_node(n['uuid'])['properties'] == {
        'memory_mb': 4096, 'local_gb': 9}


def test_a_node_in_transition_by_the_save_is_not_patched(any_db_api,
                                                         monkeypatch):
    api = any_db_api
    n = api.create_node()
    _updated(n['uuid'])
    _meanwhile(monkeypatch, n['uuid'], provision_state=states.DEPLOYING,
               target_provision_state=states.ACTIVE,
               instance_info={'image_source': 'http://a/img'})
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/instance_info/image_source',
         'value': 'http://b/img'}])
    assert status == 409, body
    assert 'state transition is in progress' in \
        harness.error_message(body)
    row = db_nodes.get_node(n['uuid'])
    assert row['instance_info'] == {'image_source': 'http://a/img'}
    assert row['provision_state'] == states.DEPLOYING


def test_maintenance_set_keeps_what_a_task_stored(api, monkeypatch):
    n = api.create_node()
    from baremetal.api.controllers.v1 import nodes
    real = nodes.get_node

    def get_node(req, ident):
        obj = real(req, ident)
        db_rows.update(db_nodes.NODES, obj.id,
                       {'power_state': states.POWER_ON,
                        'driver_internal_info': {'x': 1}})
        return obj
    monkeypatch.setattr(nodes, 'get_node', get_node)
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/maintenance' % n['uuid'], {'reason': 'r'})
    assert status == 202, body
    row = db_nodes.get_node(n['uuid'])
    assert (row['maintenance'], row['maintenance_reason'],
            row['power_state'], row['driver_internal_info']) == \
        (True, 'r', states.POWER_ON, {'x': 1})
