"""API versions 1.63 to 1.84: each feature at its version, and the
version gate on both sides of it."""

import time

import pytest

from tests import harness

V = '1.84'


def _err(body) -> str:
    return harness.error_message(body)


@pytest.mark.parametrize('field,minor', [
    ('lessee', 65), ('network_data', 66), ('boot_mode', 75),
    ('secure_boot', 75), ('shard', 82), ('parent_node', 83)])
def test_node_fields_appear_at_their_version(api, field, minor):
    n = api.create_node()
    before = api.request('GET', '/v1/nodes/%s' % n['uuid'],
                         version='1.%d' % (minor - 1))[1]
    after = api.request('GET', '/v1/nodes/%s' % n['uuid'],
                        version='1.%d' % minor)[1]
    assert field not in before and field in after
    status, _, _ = api.request(
        'GET', '/v1/nodes?fields=uuid,%s' % field,
        version='1.%d' % (minor - 1))
    assert status == 406


def test_lessee_network_data_and_shard_are_written_and_filtered(api):
    a = api.create_node(name='a')
    b = api.create_node(name='b')
    status, body, _ = api.request('PATCH', '/v1/nodes/a', [
        {'op': 'add', 'path': '/lessee', 'value': 'project-x'},
        {'op': 'add', 'path': '/shard', 'value': 'rack-1'},
        {'op': 'add', 'path': '/network_data',
         'value': {'links': [], 'networks': [], 'services': []}}],
        version=V)
    assert status == 200, body
    assert body['lessee'] == 'project-x' and body['shard'] == 'rack-1'
    assert body['network_data']['links'] == []
    status, body, _ = api.request('PATCH', '/v1/nodes/b', [
        {'op': 'add', 'path': '/network_data', 'value': 'not an object'}],
        version=V)
    assert status == 400 and _err(body) == (
        "Schema error for patch: 'not an object' is not of type "
        "'object', 'null'")
    # a field of a later version in a PATCH is refused
    status, body, _ = api.request('PATCH', '/v1/nodes/b', [
        {'op': 'add', 'path': '/shard', 'value': 'rack-2'}],
        version='1.81')
    assert status == 406
    lst = api.request('GET', '/v1/nodes?lessee=project-x', version=V)[1]
    assert [n['uuid'] for n in lst['nodes']] == [a['uuid']]
    assert api.request('GET', '/v1/nodes?lessee=x', version='1.64')[0] \
        == 406
    lst = api.request('GET', '/v1/nodes?shard=rack-1,rack-9',
                      version=V)[1]
    assert [n['uuid'] for n in lst['nodes']] == [a['uuid']]
    lst = api.request('GET', '/v1/nodes?sharded=false', version=V)[1]
    assert [n['uuid'] for n in lst['nodes']] == [b['uuid']]
    shards = api.request('GET', '/v1/shards', version=V)[1]['shards']
    assert {'name': 'rack-1', 'count': 1} in shards
    assert {'name': None, 'count': 1} in shards
    assert api.request('GET', '/v1/shards', version='1.81')[0] == 404
    # Nova's port listing by shard
    status, port, _ = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:0a', 'node_uuid': a['uuid']})
    assert status == 201
    lst = api.request('GET', '/v1/ports?shard=rack-1', version=V)[1]
    assert [p['uuid'] for p in lst['ports']] == [port['uuid']]
    assert api.request('GET', '/v1/ports?shard=rack-1',
                       version='1.81')[0] == 406


def test_child_nodes(api):
    parent = api.create_node(name='parent')
    child = api.create_node(name='child')
    status, body, _ = api.request('PATCH', '/v1/nodes/child', [
        {'op': 'add', 'path': '/parent_node', 'value': 'parent'}],
        version=V)
    assert status == 200 and body['parent_node'] == parent['uuid']
    status, body, _ = api.request('PATCH', '/v1/nodes/parent', [
        {'op': 'add', 'path': '/parent_node', 'value': 'parent'}],
        version=V)
    assert status == 400 and 'own parent' in _err(body)
    status, body, _ = api.request('PATCH', '/v1/nodes/parent', [
        {'op': 'add', 'path': '/parent_node', 'value': 'nobody'}],
        version=V)
    assert status == 400 and 'nobody' in _err(body)
    # lists leave children out unless asked
    names = {n['name'] for n in api.request(
        'GET', '/v1/nodes', version=V)[1]['nodes']}
    assert names == {'parent'}
    names = {n['name'] for n in api.request(
        'GET', '/v1/nodes?include_children=true', version=V)[1]['nodes']}
    assert names == {'parent', 'child'}
    found = api.request('GET', '/v1/nodes?parent_node=%s' % parent['uuid'],
                        version=V)[1]['nodes']
    assert [n['uuid'] for n in found] == [child['uuid']]
    status, body, _ = api.request('GET', '/v1/nodes/parent/children',
                                  version=V)
    assert status == 200 and body['children'] == [child['uuid']]
    assert api.request('GET', '/v1/nodes/parent/children',
                       version='1.82')[0] == 404


