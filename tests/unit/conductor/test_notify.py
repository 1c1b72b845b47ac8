"""The conductor's node notifications (conductor/notify.py), driven
through the API of the in-process harness with a recording notifier:
provision_set on each transition with Ironic's statuses, power_set,
power_state_corrected, console_set; publisher ids; failures of the bus
never reach the operation."""

import pytest

from baremetal.common import notifications
from baremetal.common import states
from baremetal.conductor import notify
from baremetal.conductor import task_manager
from tests.notify_recorder import notified  # noqa: F401 (fixture)

PS = 'baremetal.node.provision_set.'


@pytest.mark.parametrize('event,before,after,expected', [
    ('manage', 'enroll', 'verifying', ('start', 'info')),
    ('done', 'verifying', 'manageable', ('end', 'info')),
    ('wait', 'deploying', 'wait call-back', ('success', 'info')),
    ('provide', 'manageable', 'cleaning', ('start', 'info')),
    ('fail', 'deploying', 'deploy failed', ('error', 'error')),
    ('error', 'active', 'error', ('error', 'error')),
    ('adopt', 'manageable', 'adopting', ('start', 'info')),
    ('unrescue', 'rescue', 'unrescuing', ('start', 'info')),
])
def test_provision_status_follows_ironics_rule(event, before, after,
                                               expected):
    assert notify.provision_status(event, before, after) == expected


def _states(h, uuid, target, wait):
    h.provision(uuid, target)
    return h.wait_for(uuid, wait)


