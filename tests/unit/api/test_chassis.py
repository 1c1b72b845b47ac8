"""/v1/chassis through the in-process harness: create, PATCH and delete
(a chassis holding nodes is kept), and a node's chassis_uuid (found by
db.chassis, or a 404 naming it)."""

from tests import harness
from tests.notify_recorder import notified  # noqa: F401 (fixture)

UNKNOWN = '7a3e3d38-52c5-4c4e-9d1e-c0ffee000001'


def test_create_patch_delete(api):
    status, ch, _ = api.request('POST', '/v1/chassis',
                                {'description': 'rack 1'})
    assert status == 201 and ch['description'] == 'rack 1', ch
    status, got, _ = api.request('PATCH', '/v1/chassis/%s' % ch['uuid'], [
        {'op': 'replace', 'path': '/description', 'value': 'rack 2'}])
    assert (status, got['description']) == (200, 'rack 2'), got
    status, got, _ = api.request('GET', '/v1/chassis/%s' % ch['uuid'])
    assert got['description'] == 'rack 2'
    assert api.request('DELETE', '/v1/chassis/%s' % ch['uuid'])[0] == 204
    status, body, _ = api.request('GET', '/v1/chassis/%s' % ch['uuid'])
    assert status == 404
    assert harness.error_message(body) == \
        'Chassis %s could not be found.' % ch['uuid']


def test_a_chassis_with_nodes_is_not_deleted(api):
    ch = api.request('POST', '/v1/chassis', {})[1]
    node = api.create_node(chassis_uuid=ch['uuid'])
    status, body, _ = api.request('DELETE', '/v1/chassis/%s' % ch['uuid'])
    assert status == 409
    assert 'Chassis %s contains nodes.' % ch['uuid'] in \
        harness.error_message(body)
    status, got, _ = api.request('GET', '/v1/nodes/%s' % node['uuid'])
    assert got['chassis_uuid'] == ch['uuid']


def test_a_node_in_an_unknown_chassis_is_404(api):
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'chassis_uuid': UNKNOWN})
    assert status == 404, body
    assert harness.error_message(body) == \
        'Chassis %s could not be found.' % UNKNOWN


def test_a_node_notification_names_its_chassis(notified):  # noqa: F811
    h, rec = notified
    ch = h.request('POST', '/v1/chassis', {})[1]
    rec.clear()
    h.create_node(chassis_uuid=ch['uuid'])
    end = rec.messages()[-1]
    assert end['payload']['ironic_object.data']['chassis_uuid'] == \
        ch['uuid']
