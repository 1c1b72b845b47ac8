"""API versions 1.113 to 1.115: a history event's project (1.113), a
firmware component's vendor, model and serial number (1.114), and a
history event's state, target and duration (1.115); each at its version
and hidden below it."""

from oslo_context import context as oslo_context

from baremetal.db import nodes as db_nodes
from baremetal.objects import history
from tests import harness

_LEGACY = {'uuid', 'created_at', 'severity', 'event', 'event_type',
           'conductor', 'user', 'links'}


def _failed_cleaning(api) -> str:
    n = api.create_node(driver_info={
        'fake_fail_steps': ['bios.factory_reset']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    api.wait_for(n['uuid'], 'clean failed')
    return n['uuid']


def test_history_fields_at_their_versions(api):
    u = _failed_cleaning(api)
    path = '/v1/nodes/%s/history' % u

    def detail(version):
        status, body, _ = api.request('GET', path + '?detail=true',
                                      version=version)
        assert status == 200, body
        return body['history'][0]

    assert set(detail('1.112')) == _LEGACY
    assert set(detail('1.113')) == _LEGACY | {'project'}
    event = detail('1.115')
    assert set(event) == _LEGACY | {'project', 'state',
                                    'target_provision_state',
                                    'duration_seconds'}
    # the error happened while cleaning towards manageable
    assert event['state'] == 'cleaning'
    assert event['target_provision_state'] == 'manageable'
    assert isinstance(event['duration_seconds'], int)
    assert event['duration_seconds'] >= 0
    one = api.request('GET', '%s/%s' % (path, event['uuid']),
                      version='1.114')[1]
    assert set(one) == _LEGACY | {'project'}
    # the short list never has them
    short = api.request('GET', path, version='1.115')[1]['history'][0]
    assert set(short) == {'uuid', 'created_at', 'severity', 'event',
                          'links'}


def test_history_names_the_user_and_project_of_the_request(api):
    u = api.create_node()['uuid']
    row = db_nodes.get_node(u)
    oslo_context.RequestContext(user_id='u-1', project_id='p-1')
    try:
        history.record_error(row, 'something broke', 'test-conductor')
    finally:
        oslo_context.RequestContext(user_id=None, project_id=None)
    event = api.request('GET', '/v1/nodes/%s/history?detail=true' % u,
                        version='1.115')[1]['history'][0]
    assert (event['user'], event['project']) == ('u-1', 'p-1')
    assert event['state'] == 'enroll'


def test_history_list_cuts_long_events(api):
    u = api.create_node()['uuid']
    history.record_error(db_nodes.get_node(u), 'x' * 300)
    path = '/v1/nodes/%s/history' % u
    short = api.request('GET', path, version='1.115')[1]['history'][0]
    assert short['event'] == 'x' * 251 + '...'
    full = api.request('GET', path + '?detail=true',
                       version='1.115')[1]['history'][0]
    assert full['event'] == 'x' * 300


def test_firmware_identity_from_1_114(api):
    status, n, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'firmware_interface': 'fake'},
        version='1.114')
    assert status == 201, n
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    path = '/v1/nodes/%s/firmware' % n['uuid']
    old = api.request('GET', path, version='1.113')[1]['firmware']
    assert {c['component'] for c in old} == {'bios', 'bmc'}
    assert not {'vendor', 'model', 'serial_number'} & set(old[0])
    new = {c['component']: c for c in api.request(
        'GET', path, version='1.114')[1]['firmware']}
    assert new['bmc']['vendor'] == 'fake-hardware'
    assert new['bmc']['model'] == 'fake-bmc'
    assert new['bmc']['serial_number'] == 'bmc-%s' % n['uuid'][:8]
    # ?fields= names them from 1.114; before, a 400 saying so
    status, body, _ = api.request('GET', path + '?fields=component,vendor',
                                  version='1.113')
    assert status == 400
    assert '1.114' in harness.error_message(body)
    status, body, _ = api.request('GET', path + '?fields=component,vendor',
                                  version='1.114')
    assert status == 200, body
    assert set(body['firmware'][0]) == {'component', 'vendor',
                                        'created_at', 'updated_at'}
    status, body, _ = api.request('GET', path + '?fields=bogus',
                                  version='1.114')
    assert status == 400
    status, body, _ = api.request(
        'GET', path + '?fields=component&detail=true', version='1.114')
    assert status == 400
