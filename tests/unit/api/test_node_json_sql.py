"""Node list pages written by the database (node_json_sql: SQLite and
PostgreSQL) read exactly as the ones node_view renders in Python, for
nodes of every shape, at old and new microversions, with and without a
field list."""

import datetime

import pytest

from baremetal.api.controllers.v1 import node_json_sql
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests import harness
from tests import services


@pytest.fixture(params=['sqlite', 'postgresql'])
def api(request, tmp_path):
    """The databases that write node JSON themselves."""
    h = harness.Harness(
        tmp_path, db_url=services.db_url(request.param, schema=True))
    yield h
    h.close()


def _shapes(api):
    """Nodes covering every kind of field."""
    st, chassis, _ = api.request('POST', '/v1/chassis',
                                 {'description': 'rack 1'})
    assert st == 201
    full = api.create_node(
        name='full', description='a "quoted"\nline é ✓ \\ \u0001',
        chassis_uuid=chassis['uuid'], resource_class='gold',
        driver_info={'ipmi_password': 'pw', 'ipmi_address': '10.0.0.9',
                     'ipmi_kg_key': 'k', 'nested': {'token': 't'}},
        instance_info={'image_source': 'http://i', 'configdrive': 'cd',
                       'image_url': 'http://u?password=x'},
        properties={'cpus': 8, 'deep': [1, {'é': None}]},
        extra={'big': 2 ** 53, 'f': 1.5}, automated_clean=True,
        protected=False, owner='proj', conductor_group='')
    api.request('PUT', '/v1/nodes/full/traits',
                {'traits': ['CUSTOM_B', 'CUSTOM_A']})
    avail = api.make_available(name='avail', automated_clean=False,
                               resource_class='baremetal')
    st, _, _ = api.request('POST', '/v1/allocations',
                           {'resource_class': 'baremetal',
                            'name': 'alloc-1'})
    assert st == 201
    api.conductor.workers.wait_idle(10)
    api.create_node()       # no name, nothing set
    maint = api.create_node(name='maint')
    api.request('PATCH', '/v1/nodes/maint', [
        {'op': 'replace', 'path': '/maintenance', 'value': True}])
    # dates with and without a fraction of a second
    db_rows.update(db_nodes.NODES, db_nodes.get_node('maint')['id'], {
        'provision_updated_at': datetime.datetime(2026, 1, 2, 3, 4, 5),
        'inspection_started_at': datetime.datetime(2026, 1, 2, 3, 4, 5,
                                                   60)})
    # stored JSON fields: the agent's token (masked at the top level
    # only), an array, nothing stored
    db_rows.update(db_nodes.NODES, db_nodes.get_node('maint')['id'], {
        'driver_internal_info': {'agent_secret_token': 's3cret',
                                 'deep': {'agent_secret_token': 'kept'}},
        'extra': ['agent_secret_token', 1], 'properties': None})
    # the token's key elsewhere is a user's value, not the token: shown
    db_rows.update(db_nodes.NODES, db_nodes.get_node('avail')['id'], {
        'driver_internal_info': {'note': '"agent_secret_token"'},
        'extra': {'agent_secret_token': 'a user value'}})
    return full, avail, maint


NOVA = ('/v1/nodes?fields=uuid,power_state,target_power_state,'
        'provision_state,target_provision_state,last_error,maintenance,'
        'properties,instance_uuid,traits,resource_class')


VERSIONS = ('1.1', '1.20', '1.46', '1.61')
PATHS = (
    '/v1/nodes/detail', '/v1/nodes', '/v1/nodes?detail=true',
    '/v1/nodes?fields=uuid,provision_state,traits,driver_info,'
    'instance_info,conductor,chassis_uuid,allocation_uuid,created_at',
    '/v1/nodes?fields=name', '/v1/nodes?limit=2', NOVA,
    '/v1/nodes?fields=driver_info', '/v1/nodes?fields=conductor,uuid',
    '/v1/nodes?fields=instance_info,extra',
    '/v1/nodes?fields=driver_internal_info,extra,properties,clean_step',
    '/v1/nodes?fields=name,driver_internal_info,extra&sort_key=name',
    '/v1/nodes?sort_key=name&sort_dir=desc&limit=3',
)


def test_sql_written_pages_equal_python_rendered(api, monkeypatch):
    """Every path at every version on one set of nodes (the pages only
    read them: one database and one set of shapes for all 52 pairs); a
    failure names each pair whose pages differ."""
    _shapes(api)
    assert node_json_sql.usable()
    by_sql = {(p, v): api.request('GET', p, version=v)[:2]
              for p in PATHS for v in VERSIONS}
    monkeypatch.setattr(node_json_sql, 'usable', lambda: False)
    differ = []
    for (path, version), (st, body) in by_sql.items():
        if (st, body) != api.request('GET', path, version=version)[:2]:
            differ.append((path, version))
        elif st == 406:     # a field or sort key too new for ``version``
            assert version != '1.61', path
        else:
            assert st == 200 and len(body['nodes']) >= 2, (path, body)
    assert not differ, differ


