"""/v1/ports and /v1/portgroups through the in-process harness: a port
group named by a port, a filter or a path is found by db.portgroups
(404 naming what was asked when it is not), a port is created,
patched into a group and read back, and a group on a physical network
gives it to the port that joins it."""

from tests import harness

UNKNOWN = '7a3e3d38-52c5-4c4e-9d1e-c0ffee000002'
V = '1.102'


def _not_found(api, method, path, body=None):
    status, out, _ = api.request(method, path, body, version=V)
    assert status in (400, 404), out
    return harness.error_message(out)


def test_an_unknown_port_group_is_named(api):
    node = api.create_node()
    msg = 'Portgroup %s could not be found.' % UNKNOWN
    assert _not_found(api, 'POST', '/v1/ports', {
        'address': '52:54:00:00:00:01', 'node_uuid': node['uuid'],
        'portgroup_uuid': UNKNOWN}) == msg
    assert _not_found(api, 'GET', '/v1/ports?portgroup=%s' % UNKNOWN) == msg
    assert _not_found(api, 'GET', '/v1/portgroups/%s/ports' % UNKNOWN) \
        == msg
    assert _not_found(api, 'GET',
                      '/v1/portgroups/%s/ports/detail' % UNKNOWN) == msg
    assert _not_found(api, 'GET', '/v1/portgroups/%s' % UNKNOWN) == msg


def test_a_port_joins_a_group_and_takes_its_network(api):
    node = api.create_node()
    status, pg, _ = api.request('POST', '/v1/portgroups', {
        'node_uuid': node['uuid'], 'address': '52:54:00:00:01:00',
        'physical_network': 'physnet1'}, version=V)
    assert status == 201, pg
    status, port, _ = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:02', 'node_uuid': node['uuid']},
        version=V)
    assert status == 201, port
    status, got, _ = api.request('PATCH', '/v1/ports/%s' % port['uuid'], [
        {'op': 'add', 'path': '/portgroup_uuid', 'value': pg['uuid']}],
        version='1.101')
    assert status == 409, got      # a port of no network cannot join
    status, got, _ = api.request('PATCH', '/v1/ports/%s' % port['uuid'], [
        {'op': 'add', 'path': '/portgroup_uuid', 'value': pg['uuid']},
        {'op': 'add', 'path': '/physical_network', 'value': 'physnet1'}],
        version='1.101')
    assert status == 200, got
    assert got['portgroup_uuid'] == pg['uuid']
    status, listed, _ = api.request(
        'GET', '/v1/portgroups/%s/ports' % pg['uuid'], version=V)
    assert [p['uuid'] for p in listed['ports']] == [port['uuid']]
    status, body, _ = api.request('DELETE', '/v1/portgroups/%s' % pg['uuid'],
                                  version=V)
    assert status == 409, body
    assert 'still has ports' in harness.error_message(body)


def test_a_group_with_no_network_takes_its_first_ports(api):
    node = api.create_node()
    status, pg, _ = api.request('POST', '/v1/portgroups', {
        'node_uuid': node['uuid'], 'address': '52:54:00:00:02:00'},
        version=V)
    assert status == 201 and pg['physical_network'] is None, pg
    status, port, _ = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:03', 'node_uuid': node['uuid'],
        'portgroup_uuid': pg['uuid'], 'physical_network': 'physnet2'},
        version=V)
    assert status == 201, port
    status, got, _ = api.request('GET', '/v1/portgroups/%s' % pg['uuid'],
                                 version=V)
    assert got['physical_network'] == 'physnet2'
