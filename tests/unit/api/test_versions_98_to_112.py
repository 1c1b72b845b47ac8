"""API versions 1.98, 1.104, 1.107 to 1.110 and 1.112: each feature at
its version, and the version gate on both sides of it."""

import re

from baremetal.conductor import periodics
from baremetal.conductor import step_runner
from baremetal.conductor import task_manager
from tests import harness

V = '1.112'


def _err(body) -> str:
    return harness.error_message(body)


def _prov(api, uuid, version=V, **body):
    return api.request('PUT', '/v1/nodes/%s/states/provision' % uuid,
                       body, version=version)


def _patch(api, path, ops, version=V):
    return api.request('PATCH', path, ops, version=version)


def _get(api, uuid, version=V) -> dict:
    status, body, _ = api.request('GET', '/v1/nodes/%s' % uuid,
                                  version=version)
    assert status == 200, body
    return body


def _active(api, **fields) -> str:
    u = api.make_available(**fields)['uuid']
    api.provision(u, 'active')
    api.wait_for(u, 'active')
    return u


_APPLY = {'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': [{'name': 'BootMode', 'value': 'Uefi'}]}}
_RESET = {'interface': 'bios', 'step': 'factory_reset', 'args': {},
          'order': 1}


# ------------------------------------------ 1.98 JSON pointer escapes
def test_patch_path_escapes_from_1_98(api):
    u = api.create_node()['uuid']
    path = '/v1/nodes/%s' % u
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/extra/a~1b', 'value': 1},
        {'op': 'add', 'path': '/extra/c~0d', 'value': 2}], version='1.98')
    assert status == 200, body
    assert body['extra'] == {'a/b': 1, 'c~d': 2}
    status, body, _ = _patch(api, path, [
        {'op': 'remove', 'path': '/extra/a~1b'}], version='1.98')
    assert status == 200 and body['extra'] == {'c~d': 2}
    # a "~" that is no escape
    status, body, _ = _patch(api, path, [
        {'op': 'add', 'path': '/extra/x~2', 'value': 1}], version='1.98')
    assert status == 400 and "'~' must be followed" in _err(body)


def test_patch_path_escapes_refused_before_1_98(api):
    u = api.create_node()['uuid']
    for p in ('/extra/a~1b', '/extra/a~0b'):
        status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
            {'op': 'add', 'path': p, 'value': 1}], version='1.97')
        assert status == 400, body
        assert '1.98' in _err(body)
    assert _get(api, u)['extra'] == {}
    # other resources alike
    status, body, _ = api.request('POST', '/v1/chassis', {}, version=V)
    c = body['uuid']
    status, body, _ = _patch(api, '/v1/chassis/%s' % c, [
        {'op': 'add', 'path': '/extra/a~1b', 'value': 1}], version='1.97')
    assert status == 400
    status, body, _ = _patch(api, '/v1/chassis/%s' % c, [
        {'op': 'add', 'path': '/extra/a~1b', 'value': 1}], version='1.98')
    assert status == 200 and body['extra'] == {'a/b': 1}


# ------------------------------------------------ 1.104 instance_name
def test_instance_name_shown_set_and_filtered_from_1_104(api):
    u = api.create_node()['uuid']
    assert 'instance_name' not in _get(api, u, '1.103')
    assert _get(api, u, '1.104')['instance_name'] is None
    status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'add', 'path': '/instance_name', 'value': 'vm-1'}],
        version='1.104')
    assert status == 200 and body['instance_name'] == 'vm-1'
    other = api.create_node()['uuid']
    status, body, _ = api.request(
        'GET', '/v1/nodes?instance_name=vm-1&fields=uuid,instance_name',
        version='1.104')
    assert status == 200
    assert body['nodes'] == [{'uuid': u, 'instance_name': 'vm-1',
                              'links': body['nodes'][0]['links']}]
    assert other not in [n['uuid'] for n in body['nodes']]
    status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'remove', 'path': '/instance_name'}], version='1.104')
    assert status == 200 and body['instance_name'] is None
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'instance_name': 'vm-2'},
        version='1.104')
    assert status == 201 and body['instance_name'] == 'vm-2'
    status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'add', 'path': '/instance_name', 'value': ''}])
    assert status == 400 and _err(body) == (
        "Schema error for patch: '' should be non-empty")


