"""Answers ironic-tempest-plugin's API tests check, as Ironic 39 gives
them: identifiers of the wrong form, volume errors, the fault filter,
reset interfaces, a heartbeat naming its node in the body, ..."""

import time

import pytest

from tests import harness

U = '11111111-2222-4333-8444-555555555555'


def _err(body) -> str:
    return harness.error_message(body)


# ------------------------------------------------------------ identifiers
@pytest.mark.parametrize('method,path,message', [
    ('GET', '/v1/ports/malformed:uuid',
     'Expected UUID or name for port_ident: malformed:uuid'),
    ('GET', '/v1/ports/fa:16:3e:42:a5:6c',
     'Expected UUID or name for port_ident: fa:16:3e:42:a5:6c'),
    ('PATCH', '/v1/ports/fa:16:3e:42:a5:6c',
     'Expected UUID or name for port_ident: fa:16:3e:42:a5:6c'),
    ('DELETE', '/v1/ports/fa:16:3e:42:a5:6c',
     'Expected UUID for port_uuid: fa:16:3e:42:a5:6c'),
    ('DELETE', '/v1/ports/fake_port', 'Expected UUID for port_uuid: '
                                      'fake_port'),
    ('GET', '/v1/volume/connectors/fake_volume_connector',
     'Expected UUID for connector_uuid: fake_volume_connector'),
    ('PATCH', '/v1/volume/connectors/fake_volume_connector',
     'Expected UUID for connector_uuid: fake_volume_connector'),
    ('DELETE', '/v1/volume/targets/fake_volume_target',
     'Expected UUID for target_uuid: fake_volume_target'),
])
def test_an_identifier_of_the_wrong_form_is_400(api, method, path,
                                                message):
    body = [] if method == 'PATCH' else None
    status, out, _ = api.request(method, path, body, version='1.32')
    assert status == 400, out
    assert _err(out) == message


def test_a_port_name_is_still_looked_up(api):
    status, out, _ = api.request('GET', '/v1/ports/fake_port',
                                 version='1.1')
    assert status == 404, out


# ------------------------------------------------------------ volume
def _node_with_connector(api):
    n = api.create_node()
    status, vc, _ = api.request('POST', '/v1/volume/connectors', {
        'node_uuid': n['uuid'], 'type': 'iqn', 'connector_id': 'iqn.x'},
        version='1.32')
    assert status == 201, vc
    return n, vc


def test_a_duplicate_volume_connector_says_so(api):
    n, vc = _node_with_connector(api)
    status, out, _ = api.request('POST', '/v1/volume/connectors', {
        'node_uuid': n['uuid'], 'type': 'iqn', 'connector_id': 'iqn.x'},
        version='1.32')
    assert status == 409, out
    assert _err(out).startswith('A volume connector ')
    assert _err(out).endswith('already exists.')


def test_a_duplicate_volume_target_says_so(api):
    n = api.create_node()
    target = {'node_uuid': n['uuid'], 'volume_type': 'iscsi',
              'volume_id': 'v1', 'boot_index': 0}
    assert api.request('POST', '/v1/volume/targets', target,
                       version='1.32')[0] == 201
    status, out, _ = api.request('POST', '/v1/volume/targets',
                                 dict(target, volume_id='v2'),
                                 version='1.32')
    assert status == 409, out
    assert _err(out).startswith('A volume target ')
    assert _err(out).endswith('already exists on this node.')


def _power_on(api, uuid):
    status, out, _ = api.request('PUT', '/v1/nodes/%s/states/power' % uuid,
                                 {'target': 'power on'}, version='1.32')
    assert status == 202, out


def test_volume_changes_of_a_powered_on_node_are_400(api):
    n, vc = _node_with_connector(api)
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'available')
    _power_on(api, n['uuid'])
    # the power change may still hold the node's lock: waited for
    status, out, _ = api.request('DELETE', '/v1/volume/connectors/%s'
                                 % vc['uuid'], version='1.32')
    assert status == 400, out
    assert _err(out).startswith('The requested action "volume connector '
                                'deletion" can not be performed on node')
    status, out, _ = api.request(
        'PATCH', '/v1/volume/connectors/%s' % vc['uuid'],
        [{'op': 'replace', 'path': '/connector_id', 'value': 'iqn.y'}],
        version='1.32')
    assert status == 400, out
    assert '"volume connector update"' in _err(out)