def test_indicators_of_the_fake_management(api):
    n = api.create_node()
    base = '/v1/nodes/%s/management/indicators' % n['uuid']
    assert api.request('GET', base, version='1.62')[0] == 404
    status, body, _ = api.request('GET', base, version=V)
    assert status == 200
    names = {i['name']: i for i in body['indicators']}
    assert names['led@system']['readonly'] is False
    assert names['led-0@disk']['readonly'] is True
    assert api.request('GET', base + '/led@system', version=V)[1] == {
        'state': 'OFF'}
    status, _, _ = api.request('PUT', base + '/led@system',
                               {'state': 'BLINKING'}, version=V)
    assert status == 204
    assert api.request('GET', base + '/led@system', version=V)[1] == {
        'state': 'BLINKING'}
    for path, state in (('/led-0@disk', 'ON'), ('/led@system', 'PURPLE'),
                        ('/no-at-sign', 'ON'), ('/led@nowhere', 'ON')):
        status, body, _ = api.request('PUT', base + path, {'state': state},
                                      version=V)
        assert status == 400, (path, body)
    # the state survived the refused requests
    assert api.request('GET', base + '/led@system', version=V)[1] == {
        'state': 'BLINKING'}


def test_indicators_of_a_driver_without_them_are_400(api):
    n = api.create_node(management_interface='noop')
    status, body, _ = api.request(
        'GET', '/v1/nodes/%s/management/indicators' % n['uuid'], version=V)
    assert status == 400 and 'indicators' in _err(body)


def test_vif_attach_by_port_uuid(api):
    n = api.create_node()
    other = api.create_node()
    port = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:01', 'node_uuid': n['uuid']})[1]
    foreign = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:02', 'node_uuid': other['uuid']})[1]
    vifs = '/v1/nodes/%s/vifs' % n['uuid']
    status, _, _ = api.request('POST', vifs, {
        'id': 'vif-1', 'port_uuid': port['uuid']}, version='1.66')
    assert status == 406
    status, body, _ = api.request('POST', vifs, {
        'id': 'vif-1', 'port_uuid': port['uuid'],
        'portgroup_uuid': port['uuid']}, version=V)
    assert status == 400 and 'both' in _err(body)
    status, body, _ = api.request('POST', vifs, {
        'id': 'vif-1', 'port_uuid': foreign['uuid']}, version=V)
    assert status == 400, body
    status, body, _ = api.request('POST', vifs, {
        'id': 'vif-1', 'port_uuid': port['uuid']}, version=V)
    assert status == 204, body
    p = api.request('GET', '/v1/ports/%s' % port['uuid'], version=V)[1]
    assert p['internal_info']['tenant_vif_port_id'] == 'vif-1'
    assert api.request('DELETE', vifs + '/vif-1', version=V)[0] == 204
    p = api.request('GET', '/v1/ports/%s' % port['uuid'], version=V)[1]
    assert 'tenant_vif_port_id' not in p['internal_info']


def test_port_local_link_network_type_name_and_node_ident(api):
    n = api.create_node(name='n1')
    llc = {'network_type': 'unmanaged'}
    body = {'address': '52:54:00:00:00:03', 'node_uuid': n['uuid'],
            'local_link_connection': llc}
    assert api.request('POST', '/v1/ports', body, version='1.63')[0] == 400
    status, port, _ = api.request('POST', '/v1/ports', body, version=V)
    assert status == 201 and port['local_link_connection'] == llc
    # a managed link needs the switch's port and id
    status, err, _ = api.request('POST', '/v1/ports', {
        'address': '52:54:00:00:00:04', 'node_uuid': n['uuid'],
        'local_link_connection': {'port_id': 'Gig0/1'}}, version=V)
    assert status == 400 and 'switch_id' in _err(err)