def test_instance_name_refused_before_1_104(api):
    u = api.create_node()['uuid']
    status, _, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'add', 'path': '/instance_name', 'value': 'vm-1'}],
        version='1.103')
    assert status == 406
    status, _, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'instance_name': 'vm-2'},
        version='1.103')
    assert status == 406
    status, _, _ = api.request('GET', '/v1/nodes?instance_name=vm-1',
                               version='1.103')
    assert status == 406


def test_instance_name_follows_display_name_and_goes_on_tear_down(api):
    u = api.make_available()['uuid']
    status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'add', 'path': '/instance_info',
         'value': {'display_name': 'from-nova'}}])
    assert status == 200 and body['instance_name'] == 'from-nova'
    # a name set explicitly stays
    _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'replace', 'path': '/instance_name', 'value': 'mine'}])
    status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
        {'op': 'replace', 'path': '/instance_info',
         'value': {'display_name': 'other'}}])
    assert body['instance_name'] == 'mine'
    api.provision(u, 'active')
    api.wait_for(u, 'active')
    assert _get(api, u)['instance_name'] == 'mine'
    api.provision(u, 'deleted')
    n = api.wait_for(u, 'available')
    assert api.request('GET', '/v1/nodes/%s' % u, version=V)[1][
        'instance_name'] is None
    assert n['instance_info'] == {}


# ---------------------------------------------------- 1.107 request ids
def test_every_response_names_its_request(api):
    _ID = re.compile(r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-'
                     r'[0-9a-f]{4}-[0-9a-f]{12}$')
    seen = set()
    for path, version, want in (('/v1/nodes', '1.106', 200),
                                ('/v1/nodes', '1.107', 200),
                                ('/v1/nodes/nope', V, 404),
                                ('/v1/nodes', '1.999', 406),
                                ('/', None, 200)):
        status, _, headers = api.request('GET', path, version=version)
        assert status == want
        rid = headers['X-OpenStack-Request-Id']
        assert _ID.match(rid), rid
        assert headers['OpenStack-Request-Id'] == rid
        seen.add(rid)
    assert len(seen) == 5
    # an incoming id is no answer's id (as Ironic: it is the global id)
    mine = 'req-11111111-2222-3333-4444-555555555555'
    _, _, headers = api.request('GET', '/v1/nodes', version=V,
                                headers={'X-OpenStack-Request-Id': mine})
    assert headers['X-OpenStack-Request-Id'] != mine


# ---------------------------------- 1.108 servicing without the ramdisk
def test_service_with_disable_ramdisk_from_1_108(api):
    u = _active(api)
    status, body, _ = _prov(api, u, version='1.107', target='service',
                            service_steps=[_APPLY], disable_ramdisk=True)
    assert status == 406 and '1.108' in _err(body)
    assert api.node(u)['provision_state'] == 'active'
    status, body, _ = _prov(api, u, version='1.108', target='service',
                            service_steps=[_APPLY], disable_ramdisk=True)
    assert status == 202, body
    n = api.wait_for(u, 'active')
    assert n['last_error'] is None
    bios = api.request('GET', '/v1/nodes/%s/bios' % u, version=V)[1]
    assert {s['name']: s['value'] for s in bios['bios']} == {
        'BootMode': 'Uefi'}
    assert 'service_disable_ramdisk' not in n['driver_internal_info']
    # not a clean/service argument elsewhere
    status, body, _ = _prov(api, u, target='rebuild', disable_ramdisk=True)
    assert status == 400


def test_service_runbook_disable_ramdisk_from_1_108(api):
    u = _active(api)
    api.request('PUT', '/v1/nodes/%s/traits/CUSTOM_SVC' % u, version=V)
    status, rb, _ = api.request('POST', '/v1/runbooks', {
        'name': 'CUSTOM_SVC', 'steps': [_RESET], 'disable_ramdisk': True},
        version='1.107')
    assert status == 201, rb
    api.request('PUT', '/v1/runbooks/CUSTOM_SVC/traits/CUSTOM_SVC',
                version=V)
    status, body, _ = _prov(api, u, version='1.107', target='service',
                            runbook=rb['uuid'])
    assert status == 406 and '1.108' in _err(body)
    assert api.node(u)['provision_state'] == 'active'
    status, body, _ = _prov(api, u, version='1.108', target='service',
                            runbook=rb['uuid'])
    assert status == 202, body
    assert api.wait_for(u, 'active')['last_error'] is None
    # a runbook without disable_ramdisk services at any version
    _patch(api, '/v1/runbooks/CUSTOM_SVC', [
        {'op': 'replace', 'path': '/disable_ramdisk', 'value': False}])
    status, body, _ = _prov(api, u, version='1.107', target='service',
                            runbook=rb['uuid'])
    assert status == 202, body
    assert api.wait_for(u, 'active')['last_error'] is None


