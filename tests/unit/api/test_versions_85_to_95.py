"""API versions 1.85 to 1.95: each feature at its version, and the
version gate on both sides of it."""

import pytest

from tests import harness

V = '1.95'


def _err(body) -> str:
    return harness.error_message(body)


def _prov(api, uuid, version=V, **body):
    return api.request('PUT', '/v1/nodes/%s/states/provision' % uuid,
                       body, version=version)


def _manageable(api, **fields):
    n = api.create_node(**fields)
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    return n['uuid']


def _active(api, **fields):
    u = _manageable(api, **fields)
    api.provision(u, 'provide')
    api.wait_for(u, 'available')
    api.provision(u, 'active')
    api.wait_for(u, 'active')
    return u


def _get(api, uuid) -> dict:
    return api.request('GET', '/v1/nodes/%s' % uuid, version=V)[1]


def _bios(api, uuid) -> dict:
    body = api.request('GET', '/v1/nodes/%s/bios' % uuid, version=V)[1]
    return {s['name']: s['value'] for s in body['bios']}


_APPLY = {'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': [{'name': 'BootMode', 'value': 'Uefi'}]}}


def test_max_version_is_advertised(api):
    # 1.115, Ironic 39's maximum (its 1.96 to 1.115 on top of these): one
    # above is 406
    status, body, headers = api.request('GET', '/', version=None)
    assert body['default_version']['version'] == '1.115'
    assert headers['X-OpenStack-Ironic-API-Maximum-Version'] == '1.115'
    status, _, _ = api.request('GET', '/v1/nodes', version='1.116')
    assert status == 406
    status, _, _ = api.request('GET', '/v1/nodes', version='1.115')
    assert status == 200


# ---------------------------------------------------------- 1.86 firmware
def test_firmware_interface_and_components(api):
    u = _manageable(api)
    before = api.request('GET', '/v1/nodes/%s' % u, version='1.85')[1]
    after = api.request('GET', '/v1/nodes/%s' % u, version='1.86')[1]
    assert 'firmware_interface' not in before
    assert after['firmware_interface'] == 'fake'
    assert api.request('GET', '/v1/nodes/%s/firmware' % u,
                       version='1.85')[0] == 404
    status, body, _ = api.request('GET', '/v1/nodes/%s/firmware' % u,
                                  version='1.86')
    assert status == 200, body
    comps = {c['component']: c for c in body['firmware']}
    assert set(comps) == {'bios', 'bmc'}
    assert comps['bmc']['initial_version'] == '1.0.0'
    assert comps['bmc']['last_version_flashed'] is None
    # an update through manual cleaning
    status, body, _ = _prov(api, u, target='clean', clean_steps=[{
        'interface': 'firmware', 'step': 'update',
        'args': {'settings': [{'component': 'bmc',
                               'url': 'http://127.0.0.1/bmc-2.1.bin'}]}}])
    assert status == 202, body
    assert api.wait_for(u, 'manageable')['last_error'] is None
    body = api.request('GET', '/v1/nodes/%s/firmware' % u, version=V)[1]
    comps = {c['component']: c for c in body['firmware']}
    assert comps['bmc']['initial_version'] == '1.0.0'
    assert comps['bmc']['current_version'] == 'bmc-2.1.bin'
    assert comps['bmc']['last_version_flashed'] == 'bmc-2.1.bin'
    assert comps['bios']['current_version'] == '1.0.0'


def test_firmware_in_driver_details_and_validate(api):
    u = _manageable(api)
    d85 = api.request('GET', '/v1/drivers/fake-hardware', version='1.85')[1]
    d86 = api.request('GET', '/v1/drivers/fake-hardware', version='1.86')[1]
    assert 'default_firmware_interface' not in d85
    assert d86['default_firmware_interface'] == 'fake'
    assert 'no-firmware' in d86['enabled_firmware_interfaces']
    # validate lists every interface but vendor at every version, as
    # Ironic; a reason only with a false result
    v1 = api.request('GET', '/v1/nodes/%s/validate' % u, version='1.1')[1]
    assert v1['firmware'] == {'result': True} and 'vendor' not in v1
    # a node without firmware support says so
    status, n, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'firmware_interface': 'no-firmware'},
        version=V)
    assert status == 201, n
    v = api.request('GET', '/v1/nodes/%s/validate' % n['uuid'],
                    version=V)[1]
    assert v['firmware']['result'] is False