def test_deploy_and_undeploy_verbs_with_deploy_steps(api):
    n = api.make_available()
    states = '/v1/nodes/%s/states/provision' % n['uuid']
    status, _, _ = api.request('PUT', states, {'target': 'deploy'},
                               version='1.72')
    assert status == 406
    steps = [{'interface': 'deploy', 'step': 'no-such-step',
              'args': {}, 'priority': 90}]
    status, _, _ = api.request('PUT', states, {
        'target': 'deploy', 'deploy_steps': steps}, version='1.68')
    assert status == 406
    status, body, _ = api.request('PUT', states, {
        'target': 'deploy', 'deploy_steps': steps}, version=V)
    assert status == 400 and 'no-such-step' in _err(body)
    assert api.node(n['uuid'])['provision_state'] == 'available'
    status, _, _ = api.request('PUT', states, {'target': 'deploy'},
                               version=V)
    assert status == 202
    api.wait_for(n['uuid'], 'active')
    status, _, _ = api.request('PUT', states, {'target': 'undeploy'},
                               version=V)
    assert status == 202
    api.wait_for(n['uuid'], 'available')


def test_manual_cleaning_without_the_ramdisk(api):
    n = api.create_node()
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    states = '/v1/nodes/%s/states/provision' % n['uuid']
    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': [{'name': 'BootMode',
                                     'value': 'Uefi'}]}}]
    status, _, _ = api.request('PUT', states, {
        'target': 'clean', 'clean_steps': steps, 'disable_ramdisk': True},
        version='1.69')
    assert status == 406
    status, body, _ = api.request('PUT', states, {
        'target': 'clean', 'clean_steps': steps, 'disable_ramdisk': True},
        version=V)
    assert status == 202, body
    node = api.wait_for(n['uuid'], 'manageable')
    assert node['last_error'] is None
    assert 'cleaning_disable_ramdisk' not in node['driver_internal_info']


def test_bios_registry_fields(api):
    n = api.create_node()
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'apply_configuration',
         'args': {'settings': [{'name': 'BootMode', 'value': 'Uefi'},
                               {'name': 'Custom', 'value': '1'}]}}])
    api.wait_for(n['uuid'], 'manageable')
    path = '/v1/nodes/%s/bios' % n['uuid']
    old = api.request('GET', path, version='1.73')[1]['bios']
    assert 'attribute_type' not in old[0]
    assert api.request('GET', path + '?detail=true',
                       version='1.73')[0] == 406
    short = api.request('GET', path, version=V)[1]['bios']
    assert set(short[0]) == {'name', 'value', 'links'}
    detail = {s['name']: s for s in api.request(
        'GET', path + '?detail=true', version=V)[1]['bios']}
    assert detail['BootMode']['allowable_values'] == ['Bios', 'Uefi']
    assert detail['BootMode']['reset_required'] is True
    assert detail['Custom']['attribute_type'] is None
    one = api.request('GET', path + '/BootMode', version=V)[1]
    assert one['BootMode']['attribute_type'] == 'Enumeration'
    picked = api.request('GET', path + '?fields=name,read_only',
                         version=V)[1]['bios']
    assert set(picked[0]) == {'name', 'read_only', 'links'}
    assert api.request('GET', path + '?fields=colour', version=V)[0] == 400


def test_boot_mode_is_read_at_verification_and_can_be_changed(api):
    n = api.create_node()
    api.provision(n['uuid'], 'manage')
    node = api.wait_for(n['uuid'], 'manageable')
    got = api.request('GET', '/v1/nodes/%s' % n['uuid'], version=V)[1]
    assert got['boot_mode'] == 'uefi' and got['secure_boot'] is False
    path = '/v1/nodes/%s/states/boot_mode' % n['uuid']
    assert api.request('PUT', path, {'target': 'bios'},
                       version='1.75')[0] == 404
    assert api.request('PUT', path, {'target': 'floppy'},
                       version=V)[0] == 400
    assert api.request('PUT', path, {'target': 'bios'},
                       version=V)[0] == 202
    sb = '/v1/nodes/%s/states/secure_boot' % n['uuid']
    assert api.request('PUT', sb, {'target': True}, version=V)[0] == 202
    got = api.request('GET', '/v1/nodes/%s/states' % n['uuid'],
                      version=V)[1]
    assert got['boot_mode'] == 'bios' and got['secure_boot'] is True
    assert node['provision_state'] == 'manageable'


