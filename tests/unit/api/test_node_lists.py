"""Node list pages embed stored JSON fields unparsed (SQLite): what a
client reads back is exactly what it stored, secrets stay masked, and an
empty field reads as {} as on a single-node GET."""

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