# ---------------------------------------------------- 1.85 hold / unhold
def test_clean_hold_and_unhold(api):
    u = _manageable(api)
    steps = [{'interface': 'bios', 'step': 'factory_reset'},
             {'interface': 'deploy', 'step': 'hold'}, _APPLY]
    status, body, _ = _prov(api, u, target='clean', clean_steps=steps)
    assert status == 202, body
    api.wait_for(u, 'clean hold')
    node = _get(api, u)
    assert node['target_provision_state'] == 'manageable'
    assert node['clean_step']['step'] == 'hold'
    assert _bios(api, u) == {}       # the step after the hold waits
    status, body, _ = _prov(api, u, version='1.84', target='unhold')
    assert status == 406, body
    status, body, _ = _prov(api, u, target='unhold')
    assert status == 202, body
    node = api.wait_for(u, 'manageable')
    assert node['last_error'] is None
    assert _bios(api, u) == {'BootMode': 'Uefi'}


def test_abort_in_clean_hold(api):
    u = _manageable(api)
    _prov(api, u, target='clean', clean_steps=[
        {'interface': 'deploy', 'step': 'hold'}, _APPLY])
    api.wait_for(u, 'clean hold')
    status, body, _ = _prov(api, u, target='abort')
    assert status == 202, body
    node = api.wait_for(u, 'clean failed')
    assert 'aborted' in node['last_error']
    assert _bios(api, u) == {}


def test_reserved_steps_take_no_unknown_arguments(api):
    u = _manageable(api)
    status, body, _ = _prov(api, u, target='clean', clean_steps=[
        {'interface': 'deploy', 'step': 'hold', 'args': {'x': 1}}])
    assert status == 400 and 'hold' in _err(body)
    status, body, _ = _prov(api, u, target='clean', clean_steps=[
        {'interface': 'deploy', 'step': 'wait', 'args': {'seconds': -1}}])
    assert status == 400 and 'seconds' in _err(body)
    assert api.node(u)['provision_state'] == 'manageable'


def test_reserved_power_steps(api):
    u = _manageable(api)
    _prov(api, u, target='clean', clean_steps=[
        {'interface': 'power', 'step': 'power_on'},
        {'interface': 'deploy', 'step': 'wait', 'args': {'seconds': 0}},
        {'interface': 'power', 'step': 'power_off'}])
    node = api.wait_for(u, 'manageable')
    assert node['last_error'] is None
    assert node['power_state'] == 'power off'


# ------------------------------------------------------------ 1.87 service
def test_service_runs_steps_on_an_active_node(api):
    u = _active(api)
    status, body, _ = _prov(api, u, version='1.86', target='service',
                            service_steps=[_APPLY])
    assert status == 406, body
    status, body, _ = _prov(api, u, target='service',
                            service_steps=[_APPLY])
    assert status == 202, body
    api.wait_for(u, 'active')
    node = _get(api, u)
    assert node['last_error'] is None and node['service_step'] == {}
    assert _bios(api, u) == {'BootMode': 'Uefi'}
    assert 'service_step' not in api.request(
        'GET', '/v1/nodes/%s' % u, version='1.86')[1]


def test_service_refuses_bad_requests_and_leaves_the_node(api):
    u = _active(api)
    for body, word in (
            ({}, 'service_steps'),
            ({'service_steps': []}, 'service_steps'),
            ({'service_steps': [{'interface': 'bios', 'step': 'nope'}]},
             'nope')):
        status, resp, _ = _prov(api, u, target='service', **body)
        assert status == 400, (body, resp)
        assert word in _err(resp)
        assert api.node(u)['provision_state'] == 'active'
    # disable_ramdisk with service: 406 before 1.108 (as Ironic)
    status, resp, _ = _prov(api, u, target='service', disable_ramdisk=True,
                            service_steps=[_APPLY])
    assert status == 406 and 'disable_ramdisk' in _err(resp)
    assert api.node(u)['provision_state'] == 'active'
    m = _manageable(api)
    status, resp, _ = _prov(api, m, target='service',
                            service_steps=[_APPLY])
    assert status == 400 and 'can not be performed' in _err(resp)


