"""Node list pages embed stored JSON fields unparsed (SQLite): what a
client reads back is exactly what it stored, secrets stay masked, and an
empty field reads as {} as on a single-node GET."""

import json

import pytest

VALUES = {
    'properties': {'cpus': 8, 'nested': [1, {'é': 'ü', 'n': None}]},
    'extra': {'quote': 'a "b" \\ c', 'big': 2 ** 53, 'f': 1.5},
    'driver_info': {'ipmi_password': 'pw', 'ipmi_address': '10.0.0.9'},
}


@pytest.mark.parametrize('path', [
    '/v1/nodes/detail',
    '/v1/nodes?fields=uuid,properties,extra,driver_info,clean_step,'
    'driver_internal_info',
    '/v1/nodes?detail=true&limit=1',
])
def test_json_fields_read_back_as_stored(api, path):
    node = api.create_node(name='lists', **VALUES)
    api.create_node(name='empty')
    status, body, _ = api.request('GET', path)
    assert status == 200, body
    by_name = {n.get('name', n['uuid']): n for n in body['nodes']}
    got = by_name.get('lists') or by_name[node['uuid']]
    one = api.node(node['uuid'])
    for f in ('properties', 'extra', 'clean_step', 'driver_info'):
        assert got[f] == one[f], f
    assert got['properties'] == VALUES['properties']
    assert got['extra'] == VALUES['extra']
    assert got['driver_info'] == {'ipmi_password': '******',
                                  'ipmi_address': '10.0.0.9'}
    assert got['clean_step'] == {}
    if len(body['nodes']) > 1:
        empty = [n for n in body['nodes'] if n is not got][0]
        assert empty['extra'] == {} and empty['properties'] == {}


@pytest.mark.parametrize('collection', ['nodes', 'ports'])
def test_fields_and_detail_of_a_list(api, collection):
    """One rule for the node list and every other resource's list
    (api/collection.py's shown): ?fields= as asked, checked before it
    conflicts with ?detail=true; without it, the list's own fields or,
    detailed, every field."""
    node = api.create_node(name='shown')
    if collection == 'ports':
        status, out, _ = api.request('POST', '/v1/ports', {
            'node_uuid': node['uuid'], 'address': '52:54:00:12:34:56'})
        assert status == 201, out
    path = '/v1/' + collection
    status, out, _ = api.request('GET', path + '?fields=uuid')
    assert status == 200, out
    assert [sorted(x) for x in out[collection]] == [['links', 'uuid']]
    listed = api.request('GET', path)[1][collection][0]
    detailed = api.request('GET', path + '?detail=true')[1][collection][0]
    assert 'uuid' in listed and set(listed) < set(detailed)
    assert 'created_at' in detailed and 'created_at' not in listed
    status, out, _ = api.request('GET', path + '?detail=true&fields=uuid')
    assert status == 400
    assert _fault(out) == \
        'Can not specify ?detail=True and fields in the same request.'
    # an unknown field is named first, whatever else the query asks
    status, out, _ = api.request('GET', path + '?detail=true&fields=bogus')
    assert status == 400
    assert _fault(out) == 'Field(s) "bogus" are not valid'


@pytest.mark.parametrize('query', ['fields=', 'fields=,,'])
def test_an_empty_fields_shows_the_links_alone(any_db_api, query):
    """As in Ironic 39: ``?fields=`` with no field asks for none, so each
    node, port or conductor shows its links alone, in a list and alone
    (the node list was a 500, a single node showed every field)."""
    api = any_db_api
    node = api.create_node(name='no-fields')
    status, port, _ = api.request('POST', '/v1/ports', {
        'node_uuid': node['uuid'], 'address': '52:54:00:12:34:57'})
    assert status == 201, port
    for path, key in (('/v1/nodes', 'nodes'),
                      ('/v1/nodes/no-fields', None),
                      ('/v1/ports', 'ports'),
                      ('/v1/ports/' + port['uuid'], None),
                      ('/v1/nodes/no-fields/ports', 'ports'),
                      ('/v1/conductors', 'conductors')):
        status, out, _ = api.request('GET', path + '?' + query,
                                     version='1.61')
        assert status == 200, (path, out)
        items = out[key] if key else [out]
        assert items and all(list(i) == ['links'] for i in items), \
            (path, items)
        assert items[0]['links'][0]['rel'] == 'self'
    status, out, _ = api.request('GET', '/v1/nodes?detail=true&' + query,
                                 version='1.61')
    assert status == 400
    assert _fault(out) == \
        'Can not specify ?detail=True and fields in the same request.'


def _fault(out: dict) -> str:
    return json.loads(out['error_message'])['faultstring']
