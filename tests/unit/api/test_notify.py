"""The API's notifications (api/notify.py) through the in-process
harness with a recording notifier: start/end around a write, error
(at ERROR) when the write fails, nothing when validation refuses the
request first; with notifications off, nothing is built at all."""

from baremetal.api import notify
from baremetal.common import notifications
from baremetal.conductor import task_manager
from tests.notify_recorder import notified  # noqa: F401 (fixture)


def _data(msg):
    return msg['payload']['ironic_object.data']


def test_off_is_one_shared_do_nothing_object(api):
    assert not notifications.ON
    with notify.crud(None, 'node', 'update', {'uuid': 'x'}) as n:
        assert n.done(5) == 5
    assert notify.crud(None, 'port', 'create', {}) is notify._OFF


def test_node_create_start_and_end_name_one_node(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node(name='n1')
    assert rec.events() == ['baremetal.node.create.start',
                            'baremetal.node.create.end']
    start, end = rec.messages()
    assert _data(start)['uuid'] == _data(end)['uuid'] == n['uuid']
    assert _data(start)['created_at'] is None
    assert _data(end)['created_at'].endswith('Z')
    assert start['publisher_id'].startswith('ironic-api.')
    assert start['payload']['ironic_object.name'] == 'NodeCRUDPayload'


def test_node_update_and_traits(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    rec.clear()
    st, _, _ = h.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/extra/a', 'value': 1}])
    assert st == 200
    st, _, _ = h.request('PUT', '/v1/nodes/%s/traits' % n['uuid'],
                         {'traits': ['CUSTOM_B', 'CUSTOM_A']},
                         version='1.37')
    assert st == 204
    assert rec.events() == ['baremetal.node.update.start',
                            'baremetal.node.update.end'] * 2
    patch_start, patch_end, tr_start, tr_end = rec.messages()
    assert _data(patch_start)['extra'] == {'a': 1}     # the change asked
    assert _data(patch_end)['updated_at'] is not None
    assert (_data(tr_start)['traits'], _data(tr_end)['traits']) == \
        ([], ['CUSTOM_A', 'CUSTOM_B'])


def test_a_failed_write_sends_error_and_leaves_the_node(notified):  # noqa: F811,E501
    h, rec = notified
    n = h.create_node()
    rec.clear()
    with task_manager.acquire(h.conductor, n['uuid'], shared=False):
        st, _, _ = h.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
            {'op': 'add', 'path': '/extra/a', 'value': 1}])
    assert st == 409
    assert rec.events() == ['baremetal.node.update.start',
                            'baremetal.node.update.error']
    assert [m['priority'] for m in rec.messages()] == ['info', 'error']
    assert h.node(n['uuid'])['extra'] == {}


def test_refused_before_the_write_sends_nothing(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    rec.clear()
    st, _, _ = h.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/name', 'value': 'bad name!'}])
    assert st == 400
    assert rec.events() == []


def test_delete_ends_with_what_it_started_with(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    h.request('PUT', '/v1/nodes/%s/traits/CUSTOM_X' % n['uuid'],
              version='1.37')
    rec.clear()
    st, _, _ = h.request('DELETE', '/v1/nodes/%s' % n['uuid'])
    assert st == 204
    start, end = rec.messages()
    assert end['event_type'] == 'baremetal.node.delete.end'
    assert _data(start) == _data(end)
    assert _data(end)['traits'] == ['CUSTOM_X']


def test_maintenance_set(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    rec.clear()
    st, _, _ = h.request('PUT', '/v1/nodes/%s/maintenance' % n['uuid'],
                         {'reason': 'disk'})
    assert st == 202
    assert rec.events() == ['baremetal.node.maintenance_set.start',
                            'baremetal.node.maintenance_set.end']
    end = rec.messages()[1]
    assert end['payload']['ironic_object.name'] == 'NodePayload'
    assert (_data(end)['maintenance'],
            _data(end)['maintenance_reason']) == (True, 'disk')