def test_service_failure_hold_and_abort(api):
    u = _active(api, driver_info={
        'fake_fail_steps': ['bios.factory_reset']})
    _prov(api, u, target='service', service_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    api.wait_for(u, 'service failed')
    node = _get(api, u)
    assert 'bios.factory_reset' in node['last_error']
    assert node['service_step']['step'] == 'factory_reset'
    # abort from service failed: back to active
    assert _prov(api, u, target='abort')[0] == 202
    assert api.wait_for(u, 'active')['last_error'] is None
    # a hold, then unhold
    _prov(api, u, target='service', service_steps=[
        {'interface': 'deploy', 'step': 'hold'}, _APPLY])
    api.wait_for(u, 'service hold')
    assert _prov(api, u, target='unhold')[0] == 202
    assert api.wait_for(u, 'active')['last_error'] is None
    assert _bios(api, u) == {'BootMode': 'Uefi'}


# ---------------------------------------------------- 1.89 / 1.93 vmedia
def test_virtual_media_attach_get_detach(api):
    u = _manageable(api)
    path = '/v1/nodes/%s/vmedia' % u
    body = {'device_type': 'cdrom', 'image_url': 'http://127.0.0.1/x.iso',
            'image_download_source': 'http'}
    assert api.request('POST', path, body, version='1.88')[0] == 404
    status, resp, _ = api.request('POST', path, body, version='1.89')
    assert status == 204, resp
    api.conductor.workers.wait_idle(10)
    assert api.request('GET', path, version='1.92')[0] == 404
    status, media, _ = api.request('GET', path, version='1.93')
    assert status == 200, media
    cd = [m for m in media if 'CD' in m['media_types']][0]
    assert cd['inserted'] is True and cd['image'] == body['image_url']
    status, resp, _ = api.request('DELETE', path + '?device_types=cdrom',
                                  version=V)
    assert status == 204, resp
    media = api.request('GET', path, version=V)[1]
    assert not any(m['inserted'] for m in media)
    assert api.node(u)['last_error'] is None


def test_virtual_media_fetch_failure_is_the_last_error(api):
    """image_download_source local: the conductor fetches the image to
    serve it; it cannot, and says so (the attach runs after the 204, as
    Ironic's)."""
    u = _manageable(api)
    path = '/v1/nodes/%s/vmedia' % u
    status, resp, _ = api.request('POST', path, {
        'device_type': 'cdrom', 'image_url': 'http://127.0.0.1:9/x.iso'},
        version=V)
    assert status == 204, resp
    api.conductor.workers.wait_idle(10)
    node = api.node(u)
    assert 'Failed to attach virtual media cdrom' in node['last_error']
    assert '127.0.0.1:9' in node['last_error']
    media = api.request('GET', path, version=V)[1]
    assert not any(m['inserted'] for m in media)


@pytest.mark.parametrize('body,word', [
    ({'device_type': 'tape', 'image_url': 'http://127.0.0.1/x'},
     'device_type'),
    ({'device_type': 'cdrom', 'image_url': 'ftp://127.0.0.1/x'}, 'scheme'),
    ({'device_type': 'cdrom'}, 'image_url'),
    ({'device_type': 'cdrom', 'image_url': 'http://127.0.0.1/x',
      'image_download_source': 'swift'}, 'swift'),
    ({'device_type': 'cdrom', 'image_url': 'http://127.0.0.1/x',
      'extra': 1}, 'extra'),
])
def test_virtual_media_bad_requests(api, body, word):
    u = _manageable(api)
    status, resp, _ = api.request('POST', '/v1/nodes/%s/vmedia' % u, body,
                                  version=V)
    assert status == 400 and word in _err(resp)
    status, resp, _ = api.request(
        'DELETE', '/v1/nodes/%s/vmedia?device_types=tape' % u, version=V)
    assert status == 400 and 'tape' in _err(resp)


# ------------------------------------------------------- 1.91 .json ends
def test_json_suffix_before_and_after_1_91(api):
    api.create_node(name='n1')
    status, body, _ = api.request('GET', '/v1/nodes/n1.json',
                                  version='1.90')
    assert status == 200 and body['name'] == 'n1'
    assert api.request('GET', '/v1/nodes/n1.json', version='1.91')[0] == 404
    api.create_node(name='n2.json')
    status, body, _ = api.request('GET', '/v1/nodes/n2.json',
                                  version='1.91')
    assert status == 200 and body['name'] == 'n2.json'


# ----------------------------------------------------------- 1.92 runbooks
def test_runbooks_crud_and_use(api):
    rb = {'name': 'CUSTOM_BIOS_UEFI', 'steps': [
        dict(_APPLY, order=1),
        {'interface': 'bios', 'step': 'factory_reset', 'order': 0}]}
    assert api.request('POST', '/v1/runbooks', rb,
                       version='1.91')[0] == 405
    status, body, headers = api.request('POST', '/v1/runbooks', rb,
                                        version='1.92')
    assert status == 201, body
    assert body['public'] is False and body['disable_ramdisk'] is False
    assert 'Location' in headers
    rid = body['uuid']
    listed = api.request('GET', '/v1/runbooks', version=V)[1]['runbooks']
    assert [r['name'] for r in listed] == ['CUSTOM_BIOS_UEFI']
    status, body, _ = api.request('PATCH', '/v1/runbooks/%s' % rid, [
        {'op': 'add', 'path': '/extra/team', 'value': 'ops'}], version=V)
    assert status == 200 and body['extra'] == {'team': 'ops'}
    # a node without the trait may not use it
    u = _manageable(api)
    status, body, _ = _prov(api, u, target='clean',
                            runbook='CUSTOM_BIOS_UEFI')
    assert status == 400 and 'trait' in _err(body)
    status, body, _ = _prov(api, u, version='1.91', target='clean',
                            runbook='CUSTOM_BIOS_UEFI')
    assert status == 406
    status, body, _ = _prov(api, u, target='clean', runbook=rid,
                            clean_steps=[_APPLY])
    assert status == 400 and 'runbook' in _err(body)
    assert api.request('PUT', '/v1/nodes/%s/traits/CUSTOM_BIOS_UEFI' % u,
                       version=V)[0] == 204
    status, body, _ = _prov(api, u, target='clean', runbook=rid)
    assert status == 202, body
    assert api.wait_for(u, 'manageable')['last_error'] is None
    # order: factory_reset (0) first, then apply (1)
    assert _bios(api, u) == {'BootMode': 'Uefi'}
    assert api.request('DELETE', '/v1/runbooks/%s' % rid,
                       version=V)[0] == 204
    assert api.request('GET', '/v1/runbooks/%s' % rid,
                       version=V)[0] == 404


@pytest.mark.parametrize('rb,word', [
    # Ironic's schema words (recorded against Ironic 39)
    ({'name': 'not a trait', 'steps': [dict(_APPLY, order=0)]},
     "Schema error for runbook: 'not a trait' is not valid under any of "
     "the given schemas. Possible root cause: 'not a trait' does not "
     "match '^CUSTOM_[A-Z0-9_]+$'"),
    ({'name': 'CUSTOM_X', 'steps': []},
     'Schema error for runbook: [] should be non-empty'),
    ({'name': 'CUSTOM_X', 'steps': [_APPLY]}, 'order'),
    ({'name': 'CUSTOM_X', 'steps': [dict(_APPLY, order=0)],
      'public': True, 'owner': 'p1'}, 'public'),
    ({'name': 'CUSTOM_X', 'steps': [dict(_APPLY, order=0)],
      'public': 'yes'},
     "Schema error for runbook: 'yes' is not of type 'boolean', 'null'"),
])
def test_runbook_validation(api, rb, word):
    status, body, _ = api.request('POST', '/v1/runbooks', rb, version=V)
    assert status == 400 and word in _err(body), body
    assert api.request('GET', '/v1/runbooks', version=V)[1][
        'runbooks'] == []


# -------------------------------------------------- 1.95 disable_power_off
def test_disable_power_off(api):
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'disable_power_off': True},
        version='1.94')
    assert status == 400 or status == 406, body
    n = api.create_node()
    assert 'disable_power_off' not in api.request(
        'GET', '/v1/nodes/%s' % n['uuid'], version='1.94')[1]
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'replace', 'path': '/disable_power_off', 'value': True}],
        version=V)
    assert status == 200 and body['disable_power_off'] is True
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/power' % n['uuid'],
        {'target': 'power on'}, version=V)
    assert status == 202
    api.conductor.workers.wait_idle(10)
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/power' % n['uuid'],
        {'target': 'power off'}, version=V)
    assert status == 409 and 'disable_power_off' in _err(body)
    assert api.node(n['uuid'])['power_state'] == 'power on'
    # a power_off step fails with the reason
    _prov(api, n['uuid'], target='clean', clean_steps=[
        {'interface': 'power', 'step': 'power_off'}])
    node = api.wait_for(n['uuid'], 'clean failed')
    assert 'disable_power_off' in node['last_error']
    assert node['power_state'] == 'power on'
