"""Retirement rules at the API."""

from baremetal.db import reservations as db_reservations
from tests import harness

RETIRE = [{'op': 'replace', 'path': '/retired', 'value': True},
          {'op': 'add', 'path': '/retired_reason', 'value': 'EOL'}]


def test_retire_in_a_transient_state_when_not_locked(api):
    n = api.make_available(driver_info={
        'fake_async_steps': ['deploy.deploy']})
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'wait call-back')
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'],
                                  RETIRE)
    assert status == 200, body
    assert body['retired'] is True and body['retired_reason'] == 'EOL'


def test_retire_refused_while_locked(api):
    n = api.create_node()
    db_reservations.reserve_node('busy-conductor', n['uuid'])
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'],
                                  RETIRE)
    assert status == 409
    assert 'locked' in harness.error_message(body)


def test_retire_available_refused_with_hint(api):
    n = api.make_available()
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'],
                                  RETIRE)
    assert status == 409
    assert '"manageable" first' in harness.error_message(body)
    assert api.node(n['uuid'])['retired'] is False


def test_reason_without_retired_is_400(api):
    n = api.create_node()
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/retired_reason', 'value': 'x'}])
    assert status == 400


def test_unretire_clears_reason(api):
    n = api.create_node()
    api.request('PATCH', '/v1/nodes/%s' % n['uuid'], RETIRE)
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'remove', 'path': '/retired'}])
    assert status == 200, body
    assert body['retired'] is False and body['retired_reason'] is None


def test_fields_hidden_and_patch_406_before_1_61(api):
    n = api.create_node()
    _, body, _ = api.request('GET', '/v1/nodes/%s' % n['uuid'],
                             version='1.60')
    assert 'retired' not in body and 'retired_reason' not in body
    status, _, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], RETIRE,
                               version='1.60')
    assert status == 406
    status, _, _ = api.request('GET', '/v1/nodes?retired=true',
                               version='1.60')
    assert status == 406


def test_power_sync_leaves_retired_nodes_at_rest_alone(api, monkeypatch):
    """The retirement spec's "exclude retired nodes from periodic tasks":
    a retired node resting in manageable is not polled for its power
    state; a retired node with an instance and any unretired one are."""
    from baremetal.conductor import periodics
    from baremetal.drivers.modules import fake

    resting = api.create_node()['uuid']
    api.provision(resting, 'manage')
    api.wait_for(resting, 'manageable')
    plain = api.create_node()['uuid']
    api.provision(plain, 'manage')
    api.wait_for(plain, 'manageable')
    serving = api.make_available()['uuid']
    api.provision(serving, 'active')
    api.wait_for(serving, 'active')
    for uuid in (resting, serving):
        status, body, _ = api.request('PATCH', '/v1/nodes/%s' % uuid,
                                      RETIRE)
        assert status == 200, body
    read = []
    real = fake.FakePower.get_power_state
    monkeypatch.setattr(
        fake.FakePower, 'get_power_state',
        lambda self, task: read.append(task.node.uuid) or real(self, task))
    periodics.sync_power_states(api.conductor)
    assert sorted(read) == sorted([plain, serving])
    # the operator's own power request still works on the resting node
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/power' % resting, {'target': 'power on'})
    assert status == 202, body
