"""The list endpoints run a fixed number of SQL statements per page,
whatever the number of nodes: no query per node.  (Counts, not time.)"""

import contextlib

import pytest
import sqlalchemy as sa

from baremetal.db import engine as db_engine

NOVA_FIELDS = ('uuid,power_state,target_power_state,provision_state,'
               'target_provision_state,last_error,maintenance,properties,'
               'instance_uuid,traits,resource_class')


@contextlib.contextmanager
def counting():
    statements = []

    def count(conn, cursor, statement, params, context, executemany):
        if statement.split(None, 1)[0].upper() not in (
                'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'):
            statements.append(statement)
    sa.event.listen(db_engine.engine(), 'before_cursor_execute', count)
    try:
        yield statements
    finally:
        sa.event.remove(db_engine.engine(), 'before_cursor_execute', count)


def _nodes(api, n):
    for i in range(n):
        node = api.create_node(name='n%03d' % i, properties={'cpus': i})
        api.request('PUT', '/v1/nodes/%s/traits' % node['uuid'],
                    {'traits': ['CUSTOM_A', 'CUSTOM_%d' % i]})


@pytest.mark.parametrize('path', [
    '/v1/nodes',
    '/v1/nodes/detail',
    '/v1/nodes?fields=' + NOVA_FIELDS,
    '/v1/nodes?detail=true&limit=5',
    '/v1/ports/detail',
])
def test_statements_per_page_do_not_grow_with_nodes(api, path):
    _nodes(api, 3)
    with counting() as few:
        status, body, _ = api.request('GET', path)
    assert status == 200
    for i in range(12):
        api.create_node(name='m%03d' % i)
    with counting() as many:
        status, body, _ = api.request('GET', path)
    assert status == 200
    assert len(many) == len(few), (few, many)
    assert len(many) <= 3


def test_nova_list_loads_only_requested_columns(api):
    _nodes(api, 2)
    with counting() as stmts:
        status, body, _ = api.request('GET', '/v1/nodes?fields=' +
                                      NOVA_FIELDS)
    assert status == 200
    node_query = [s for s in stmts if 'FROM nodes' in s][0]
    select_list = node_query.split('FROM')[0]
    for column in ('driver_info', 'driver_internal_info', 'instance_info',
                   'extra', 'clean_step'):
        assert column not in select_list
    assert body['nodes'][0]['traits']


def test_get_one_node_is_one_statement_with_its_traits(api):
    """Clients poll single nodes: node and traits come in one statement,
    by UUID and by name, with and without traits."""
    _nodes(api, 2)
    bare = api.create_node(name='bare')
    for ident, traits in (('n001', ['CUSTOM_1', 'CUSTOM_A']),
                          (bare['uuid'], [])):
        with counting() as stmts:
            status, body, _ = api.request('GET', '/v1/nodes/%s' % ident)
        assert status == 200
        assert body['traits'] == traits
        assert len(stmts) == 1, stmts
    status, body, _ = api.request('GET', '/v1/nodes/nope')
    assert status == 404 and 'nope' in body['error_message']
    status, body, _ = api.request('GET', '/v1/nodes/n001', version='1.4')
    assert status == 404  # names identify nodes from 1.5


def test_enroll_and_delete_statements(any_db_api):
    """Enrolling a node is its INSERT alone (no traits to read back, the
    live conductors' drivers are cached); deleting one reads it, then
    deletes it and all that hangs off it: one statement on PostgreSQL,
    one per table (history, inventory and firmware included) in a transaction
    elsewhere.  The change feed's event of each is written by a trigger,
    in the statement (before MariaDB's triggers, three statements more
    there: the node read under its lock, the counter taken and read
    back, the event inserted)."""
    api = any_db_api
    api.create_node(name='warm')      # fills the drivers cache
    with counting() as stmts:
        status, body, _ = api.request('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'name': 'new'}, version='1.61')
    assert status == 201 and body['traits'] == []
    assert len(stmts) == 1 and 'INSERT INTO nodes' in stmts[0], stmts
    with counting() as stmts:
        assert api.request('DELETE', '/v1/nodes/new')[0] == 204
    assert len(stmts) == (2 if api.db_kind == 'postgresql' else 12), stmts