def test_traits_before_and_after_any_node_has_one(api):
    # where no node has a trait, the database skips looking for each
    # node's (db/node_json.py): the list is the same as Python's
    for i in range(3):
        api.create_node(name='t%d' % i)
    st, body, _ = api.request('GET', NOVA)
    assert [n['traits'] for n in body['nodes']] == [[], [], []]
    api.request('PUT', '/v1/nodes/t1/traits',
                {'traits': ['CUSTOM_Z', 'CUSTOM_A']})
    st, body, _ = api.request('GET', NOVA)
    assert [n['traits'] for n in body['nodes']] == [
        [], ['CUSTOM_A', 'CUSTOM_Z'], []]


def test_pages_follow_on(api):
    for i in range(5):
        api.create_node(name='n%d' % i)
    st, body, _ = api.request('GET', '/v1/nodes?limit=2&fields=name')
    names = [n['name'] for n in body['nodes']]
    while 'next' in body:
        path = body['next'].split('localhost', 1)[-1]
        st, body, _ = api.request('GET', path)
        names += [n['name'] for n in body['nodes']]
    assert names == ['n0', 'n1', 'n2', 'n3', 'n4']


def test_what_is_escaped_and_masked(api):
    full, avail, maint = _shapes(api)
    st, body, _ = api.request('GET', '/v1/nodes/detail')
    by = {n['name']: n for n in body['nodes'] if n['name']}
    f = by['full']
    assert f['description'] == 'a "quoted"\nline é ✓ \\ \u0001'
    assert f['driver_info'] == {'ipmi_password': '******',
                                'ipmi_address': '10.0.0.9',
                                'ipmi_kg_key': '******',
                                'nested': {'token': '******'}}
    assert f['instance_info']['configdrive'] == '******'
    assert f['traits'] == ['CUSTOM_A', 'CUSTOM_B']
    assert f['chassis_uuid'] and f['automated_clean'] is True
    assert by['avail']['automated_clean'] is False
    assert by['avail']['allocation_uuid']
    assert by['maint']['maintenance'] is True
    assert by['maint']['provision_updated_at'] == \
        '2026-01-02T03:04:05+00:00'
    assert by['maint']['inspection_started_at'] == \
        '2026-01-02T03:04:05.000060+00:00'
    assert f['links'][0]['href'].endswith('/v1/nodes/' + full['uuid'])
    # the same from a field list the database writes whole
    st, body, _ = api.request(
        'GET', '/v1/nodes?fields=name,driver_internal_info,extra,'
        'properties,description')
    by = {n['name']: n for n in body['nodes'] if n['name']}
    assert by['maint']['driver_internal_info'] == {
        'agent_secret_token': '******',
        'deep': {'agent_secret_token': 'kept'}}
    assert by['maint']['extra'] == ['agent_secret_token', 1]
    assert by['maint']['properties'] == {}
    assert by['avail']['driver_internal_info'] == {
        'note': '"agent_secret_token"'}
    assert by['avail']['extra'] == {'agent_secret_token': 'a user value'}
    st, one, _ = api.request('GET', '/v1/nodes/avail')
    assert one['extra'] == {'agent_secret_token': 'a user value'}
    assert by['full']['description'] == 'a "quoted"\nline é ✓ \\ \u0001'
    assert by['full']['properties'] == {'cpus': 8,
                                        'deep': [1, {'é': None}]}
    assert by['full']['links'][1]['href'].endswith(
        '/nodes/' + full['uuid'])


def test_markers(any_db_api):
    """A UUID marker sorted by id is found by the page's own statement
    (on every database): the pages follow on, the last node's gives an
    empty page, a UUID of no node is a 404 as before; other sort keys
    and name markers too."""
    api = any_db_api
    uuids = [api.create_node(name='m%d' % i)['uuid'] for i in range(3)]
    st, body, _ = api.request('GET', '/v1/nodes?fields=name&marker=%s'
                              % uuids[0])
    assert st == 200 and [n['name'] for n in body['nodes']] == ['m1', 'm2']
    st, body, _ = api.request('GET', '/v1/nodes?marker=%s' % uuids[2])
    assert (st, body['nodes']) == (200, []), body
    st, body, _ = api.request(
        'GET', '/v1/nodes?marker=%s' % '0f1e2d3c-4b5a-4697-8879-6a5b4c3d2e1f')
    assert st == 404, body
    assert 'could not be found' in body['error_message'], body
    st, body, _ = api.request('GET', '/v1/nodes?marker=m1&fields=name')
    assert st == 200 and [n['name'] for n in body['nodes']] == ['m2']
    st, body, _ = api.request(
        'GET', '/v1/nodes?sort_key=name&sort_dir=desc&fields=name&marker=%s'
        % uuids[2])
    assert st == 200 and [n['name'] for n in body['nodes']] == ['m1', 'm0']
