"""GET /nodes/{node}/plan over the in-process API and conductor: the
steps of the work in progress with their states, what the running step
waits on, and the timing of the last run of each kind."""

import datetime

import pytest

from baremetal.api.controllers import node_plan
from baremetal.common import exception
from baremetal.conductor import task_manager

ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'},
         {'interface': 'bios', 'step': 'factory_reset'}]


def _plan(api, ident, **kw):
    status, body, _ = api.request('GET', '/nodes/%s/plan' % ident, **kw)
    assert status == 200, body
    return body


def _manageable(api, **fields):
    n = api.create_node(**fields)
    api.provision(n['uuid'], 'manage')
    return api.wait_for(n['uuid'], 'manageable')


def test_unknown_node_is_404_like_the_node_api(api):
    status, body, _ = api.request('GET', '/nodes/nope/plan')
    v1_status, v1_body, _ = api.request('GET', '/v1/nodes/nope')
    assert (status, v1_status) == (404, 404)
    assert body == v1_body
    uuid = '1be26c0b-03f2-4d2d-ae87-c02d7f33c123'
    assert api.request('GET', '/nodes/%s/plan' % uuid)[0] == 404


def test_a_node_at_rest_has_no_work_and_is_found_by_name(api):
    n = api.create_node(name='rack1-node7')
    body = _plan(api, 'rack1-node7', version='1.1')
    assert body['uuid'] == n['uuid']
    assert (body['work'], body['steps_of'], body['steps'],
            body['waiting'], body['timings']) == ('none', None, [], None,
                                                  {})
    assert body['provision_state'] == 'enroll'
    assert body['links'][0]['href'].endswith('/nodes/%s/plan' % n['uuid'])


def test_the_v1_node_paths_without_prefix_still_reach_v1(api):
    n = api.create_node()
    status, body, _ = api.request('GET', '/nodes/%s' % n['uuid'])
    assert status == 200 and body['uuid'] == n['uuid']
    # a method the root route does not serve goes to v1, as before
    status, _, _ = api.request('POST', '/nodes/%s/plan' % n['uuid'])
    assert status in (404, 405)


def test_manual_cleaning_waiting_on_an_async_step(api):
    n = _manageable(api, driver_info={
        'fake_async_steps': ['bios.factory_reset']})
    api.provision(n['uuid'], 'clean', clean_steps=ERASE)
    api.wait_for(n['uuid'], 'clean wait')
    body = _plan(api, n['uuid'])
    assert (body['work'], body['steps_of']) == ('clean', 'clean')
    assert [(s['step'], s['state']) for s in body['steps']] == [
        ('erase_devices_metadata', 'done'), ('factory_reset', 'running')]
    done, running = body['steps']
    assert done['started_at'] <= done['finished_at']
    assert running['waiting_on'] == 'bmc'
    assert running['since'] >= done['finished_at']
    assert body['waiting']['on'] == 'bmc' and body['waiting']['step'] == 1
    timing = body['timings']['clean']
    assert timing['outcome'] == 'running'
    assert [s['outcome'] for s in timing['steps']] == ['done', 'running']
    # the BMC reports the step done: cleaning ends, the timings stay
    with task_manager.acquire(api.conductor, n['uuid'], shared=False) as t:
        t.resume_steps()
    api.wait_for(n['uuid'], 'manageable')
    body = _plan(api, n['uuid'])
    assert body['work'] == 'none' and body['steps'] == []
    timing = body['timings']['clean']
    assert timing['outcome'] == 'done' and timing['finished_at']
    assert [(s['step'], s['outcome']) for s in timing['steps']] == [
        ('erase_devices_metadata', 'done'), ('factory_reset', 'done')]


def test_a_failed_step_is_shown_failed(api):
    n = _manageable(api, driver_info={
        'fake_fail_steps': ['bios.factory_reset']})
    api.provision(n['uuid'], 'clean', clean_steps=ERASE)
    api.wait_for(n['uuid'], 'clean failed')
    body = _plan(api, n['uuid'])
    assert (body['work'], body['steps_of']) == ('none', 'clean')
    assert [s['state'] for s in body['steps']] == ['done', 'failed']
    assert 'fake failure' in body['last_error']
    assert body['timings']['clean']['outcome'] == 'failed'
    assert body['waiting'] is None


