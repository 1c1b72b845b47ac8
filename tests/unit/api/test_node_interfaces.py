"""A node's interfaces are validated against its hardware type and the
enabled lists."""

from tests import harness


def test_defaults_come_from_the_hardware_type(api):
    n = api.create_node()
    assert n['power_interface'] == 'fake'
    assert n['management_interface'] == 'fake'
    assert n['bios_interface'] == 'fake'
    assert n['network_interface'] == 'noop'


def test_unsupported_interface_is_400(api):
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'manual-management', 'management_interface': 'fake'})
    assert status == 400
    assert 'Management interface "fake"' in harness.error_message(body)


def test_disabled_interface_is_400(api):
    status, body, _ = api.request('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'power_interface': 'ipmi'})
    assert status == 400
    assert 'not enabled' in harness.error_message(body)


def test_unknown_driver_is_400(api):
    status, body, _ = api.request('POST', '/v1/nodes',
                                  {'driver': 'no-such-type'})
    assert status == 400
    assert 'no-such-type' in harness.error_message(body)


def test_interface_change_validated_on_patch(api):
    n = api.create_node()
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'replace', 'path': '/raid_interface', 'value': 'bogus'}])
    assert status == 400
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'replace', 'path': '/raid_interface', 'value': 'no-raid'}])
    assert status == 200, body
    assert body['raid_interface'] == 'no-raid'


def test_driver_change_needs_compatible_interfaces_or_reset(api):
    n = api.create_node(management_interface='fake')
    patch = [{'op': 'replace', 'path': '/driver',
              'value': 'manual-management'}]
    status, body, _ = api.request('PATCH', '/v1/nodes/%s' % n['uuid'],
                                  patch)
    assert status == 400, body
    assert api.node(n['uuid'])['driver'] == 'fake-hardware'
    status, body, _ = api.request(
        'PATCH', '/v1/nodes/%s?reset_interfaces=true' % n['uuid'], patch)
    assert status == 200, body
    assert body['driver'] == 'manual-management'
    assert body['management_interface'] == 'noop'


def test_reset_interfaces_needs_1_45(api):
    n = api.create_node()
    status, body, _ = api.request(
        'PATCH', '/v1/nodes/%s?reset_interfaces=true' % n['uuid'],
        [{'op': 'replace', 'path': '/driver',
          'value': 'manual-management'}], version='1.44')
    assert status == 406


def test_driver_change_refused_while_active(api):
    n = api.make_available()
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'active')
    status, body, _ = api.request(
        'PATCH', '/v1/nodes/%s?reset_interfaces=true' % n['uuid'],
        [{'op': 'replace', 'path': '/driver',
          'value': 'manual-management'}])
    assert status == 409, body