# ------------------------------------------------------- 1.109 health
def test_health_field_read_only_from_1_109(api):
    u = api.create_node()['uuid']
    assert 'health' not in _get(api, u, '1.108')
    assert _get(api, u, '1.109')['health'] is None
    for version in ('1.108', '1.109'):
        status, body, _ = _patch(api, '/v1/nodes/%s' % u, [
            {'op': 'add', 'path': '/health', 'value': 'OK'}],
            version=version)
        assert status == 400 and 'health' in _err(body)
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'health': 'OK'}, version=V)
    assert status == 400


def test_power_sync_records_health_changes(api):
    n = api.make_available(driver_info={'fake_health': 'Warning'})
    other = api.make_available()     # reports no health: left alone
    periodics.sync_power_states(api.conductor)
    assert _get(api, n['uuid'])['health'] == 'Warning'
    assert _get(api, other['uuid'])['health'] is None
    _patch(api, '/v1/nodes/%s' % n['uuid'], [
        {'op': 'replace', 'path': '/driver_info/fake_health',
         'value': 'OK'}])
    periodics.sync_power_states(api.conductor)
    assert _get(api, n['uuid'])['health'] == 'OK'
    events = api.request('GET', '/v1/nodes/%s/history?detail=true'
                         % n['uuid'], version=V)[1]['history']
    changes = [e['event'] for e in events if e['event_type'] ==
               'monitoring']
    assert changes == [
        "Node health status changed: health='Warning' (previously "
        "'None')",
        "Node health status changed: health='OK' (previously "
        "'Warning')"]
    assert {e['severity'] for e in events
            if e['event_type'] == 'monitoring'} == {'INFO'}


def test_verification_records_health_before_any_sync(api):
    status, n, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware',
        'driver_info': {'fake_health': 'Critical'}}, version=V)
    assert status == 201, n
    assert n['health'] is None
    status, body, _ = _prov(api, n['uuid'], target='manage')
    assert status == 202, body
    api.wait_for(n['uuid'], 'manageable')
    assert _get(api, n['uuid'])['health'] == 'Critical'
    periodics.sync_power_states(api.conductor)      # nothing new to say
    events = api.request('GET', '/v1/nodes/%s/history?detail=true'
                         % n['uuid'], version=V)[1]['history']
    assert [e['event'] for e in events
            if e['event_type'] == 'monitoring'] == [
        "Node health status changed: health='Critical' (previously "
        "'None')"]


def test_health_monitoring_can_be_turned_off(api):
    api.conductor.conf.set_override('enable_health_monitoring', False,
                                    group='conductor')
    try:
        n = api.make_available(driver_info={'fake_health': 'Critical'})
        assert _get(api, n['uuid'])['health'] is None   # verified
        periodics.sync_power_states(api.conductor)
        assert _get(api, n['uuid'])['health'] is None
    finally:
        api.conductor.conf.clear_override('enable_health_monitoring',
                                          group='conductor')


# -------------------------------------------- 1.110 abort in DEPLOYWAIT
_WAIT = {'interface': 'deploy', 'step': 'wait', 'priority': 90,
         'args': {}}


def _deploy_waiting(api) -> str:
    u = api.make_available()['uuid']
    status, body, _ = _prov(api, u, target='active', deploy_steps=[_WAIT])
    assert status == 202, body
    api.wait_for(u, 'wait call-back')
    return u