def test_deploy_timings_have_one_entry_per_step(api):
    n = api.make_available()
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'active')
    body = _plan(api, n['uuid'])
    deploy = body['timings']['deploy']
    assert deploy['outcome'] == 'done'
    steps = [s['step'] for s in deploy['steps']]
    assert steps and len(steps) == len(set(steps))
    assert all(s['outcome'] == 'done' and s['seconds'] is not None
               for s in deploy['steps'])
    assert deploy['preparation_seconds'] is not None
    # automated cleaning of make_available is kept apart
    assert body['timings']['clean']['outcome'] == 'done'


def test_a_project_that_cannot_see_the_node_gets_404(api):
    n = api.create_node(owner='project-a')
    # the noauth harness is admin: a project caller's request
    from baremetal.api import auth
    from baremetal.api import request as api_request
    ctx = auth.RequestContext(roles=['member', 'reader'],
                              project_id='project-b')
    req = api_request.Request.__new__(api_request.Request)
    req.context = ctx
    req.pending_rules = []      # rules waiting for the row (policy.py)
    with pytest.raises(exception.NodeNotFound):
        node_plan.get_plan(req, n['uuid'])
    ctx = auth.RequestContext(roles=['member', 'reader'],
                              project_id='project-a')
    req.context = ctx
    req.host_url = 'http://x'
    assert node_plan.get_plan(req, n['uuid'])['uuid'] == n['uuid']


def _row(**fields):
    row = {'uuid': 'u', 'name': None, 'provision_state': 'clean wait',
           'target_provision_state': 'available',
           'provision_updated_at': datetime.datetime(2026, 1, 1, 0, 0, 0),
           'power_state': 'power on', 'target_power_state': None,
           'maintenance': False, 'last_error': None,
           'driver_internal_info': {}}
    row.update(fields)
    return row


NOW = datetime.datetime(2026, 1, 1, 0, 0, 30, tzinfo=datetime.UTC
                        ).timestamp()
STEPS = [{'interface': 'deploy', 'step': 'erase_devices', 'priority': 10,
          'args': {}}]


@pytest.mark.parametrize('info,fields,expected', [
    ({'clean_steps': [], 'clean_step_index': -1}, {}, 'callback'),
    ({'clean_steps': STEPS, 'clean_step_index': 0,
      'agent_url': 'http://a', 'agent_command': {'id': '1'}}, {}, 'agent'),
    ({'clean_steps': STEPS, 'clean_step_index': 0}, {}, 'callback'),
    ({'clean_steps': STEPS, 'clean_step_index': 0},
     {'provision_state': 'cleaning', 'target_power_state': 'power off'},
     'bmc'),
    ({'clean_steps': STEPS, 'clean_step_index': 0},
     {'provision_state': 'cleaning'}, 'conductor'),
    ({'clean_steps': STEPS, 'clean_step_index': 0},
     {'provision_state': 'clean hold'}, 'operator'),
])
def test_what_a_node_waits_on(info, fields, expected):
    body = node_plan.build(_row(driver_internal_info=info, **fields), NOW)
    assert body['work'] == 'clean'
    assert body['waiting']['on'] == expected
    assert body['waiting']['reason'] == node_plan.REASONS[expected]
    if fields.get('provision_state', 'clean wait') == 'clean wait':
        # waiting since the node entered the wait state
        assert body['waiting']['seconds'] == 30


def test_the_root_route_leaves_nothing_else_at_root(api):
    status, _, _ = api.request('GET', '/nodes/x/plan/more')
    assert status == 404


def test_the_plan_is_outside_v1_only(api):
    n = api.create_node()
    assert api.request('GET', '/nodes/%s/plan' % n['uuid'])[0] == 200
    assert api.request('GET', '/nodes/%s/plan/' % n['uuid'])[0] == 200
    assert api.request('GET', '/v1/nodes/%s/plan' % n['uuid'])[0] == 404