def test_driver_fields(api):
    status, body, _ = api.request('GET', '/v1/drivers?fields=name,hosts',
                                  version=V)
    assert status == 200
    # links come whatever the fields (as Ironic's)
    assert all(set(d) == {'name', 'hosts', 'links'}
               for d in body['drivers'])
    assert api.request('GET', '/v1/drivers?fields=name',
                       version='1.76')[0] == 406
    one = api.request('GET', '/v1/drivers/fake-hardware?fields='
                      'default_deploy_interface', version=V)[1]
    assert set(one) == {'default_deploy_interface', 'links'}
    assert one['default_deploy_interface'] == 'fake'
    assert api.request('GET', '/v1/drivers?fields=bogus',
                       version=V)[0] == 400


def test_history_records_errors_after_last_error_is_cleared(api):
    n = api.create_node(driver_info={
        'fake_fail_steps': ['bios.factory_reset']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'clean', clean_steps=[
        {'interface': 'bios', 'step': 'factory_reset'}])
    failed = api.wait_for(n['uuid'], 'clean failed')
    assert 'factory_reset' in failed['last_error']
    # the next action clears last_error; the history keeps it
    api.provision(n['uuid'], 'manage')
    assert api.wait_for(n['uuid'], 'manageable')['last_error'] is None
    path = '/v1/nodes/%s/history' % n['uuid']
    assert api.request('GET', path, version='1.77')[0] == 404
    body = api.request('GET', path, version=V)[1]
    assert len(body['history']) == 1, body
    event = body['history'][0]
    assert event['severity'] == 'ERROR'
    assert event['event'] == failed['last_error']
    assert set(event) == {'uuid', 'created_at', 'severity', 'event',
                          'links'}
    one = api.request('GET', path + '/' + event['uuid'], version=V)[1]
    assert one['event_type'] == 'cleaning'
    assert one['conductor'] == 'test-conductor'
    detail = api.request('GET', path + '?detail=true', version=V)[1]
    assert detail['history'][0]['event_type'] == 'cleaning'
    assert api.request('GET', path + '/nope', version=V)[0] == 404
    # deleting the node deletes its history with it
    api.request('DELETE', '/v1/nodes/%s/maintenance' % n['uuid'])
    assert api.request('DELETE', '/v1/nodes/%s' % n['uuid'])[0] == 204


def test_allocation_prefers_the_node_named_like_it(api):
    for name in ('n1', 'n2', 'n3', 'wanted'):
        api.make_available(name=name, resource_class='gold')
    status, body, _ = api.request('POST', '/v1/allocations', {
        'name': 'wanted', 'resource_class': 'gold'}, version=V)
    assert status == 201, body
    deadline = time.monotonic() + 10
    while True:
        alloc = api.request('GET', '/v1/allocations/%s' % body['uuid'],
                            version=V)[1]
        if alloc['state'] != 'allocating' or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert alloc['state'] == 'active'
    assert alloc['node_uuid'] == api.node('wanted')['uuid']


INVENTORY = {
    'interfaces': [{'name': 'eth0', 'mac_address': '52:54:00:AA:00:01'},
                   {'name': 'eth1', 'mac_address': '52:54:00:aa:00:02'}],
    'cpu': {'count': 4, 'architecture': 'x86_64'},
    'memory': {'physical_mb': 8192},
    'disks': [{'name': '/dev/vda', 'size': 20 * 1024 ** 3},
              {'name': '/dev/sr0', 'size': 1024}],
}


def _inspect_waiting(api) -> dict:
    """A node of the agent inspect interface with one port, waiting for
    its agent's inventory."""
    n = api.create_node(inspect_interface='agent')
    api.request('POST', '/v1/ports', {'address': '52:54:00:aa:00:01',
                                      'node_uuid': n['uuid']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'inspect')
    api.wait_for(n['uuid'], 'inspect wait')
    return n


def test_in_band_inspection_through_continue_inspection(api):
    n = api.create_node(inspect_interface='agent')
    api.request('POST', '/v1/ports', {'address': '52:54:00:aa:00:01',
                                      'node_uuid': n['uuid']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    inv_path = '/v1/nodes/%s/inventory' % n['uuid']
    assert api.request('GET', inv_path, version=V)[0] == 404
    # before inspection starts the ramdisk is not expected: 404
    status, _, _ = api.request('POST', '/v1/continue_inspection',
                               {'inventory': INVENTORY}, version=V)
    assert status == 404
    api.provision(n['uuid'], 'inspect')
    node = api.wait_for(n['uuid'], 'inspect wait')
    assert node['power_state'] == 'power on'
    for bad in ({}, {'inventory': []}, {'inventory': {'interfaces': 1}},
                {'inventory': {'interfaces': []}}):
        status, _, _ = api.request('POST', '/v1/continue_inspection', bad,
                                   version=V)
        assert status == 400, bad
    assert api.request('POST', '/v1/continue_inspection',
                       {'inventory': INVENTORY}, version='1.83')[0] == 404
    status, body, _ = api.request('POST', '/v1/continue_inspection',
                                  {'inventory': INVENTORY,
                                   'logs': 'collected'},
                                  version=V)
    assert status == 202 and body == {'uuid': n['uuid']}
    node = api.wait_for(n['uuid'], 'manageable')
    assert node['properties']['cpus'] == 4
    assert node['properties']['memory_mb'] == 8192
    assert node['properties']['local_gb'] == 19
    assert node['power_state'] == 'power off'
    assert node['inspection_finished_at'] is not None
    inv = api.request('GET', inv_path, version=V)[1]
    assert inv['inventory'] == INVENTORY
    assert inv['plugin_data'] == {'logs': 'collected'}
    assert api.request('GET', inv_path, version='1.80')[0] == 404
    macs = {p['address'] for p in api.request(
        'GET', '/v1/nodes/%s/ports' % n['uuid'])[1]['ports']}
    assert macs == {'52:54:00:aa:00:01', '52:54:00:aa:00:02'}


def test_continue_inspection_at_1_1_as_the_agent_posts(api):
    """ironic-python-agent posts its inventory without a version header:
    1.1, which Ironic accepts there (ironic-inspector's API had no
    versions); between 1.2 and 1.83 the endpoint does not exist, and
    ``node_uuid`` needs 1.84."""
    n = _inspect_waiting(api)
    body = {'inventory': INVENTORY}
    for version in ('1.2', '1.62', '1.83'):
        status, _, _ = api.request('POST', '/v1/continue_inspection', body,
                                   version=version)
        assert status == 404, version
    status, _, _ = api.request(
        'POST', '/v1/continue_inspection?node_uuid=%s' % n['uuid'], body,
        version='1.1')
    assert status == 404
    assert api.node(n['uuid'])['provision_state'] == 'inspect wait'
    status, out, _ = api.request('POST', '/v1/continue_inspection', body,
                                 version='1.1')
    assert status == 202 and out == {'uuid': n['uuid']}
    node = api.wait_for(n['uuid'], 'manageable')
    assert node['properties']['cpus'] == 4


def test_an_agents_nic_address_that_is_no_mac_makes_no_port(api):
    """As in Ironic's inspection: what an agent reports as a NIC's MAC
    but is none (a word, 100 KB, a NUL) is logged and left out; the
    others become ports."""
    n = _inspect_waiting(api)
    inventory = dict(INVENTORY, interfaces=INVENTORY['interfaces'] + [
        {'name': 'eth2', 'mac_address': 'not a MAC'},
        {'name': 'eth3', 'mac_address': 'm' * 100000},
        {'name': 'eth4', 'mac_address': '52:54:00:aa:00:03 '},
        {'name': 'eth5', 'mac_address': '52-54-00-AA-00-04'}])
    status, body, _ = api.request('POST', '/v1/continue_inspection',
                                  {'inventory': inventory}, version=V)
    assert status == 202, body
    node = api.wait_for(n['uuid'], 'manageable')
    assert node['last_error'] is None
    macs = {p['address'] for p in api.request(
        'GET', '/v1/nodes/%s/ports' % n['uuid'])[1]['ports']}
    assert macs == {'52:54:00:aa:00:01', '52:54:00:aa:00:02',
                    '52:54:00:aa:00:04'}