def test_abort_in_deploywait_from_1_110(api):
    u = _deploy_waiting(api)
    status, body, _ = _prov(api, u, version='1.109', target='abort')
    assert status == 406 and '1.110' in _err(body)
    assert api.node(u)['provision_state'] == 'wait call-back'
    status, body, _ = _prov(api, u, version='1.110', target='abort')
    assert status == 202, body
    n = api.wait_for(u, 'deploy failed')
    assert n['last_error'] == (
        'By request, the deploy operation was aborted during or after '
        'the completion of step "deploy.wait"')
    assert n['deploy_step'] == {}
    assert 'deploy_steps' not in n['driver_internal_info']
    # and from deploy failed the node can be torn down as usual
    api.provision(u, 'deleted')
    api.wait_for(u, 'available')


def test_abort_waits_for_a_step_that_cannot_be_stopped(api):
    u = _deploy_waiting(api)
    with task_manager.acquire(api.conductor, u, shared=False,
                              purpose='test') as task:
        # the step the node waits on: not abortable
        info = task.node.driver_internal_info
        plan = info['deploy_steps']
        plan[info['deploy_step_index']]['abortable'] = False
        task.node.deploy_step = dict(task.node.deploy_step,
                                     abortable=False)
    status, body, _ = _prov(api, u, target='abort')
    assert status == 202, body
    n = api.wait_for(u, 'wait call-back')
    assert n['deploy_step']['abort_after'] is True
    # the step finishes: the deployment stops there
    with task_manager.acquire(api.conductor, u, shared=False,
                              purpose='test') as task:
        step_runner.resume(task, api.conductor.wait_kind(
            task.node.provision_state))
    n = api.wait_for(u, 'deploy failed')
    assert n['last_error'].startswith('By request, the deploy operation '
                                      'was aborted')


# ------------------------------------------------ 1.112 runbook traits
def _runbook(api, version=V, **body):
    body.setdefault('steps', [_RESET])
    return api.request('POST', '/v1/runbooks', body, version=version)


def test_runbook_traits_and_description_hidden_before_1_112(api):
    status, rb, _ = _runbook(api, version='1.111', name='CUSTOM_OLD')
    assert status == 201, rb
    assert 'traits' not in rb and 'description' not in rb
    status, body, _ = _runbook(api, version='1.111', name='CUSTOM_X',
                               description='d')
    assert status == 400
    status, body, _ = _runbook(api, version='1.111', name='not-a-trait')
    assert status == 400
    status, body, _ = _patch(api, '/v1/runbooks/CUSTOM_OLD', [
        {'op': 'add', 'path': '/description', 'value': 'd'}],
        version='1.111')
    assert status == 400 and 'Cannot patch /description' in _err(body)
    for method in ('GET', 'PUT', 'DELETE'):
        status, _, _ = api.request(method, '/v1/runbooks/CUSTOM_OLD/traits',
                                   version='1.111')
        assert status in (404, 405)
    status, _, _ = api.request(
        'PUT', '/v1/runbooks/CUSTOM_OLD/traits/CUSTOM_A', version='1.111')
    assert status in (404, 405)
    # made before 1.112 through the API: no traits (as Ironic)
    status, body, _ = api.request('GET', '/v1/runbooks/CUSTOM_OLD',
                                  version=V)
    assert body['traits'] == [] and body['description'] is None


def test_runbook_description_and_logical_name_from_1_112(api):
    status, rb, _ = _runbook(api, name='enable-hyperthreading',
                             description='Enable logical processors')
    assert status == 201, rb
    assert rb['traits'] == []
    assert rb['description'] == 'Enable logical processors'
    status, body, _ = api.request(
        'GET', '/v1/runbooks/enable-hyperthreading', version=V)
    assert status == 200 and body['uuid'] == rb['uuid']
    status, body, _ = _patch(api, '/v1/runbooks/%s' % rb['uuid'], [
        {'op': 'replace', 'path': '/description', 'value': 'Updated'}])
    assert status == 200 and body['description'] == 'Updated'
    for bad in ({'name': 'has space'}, {'name': 'x' * 256},
                {'name': 'CUSTOM_D', 'description': 'x' * 256},
                {'name': 'CUSTOM_T', 'traits': ['CUSTOM_A']}):
        status, body, _ = _runbook(api, **bad)
        assert status == 400, bad
    status, body, _ = _patch(api, '/v1/runbooks/%s' % rb['uuid'], [
        {'op': 'add', 'path': '/traits', 'value': ['CUSTOM_A']}])
    assert status == 400 and 'Cannot patch /traits' in _err(body)
    # a PATCH takes a logical name at any version (as Ironic)
    status, body, _ = _patch(api, '/v1/runbooks/%s' % rb['uuid'], [
        {'op': 'replace', 'path': '/name', 'value': 'ht-on'}],
        version='1.92')
    assert status == 200 and body['name'] == 'ht-on'