def test_a_powered_on_manageable_node_may_lose_its_volume_info(api):
    n, vc = _node_with_connector(api)
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    _power_on(api, n['uuid'])
    deadline = time.monotonic() + 5
    while api.node(n['uuid'])['power_state'] != 'power on':
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # deleting is allowed there, updating is not
    status, out, _ = api.request(
        'PATCH', '/v1/volume/connectors/%s' % vc['uuid'],
        [{'op': 'replace', 'path': '/connector_id', 'value': 'iqn.y'}],
        version='1.32')
    assert status == 400, out
    assert api.request('DELETE', '/v1/volume/connectors/%s' % vc['uuid'],
                       version='1.32')[0] == 204


# ------------------------------------------------------------ nodes
def test_an_unknown_fault_filter_is_400(api):
    status, out, _ = api.request('GET', '/v1/nodes?fault=somefake',
                                 version='1.42')
    assert status == 400, out
    assert 'somefake' in _err(out)
    status, out, _ = api.request('GET', '/v1/nodes?fault=power failure',
                                 version='1.42')
    assert status == 200 and out == {'nodes': []}, out


@pytest.mark.parametrize('iface', ['boot', 'console', 'deploy', 'inspect',
                                   'management', 'power', 'raid',
                                   'vendor'])
def test_removing_an_interface_resets_it_to_the_default(api, iface):
    n = api.create_node()
    default = n['%s_interface' % iface]
    ops = [{'op': 'remove', 'path': '/%s_interface' % iface}]
    status, out, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], ops,
                                 version='1.45')
    assert status == 200, out
    assert out['%s_interface' % iface] == default
    assert api.node(n['uuid'])['%s_interface' % iface] == default


def test_a_created_node_shows_what_is_stored(api):
    status, created, _ = api.request('POST', '/v1/nodes',
                                     {'driver': 'fake-hardware'},
                                     version='1.90')
    assert status == 201, created
    shown = api.request('GET', '/v1/nodes/%s.json' % created['uuid'],
                        version='1.90')[1]
    assert created['conductor_group'] == shown['conductor_group'] == ''


def test_the_allocation_of_an_unknown_node_is_400(api):
    status, out, _ = api.request('GET', '/v1/nodes/None/allocation',
                                 version='1.52')
    assert status == 400, out
    assert _err(out) == 'Node None could not be found.'


def test_detaching_a_vif_not_attached_with_noop_network(api):
    n = api.create_node()
    assert n['network_interface'] == 'noop'
    status, out, _ = api.request('DELETE', '/v1/nodes/%s/vifs/%s'
                                 % (n['uuid'], U), version='1.28')
    assert status == 204, out


def test_fake_hardware_declares_its_driver_info(api):
    status, out, _ = api.request('GET',
                                 '/v1/drivers/fake-hardware/properties',
                                 version='1.1')
    assert status == 200, out
    assert 'fake_fail_steps' in out and 'fake_async_steps' in out


# ------------------------------------------------------------ agent
def test_a_heartbeat_may_name_its_node_in_the_body(api):
    n = api.create_node()
    body = {'node_ident': n['uuid'], 'callback_url': 'http://a:9999',
            'agent_version': '1.0', 'agent_token': 'x'}
    status, out, _ = api.request('POST', '/v1/heartbeat', body,
                                 version='1.22')
    # agent_version is of 1.36: the body is read, the node found
    assert status == 400, out
    assert 'agent_version' in _err(out)
    status, out, _ = api.request('POST', '/v1/heartbeat', body,
                                 version='1.21')
    assert status == 404, out
    status, out, _ = api.request('POST', '/v1/heartbeat',
                                 {'callback_url': 'http://a:9999'},
                                 version='1.62')
    assert status == 400 and 'node_ident' in _err(out), out