def test_a_nodes_lifecycle_in_provision_set_events(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    uuid = n['uuid']
    _states(h, uuid, 'manage', 'manageable')
    _states(h, uuid, 'provide', 'available')
    _states(h, uuid, 'active', 'active')
    _states(h, uuid, 'deleted', 'available')
    prov = [e for e in rec.events(uuid) if e.startswith(PS)]
    assert prov == [PS + s for s in (
        'start', 'end',                 # manage: verifying, manageable
        'start', 'end',                 # provide: cleaning, available
        'start', 'end',                 # deploy: deploying, active
        # undeploy: deleting, cleaning (unstable to unstable), available
        'start', 'success', 'end')]
    msg = rec.last(PS + 'start')
    assert msg['publisher_id'] == 'ironic-conductor.%s' % h.conductor.host
    assert msg['priority'] == 'info'
    data = msg['payload']['ironic_object.data']
    assert msg['payload']['ironic_object.name'] == \
        'NodeSetProvisionStatePayload'
    assert (data['previous_provision_state'], data['event'],
            data['provision_state']) == ('active', 'deleted', 'deleting')
    assert data['previous_target_provision_state'] is None
    end = rec.last(PS + 'end')['payload']['ironic_object.data']
    assert end['provision_state'] == 'available'


def test_a_failed_step_sends_provision_set_error(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node(driver_info={
        'fake_async_steps': ['bios.factory_reset']})
    _states(h, n['uuid'], 'manage', 'manageable')
    h.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    h.wait_for(n['uuid'], 'clean wait')
    with task_manager.acquire(h.conductor, n['uuid'], shared=False) as t:
        t.resume_steps('the BMC reported a failure')
    h.wait_for(n['uuid'], 'clean failed')
    msg = rec.last(PS + 'error')
    assert msg['priority'] == 'error'
    data = msg['payload']['ironic_object.data']
    assert data['provision_state'] == 'clean failed'
    assert data['event'] == 'fail'
    assert 'the BMC reported a failure' in data['last_error']


def test_power_set_start_and_end_with_to_power(notified):  # noqa: F811
    h, rec = notified
    n = h.make_available()
    status, _, _ = h.request('PUT', '/v1/nodes/%s/states/power'
                             % n['uuid'], {'target': 'power on'})
    assert status == 202
    h.conductor.workers.wait_idle(10)
    power = [e for e in rec.events(n['uuid']) if '.power_set.' in e]
    assert power == ['baremetal.node.power_set.start',
                     'baremetal.node.power_set.end']
    start = rec.last('baremetal.node.power_set.start')
    end = rec.last('baremetal.node.power_set.end')
    assert start['payload']['ironic_object.data']['to_power'] == \
        'power on'
    assert end['payload']['ironic_object.data']['power_state'] == \
        'power on'
    assert end['payload']['ironic_object.name'] == \
        'NodeSetPowerStatePayload'


def test_the_power_sync_sends_power_state_corrected(notified):  # noqa: F811
    h, rec = notified
    n = h.make_available()
    with task_manager.acquire(h.conductor, n['uuid'], shared=False) as t:
        t.node.power_state = None    # unknown: the fake BMC says off
    with task_manager.acquire(h.conductor, n['uuid']) as t:
        from baremetal.conductor import power
        power.sync_one(t, {}, 3)
    msg = rec.last('baremetal.node.power_state_corrected.success')
    data = msg['payload']['ironic_object.data']
    assert data['from_power'] is None
    assert data['power_state'] == states.POWER_OFF
    assert h.node(n['uuid'])['power_state'] == states.POWER_OFF
    assert msg['payload']['ironic_object.name'] == \
        'NodeCorrectedPowerStatePayload'


def test_console_set_start_and_end(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node(console_interface='fake')
    status, body, _ = h.request('PUT', '/v1/nodes/%s/states/console'
                                % n['uuid'], {'enabled': True})
    assert status == 202, body
    h.conductor.workers.wait_idle(10)
    assert [e for e in rec.events(n['uuid']) if '.console_set.' in e] == \
        ['baremetal.node.console_set.start',
         'baremetal.node.console_set.end']
    end = rec.last('baremetal.node.console_set.end')['payload']
    assert end['ironic_object.name'] == 'NodePayload'
    assert end['ironic_object.data']['console_enabled'] is True


def test_a_broken_bus_never_fails_the_operation(notified,  # noqa: F811
                                                caplog):
    h, rec = notified
    rec.fail = True
    n = h.create_node()
    _states(h, n['uuid'], 'manage', 'manageable')
    notifications.drain()
    assert rec.sent == []
    assert 'Could not send notification ' \
        'baremetal.node.provision_set.end' in caplog.text


def test_error_level_sends_only_error_events(notified):  # noqa: F811
    h, rec = notified
    from baremetal import conf
    conf.CONF.set_override('notification_level', 'error')
    notifications.setup(conf.CONF, notifier=rec)
    n = h.create_node()
    _states(h, n['uuid'], 'manage', 'manageable')
    assert rec.events() == []
    with task_manager.acquire(h.conductor, n['uuid'], shared=False):
        st, _, _ = h.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
            {'op': 'add', 'path': '/extra/a', 'value': 1}])
    assert st == 409
    assert [(m['event_type'], m['priority']) for m in rec.messages()] == \
        [('baremetal.node.update.error', 'error')]


PW = 'baremetal.node.power_set.'


def test_the_conductors_own_power_actions_send_power_set(
        notified):  # noqa: F811
    """Deploy powers the instance on and tear-down powers it off: each
    a power_set start and end, between the provision_set ones, as
    Ironic sends them for every power action."""
    h, rec = notified
    n = h.make_available()
    rec.clear()
    _states(h, n['uuid'], 'active', 'active')
    _states(h, n['uuid'], 'deleted', 'available')
    events = [e for e in rec.events(n['uuid'])
              if e.startswith((PS, PW))]
    assert events == [
        PS + 'start', PW + 'start', PW + 'end', PS + 'end',
        PS + 'start', PW + 'start', PW + 'end', PS + 'success',
        PS + 'end']
    ends = [m['payload']['ironic_object.data'] for m in rec.messages()
            if m['event_type'] == PW + 'end']
    assert [(d['to_power'], d['power_state']) for d in ends] == [
        (states.POWER_ON, states.POWER_ON),
        (states.POWER_OFF, states.POWER_OFF)]


def test_a_reboot_step_sends_power_set(notified):  # noqa: F811
    h, rec = notified
    n = h.create_node()
    _states(h, n['uuid'], 'manage', 'manageable')
    rec.clear()
    h.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'power', 'step': 'reboot'}])
    h.wait_for(n['uuid'], 'manageable')
    start = rec.last(PW + 'start')['payload']['ironic_object.data']
    end = rec.last(PW + 'end')['payload']['ironic_object.data']
    assert (start['to_power'], end['to_power'], end['power_state']) == (
        states.REBOOT, states.REBOOT, states.POWER_ON)


def test_a_failing_power_action_of_a_step_sends_power_set_error(
        notified, monkeypatch):  # noqa: F811
    from baremetal.common import exception
    from baremetal.drivers.modules import fake
    h, rec = notified
    n = h.create_node()
    _states(h, n['uuid'], 'manage', 'manageable')
    rec.clear()

    def broken(self, task, timeout=None):
        raise exception.BMCConnectionError(node=task.node.uuid,
                                           error='no answer')
    monkeypatch.setattr(fake.FakePower, 'reboot', broken)
    h.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'power', 'step': 'reboot'}])
    h.wait_for(n['uuid'], 'clean failed')
    events = [e for e in rec.events(n['uuid']) if e.startswith(PW)]
    assert events == [PW + 'start', PW + 'error']
    msg = rec.last(PW + 'error')
    assert msg['priority'] == 'error'
    assert 'no answer' in msg['payload']['ironic_object.data'][
        'last_error']