def test_runbook_traits_endpoints(api):
    status, rb, _ = _runbook(api, name='rb')
    base = '/v1/runbooks/rb/traits'
    status, body, headers = api.request('PUT', base + '/CUSTOM_A',
                                        version=V)
    assert status == 204
    assert headers['Location'].endswith('/v1/runbooks/rb/traits/CUSTOM_A')
    api.request('PUT', base + '/CUSTOM_A', version=V)     # twice: once
    assert api.request('GET', base, version=V)[1] == {
        'traits': ['CUSTOM_A']}
    status, body, _ = api.request('PUT', base, {
        'traits': ['CUSTOM_C', 'HW_CPU_X86_AVX2', 'CUSTOM_C']}, version=V)
    assert status == 204
    assert api.request('GET', '/v1/runbooks/rb', version=V)[1][
        'traits'] == ['CUSTOM_C', 'HW_CPU_X86_AVX2']
    status, _, _ = api.request('DELETE', base + '/CUSTOM_C', version=V)
    assert status == 204
    # removing one it does not have does nothing
    status, _, _ = api.request('DELETE', base + '/CUSTOM_C', version=V)
    assert status == 204
    assert api.request('GET', base, version=V)[1] == {
        'traits': ['HW_CPU_X86_AVX2']}
    status, _, _ = api.request('DELETE', base, version=V)
    assert status == 204
    assert api.request('GET', base, version=V)[1] == {'traits': []}
    for method, path, body in (
            ('PUT', base + '/lowercase', None),
            ('PUT', base, {'traits': ['bad trait']}),
            ('PUT', base, {'traits': 'CUSTOM_A'}),
            ('PUT', base, {}),
            ('PUT', base, {'traits': [], 'other': 1}),
            ('PUT', base + '/CUSTOM_A', {'traits': ['CUSTOM_B']})):
        status, resp, _ = api.request(method, path, body, version=V)
        assert status == 400, (method, path, body, resp)
    assert api.request('GET', '/v1/runbooks/nope/traits',
                       version=V)[0] == 404
    # deleting the runbook deletes its traits
    api.request('PUT', base + '/CUSTOM_A', version=V)
    assert api.request('DELETE', '/v1/runbooks/rb', version=V)[0] == 204


def test_runbook_applies_to_nodes_with_one_of_its_traits(api):
    n = api.create_node()['uuid']
    api.provision(n, 'manage')
    api.wait_for(n, 'manageable')
    api.request('PUT', '/v1/nodes/%s/traits/CUSTOM_B' % n, version=V)
    status, rb, _ = _runbook(api, name='CUSTOM_RB')
    # no traits: refused from 1.112
    status, body, _ = _prov(api, n, target='clean', runbook='CUSTOM_RB')
    assert status == 400 and 'no traits' in _err(body)
    api.request('PUT', '/v1/runbooks/CUSTOM_RB/traits',
                {'traits': ['CUSTOM_A']}, version=V)
    status, body, _ = _prov(api, n, target='clean', runbook='CUSTOM_RB')
    assert status == 400 and 'CUSTOM_A' in _err(body)
    api.request('PUT', '/v1/runbooks/CUSTOM_RB/traits/CUSTOM_B', version=V)
    status, body, _ = _prov(api, n, target='clean', runbook='CUSTOM_RB')
    assert status == 202, body
    assert api.wait_for(n, 'manageable')['last_error'] is None
    # before 1.112 the name still decides: the node lacks CUSTOM_RB
    status, body, _ = _prov(api, n, version='1.111', target='clean',
                            runbook='CUSTOM_RB')
    assert status == 400 and 'CUSTOM_RB' in _err(body)
    api.request('PUT', '/v1/nodes/%s/traits/CUSTOM_RB' % n, version=V)
    status, body, _ = _prov(api, n, version='1.111', target='clean',
                            runbook='CUSTOM_RB')
    assert status == 202, body
    api.wait_for(n, 'manageable')
