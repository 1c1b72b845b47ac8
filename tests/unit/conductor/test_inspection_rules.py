"""Inspection rules run when inspection data arrives: by priority,
conditions gate actions, actions change the node, its traits, ports and
the stored plugin data, and a failing rule fails the inspection."""

import http.server
import threading

import pytest
import yaml

from tests import harness

V = '1.96'
INVENTORY = {
    'interfaces': [{'name': 'eth0', 'mac_address': '52:54:00:cc:00:01'}],
    'cpu': {'count': 4, 'architecture': 'x86_64'},
    'memory': {'physical_mb': 8192},
    'disks': [{'name': '/dev/vda', 'size': 20 * 1024 ** 3}],
    'bmc_address': '192.0.2.10',
    'bmc_password': 'hunter2',
}
FOUR_CPUS = [{'op': 'eq', 'args': {'values': ['{inventory[cpu][count]}',
                                              '4']}}]


@pytest.fixture
def rules_api(tmp_path):
    """The harness with a built-in rules file the test may fill."""
    path = tmp_path / 'built-in.yaml'
    h = harness.Harness(tmp_path, overrides={
        'inspection_rules.built_in_rules': str(path)})
    h.built_in = path
    path.write_text('[]')
    yield h
    h.close()


def _rule(api, **body):
    status, out, _ = api.request('POST', '/v1/inspection_rules', body,
                                 version=V)
    assert status == 201, out
    return out


def _inspect(api, inventory=INVENTORY, plugin_data=None, state='manageable'
             ) -> dict:
    """In-band inspection of a new node, the agent posting
    ``inventory``; the node once it rests in ``state``."""
    # the agent's NIC finds the node
    uuid = api.make_manageable(
        inventory['interfaces'][0]['mac_address'], inspect_interface='agent',
        properties={'capabilities': 'boot_mode:uefi'})
    api.provision(uuid, 'inspect')
    api.wait_for(uuid, 'inspect wait')
    body = dict(plugin_data or {}, inventory=inventory)
    status, out, _ = api.request('POST', '/v1/continue_inspection', body,
                                 version='1.84')
    assert status == 202, out
    return api.wait_for(uuid, state)


def _traits(api, uuid) -> list:
    return api.request('GET', '/v1/nodes/%s/traits' % uuid,
                       version=V)[1]['traits']


def test_matching_rule_changes_the_node(rules_api):
    api = rules_api
    _rule(api, conditions=FOUR_CPUS, actions=[
        {'op': 'set-attribute', 'args': {
            'path': '/properties/cpu_family', 'value':
            '{inventory[cpu][architecture]}'}},
        {'op': 'set-attribute', 'args': ['extra.bmc',
                                         '{inventory[bmc_address]}']},
        {'op': 'set-attribute', 'args': {'path': 'resource_class',
                                         'value': 'four-cpu'}},
        {'op': 'set-capability', 'args': {'name': 'cpus',
                                          'value': '{inventory[cpu][count]}'}},
        {'op': 'set-capability', 'args': {'name': 'boot_mode',
                                          'value': 'bios'}},
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_{item}'},
         'loop': ['FOUR_CPUS', 'X86']},
        {'op': 'extend-attribute', 'args': {'path': 'extra/tags',
                                            'value': 'a', 'unique': True},
         'loop': [1, 2]},
        {'op': 'log', 'args': {'msg': 'node {node.uuid} matched'}}])
    node = _inspect(api)
    assert node['last_error'] is None
    props = node['properties']
    assert props['cpus'] == 4            # the inspect interface still did
    assert props['cpu_family'] == 'x86_64'
    assert props['capabilities'] == 'boot_mode:bios,cpus:4'
    assert node['extra'] == {'bmc': '192.0.2.10', 'tags': ['a']}
    assert node['resource_class'] == 'four-cpu'
    assert _traits(api, node['uuid']) == ['CUSTOM_FOUR_CPUS', 'CUSTOM_X86']


def test_rule_whose_condition_fails_does_nothing(rules_api):
    api = rules_api
    _rule(api, conditions=FOUR_CPUS + [
        {'op': 'gt', 'args': {'values': [1, 2]}}], actions=[
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_NO'}}])
    _rule(api, conditions=[{'op': '!eq', 'args': {'values': [
        '{inventory[cpu][count]}', '4']}}], actions=[
        {'op': 'fail', 'args': {'msg': 'not four CPUs'}}])
    node = _inspect(api)
    assert _traits(api, node['uuid']) == []


def test_rules_run_by_priority_built_in_included(rules_api):
    api = rules_api
    api.built_in.write_text(yaml.safe_dump([
        {'priority': 10000, 'actions': [{'op': 'set-attribute', 'args': {
            'path': 'extra/order', 'value': ['built-in']}}]},
        {'priority': -1, 'actions': [{'op': 'extend-attribute', 'args': {
            'path': 'extra/order', 'value': 'last'}}]}]))
    for prio, name in ((5, 'five'), (50, 'fifty'), (0, 'zero')):
        _rule(api, priority=prio, actions=[{'op': 'extend-attribute',
                                            'args': {'path': 'extra/order',
                                                     'value': name}}])
    node = _inspect(api)
    assert node['extra']['order'] == ['built-in', 'fifty', 'five', 'zero',
                                      'last']
    # built-in rules are no API rules
    listed = api.request('GET', '/v1/inspection_rules', version=V)[1]
    assert len(listed['inspection_rules']) == 3


def test_fail_action_fails_inspection(rules_api):
    api = rules_api
    _rule(api, conditions=FOUR_CPUS, actions=[
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_BEFORE'}},
        # (the message is no format string)
        {'op': 'fail', 'args': {'msg': 'not {inventory[cpu][count]}'}},
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_AFTER'}}])
    node = _inspect(api, state='inspect failed')
    assert 'Failed to inspect hardware. Reason: not {inventory[cpu][count]}' \
        in node['last_error']
    assert _traits(api, node['uuid']) == ['CUSTOM_BEFORE']


@pytest.mark.parametrize('action,message', [
    ({'op': 'set-attribute', 'args': {'path': 'uuid', 'value': 'x'}},
     'uuid is not a field an inspection rule may change'),
    ({'op': 'set-attribute', 'args': {'path': 'no_such_field',
                                      'value': 'x'}},
     'no_such_field is not a field'),
    ({'op': 'set-attribute', 'args': {'path': 'properties',
                                      'value': 'x'}},
     'properties must be an object'),
    ({'op': 'extend-attribute', 'args': {'path': 'name', 'value': 'x'}},
     "name cannot hold ['x']"),
    ({'op': 'set-attribute', 'args': {'path': 'name', 'value': ['x']}},
     "name cannot hold ['x']"),
    ({'op': 'set-attribute', 'args': {'path': 'maintenance',
                                      'value': 'perhaps'}},
     'maintenance must be a boolean'),
    ({'op': 'set-attribute', 'args': {'path': 'name/x', 'value': 1}},
     'name is not an object'),
    ({'op': 'del-attribute', 'args': {'path': 'extra/missing'}},
     'missing'),
    ({'op': 'add-trait', 'args': {'name': 'not-a-trait'}},
     'Invalid trait'),
    # (was the database driver's binding error, with its SQL)
    ({'op': 'remove-trait', 'args': {'name': ['CUSTOM_A']}},
     "Invalid trait ['CUSTOM_A']"),
    # (the node was left with a hardware type no conductor runs)
    ({'op': 'set-attribute', 'args': {'path': 'driver', 'value': 'nope'}},
     'nope is not a hardware type this conductor runs'),
    ({'op': 'set-attribute', 'args': {'path': 'power_interface',
                                      'value': 'redfish'}},
     'power_interface redfish is not one hardware type fake-hardware '
     'runs here'),
    # (was the database's NOT NULL violation)
    ({'op': 'del-attribute', 'args': {'path': 'driver'}},
     'driver cannot be removed or set to null: it must have a value'),
    ({'op': 'set-attribute', 'args': {'path': 'maintenance',
                                      'value': None}},
     'maintenance cannot be removed or set to null'),
    ({'op': 'set-port-attribute', 'args': {
        'port_id': '11111111-2222-3333-4444-555555555555',
        'path': 'extra/a', 'value': 1}}, 'could not be found'),
    ({'op': 'log', 'args': {'msg': 'x', 'level': '{inventory[cpu][count]}'},
      'loop': [1]}, 'Invalid log level'),
    ({'op': 'api-call', 'args': {'url': 'http://127.0.0.1:9/',
                                 'retries': 0, 'timeout': 2}},
     'Request to http://127.0.0.1:9/ failed'),
])
def test_failing_action_fails_inspection_naming_the_rule(rules_api, action,
                                                         message):
    api = rules_api
    rule = _rule(api, actions=[action])
    node = _inspect(api, state='inspect failed')
    assert 'Failed to apply rule %s to node %s' % (
        rule['uuid'], node['uuid']) in node['last_error']
    assert message in node['last_error']


def test_condition_that_cannot_be_evaluated_fails_inspection(rules_api):
    api = rules_api
    rule = _rule(api, conditions=[{'op': 'lt', 'args': {
        'values': ['{inventory[cpu][count]}', 4]}}], actions=[
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_X'}}])
    node = _inspect(api, state='inspect failed')
    assert rule['uuid'] in node['last_error']
    assert 'cannot compare' in node['last_error']


def test_bad_built_in_rules_file_fails_inspection(rules_api):
    api = rules_api
    api.built_in.write_text(yaml.safe_dump([{'actions': [
        {'op': 'nope', 'args': {}}]}]))
    node = _inspect(api, state='inspect failed')
    assert 'Built-in inspection rule #0' in node['last_error']
    assert 'Unsupported action operator: nope' in node['last_error']


def test_removing_actions(rules_api):
    api = rules_api
    _rule(api, actions=[
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_A'}},
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_B'}},
        {'op': 'set-attribute', 'args': {'path': 'extra/x', 'value': 1}},
        {'op': 'set-attribute', 'args': {'path': 'extra/y', 'value': 2}}])
    _rule(api, priority=0, actions=[
        {'op': 'remove-trait', 'args': {'name': 'CUSTOM_A'}},
        {'op': 'remove-trait', 'args': {'name': 'CUSTOM_NEVER_SET'}},
        {'op': 'unset-capability', 'args': {'name': 'boot_mode'}},
        {'op': 'del-attribute', 'args': {'path': 'extra.x'}}])
    # the first rule was made first: with equal priority it runs first
    node = _inspect(api)
    assert _traits(api, node['uuid']) == ['CUSTOM_B']
    assert node['extra'] == {'y': 2}
    assert node['properties']['capabilities'] == ''


def test_plugin_data_changes_are_stored(rules_api):
    api = rules_api
    _rule(api, actions=[
        {'op': 'set-plugin-data', 'args': {
            'path': 'seen.cpus', 'value': '{inventory[cpu][count]}'}},
        {'op': 'extend-plugin-data', 'args': {'path': 'tags',
                                              'value': 'a'}},
        {'op': 'unset-plugin-data', 'args': {'path': 'drop.me'}}])
    _rule(api, priority=0, conditions=[{'op': 'eq', 'args': {'values': [
        '{plugin_data[seen][cpus]}', '4']}}], actions=[
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_SAW_PLUGIN_DATA'}}])
    node = _inspect(api, plugin_data={'drop': {'me': 1}, 'keep': 2})
    stored = api.request('GET', '/v1/nodes/%s/inventory' % node['uuid'],
                         version=V)[1]
    assert stored['plugin_data'] == {'seen': {'cpus': '4'}, 'tags': ['a'],
                                     'keep': 2}
    assert stored['inventory'] == INVENTORY
    assert _traits(api, node['uuid']) == ['CUSTOM_SAW_PLUGIN_DATA']


def test_port_actions(rules_api):
    api = rules_api
    n = api.create_node(inspect_interface='agent')
    status, port, _ = api.request('POST', '/v1/ports', {
        'address': '52:54:00:cc:00:01', 'node_uuid': n['uuid'],
        'extra': {'old': 1}}, version=V)
    assert status == 201, port
    _rule(api, actions=[
        {'op': 'set-port-attribute', 'args': {
            'port_id': port['uuid'], 'path': 'extra/bmc',
            'value': '{inventory[bmc_address]}'}},
        {'op': 'extend-port-attribute', 'args': {
            'port_id': port['uuid'], 'path': 'extra/list', 'value': 1}},
        {'op': 'del-port-attribute', 'args': {
            'port_id': port['uuid'], 'path': 'extra/old'}},
        {'op': 'set-port-attribute', 'args': {
            'port_id': port['uuid'], 'path': 'pxe_enabled',
            'value': 'false'}}])
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'inspect')
    api.wait_for(n['uuid'], 'inspect wait')
    assert api.request('POST', '/v1/continue_inspection',
                       {'inventory': INVENTORY}, version='1.84')[0] == 202
    api.wait_for(n['uuid'], 'manageable')
    got = api.request('GET', '/v1/ports/%s' % port['uuid'], version=V)[1]
    assert got['extra'] == {'bmc': '192.0.2.10', 'list': [1]}
    assert got['pxe_enabled'] is False


@pytest.mark.parametrize('mode,sensitive,sees_secret', [
    ('always', True, False), ('never', False, True),
    ('sensitive', True, True), ('sensitive', False, False)])
def test_secrets_are_masked_as_configured(rules_api, mode, sensitive,
                                          sees_secret):
    api = rules_api
    harness.CONF.set_override('mask_secrets', mode, 'inspection_rules')
    try:
        _rule(api, sensitive=sensitive, conditions=[{'op': 'eq', 'args': {
            'values': ['{inventory[bmc_password]}', 'hunter2']}}],
            actions=[{'op': 'add-trait', 'args': {'name': 'CUSTOM_SAW'}}])
        node = _inspect(api)
    finally:
        harness.CONF.clear_override('mask_secrets', 'inspection_rules')
    assert (_traits(api, node['uuid']) == ['CUSTOM_SAW']) is sees_secret


class _Hook(http.server.BaseHTTPRequestHandler):
    seen: list = []

    def do_GET(self):       # noqa: N802
        _Hook.seen.append((self.path, self.headers.get('X-Rule')))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_api_call_action(rules_api):
    api = rules_api
    server = http.server.HTTPServer(('127.0.0.1', 0), _Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _rule(api, actions=[{'op': 'api-call', 'args': {
            'url': 'http://127.0.0.1:%d/hook/{node.uuid}'
                   % server.server_port,
            'headers': {'X-Rule': 'yes'}}}])
        node = _inspect(api)
    finally:
        server.shutdown()
        server.server_close()
    assert _Hook.seen == [('/hook/%s' % node['uuid'], 'yes')]


@pytest.mark.parametrize('bootif,pxe', [
    ('01-52-54-00-cc-00-02', {'52:54:00:cc:00:01': False,
                              '52:54:00:cc:00:02': True}),
    ('52:54:00:CC:00:01', {'52:54:00:cc:00:01': True,
                           '52:54:00:cc:00:02': False}),
    (None, {'52:54:00:cc:00:01': True, '52:54:00:cc:00:02': True}),
])
def test_pxe_stays_enabled_on_the_nic_the_machine_booted_from(
        rules_api, bootif, pxe):
    """A port for every NIC; PXE on the one the agent says the machine
    booted from (its BOOTIF, a MAC or PXELINUX's 01-... form), on all
    when it does not say."""
    api = rules_api
    inventory = dict(INVENTORY, interfaces=INVENTORY['interfaces'] + [
        {'name': 'eth1', 'mac_address': '52:54:00:cc:00:02'}],
        boot={'current_boot_mode': 'uefi', 'pxe_interface': bootif})
    node = _inspect(api, inventory)
    assert node['last_error'] is None
    status, ports, _ = api.request(
        'GET', '/v1/ports?node=%s&fields=address,pxe_enabled'
        % node['uuid'], version=V)
    assert status == 200, ports
    assert {p['address']: p['pxe_enabled'] for p in ports['ports']} == pxe


def test_a_rule_may_change_an_interface_to_one_the_conductor_runs(
        rules_api):
    api = rules_api
    _rule(api, actions=[{'op': 'set-attribute', 'args': {
        'path': 'deploy_interface', 'value': 'ramdisk'}}])
    node = _inspect(api)
    assert node['deploy_interface'] == 'ramdisk'
    assert node['driver'] == 'fake-hardware'


def test_a_refused_driver_change_leaves_the_node_as_it_was(rules_api):
    api = rules_api
    _rule(api, actions=[
        {'op': 'set-attribute', 'args': {'path': 'extra/seen', 'value': 1}},
        {'op': 'set-attribute', 'args': {'path': 'driver', 'value': 'x'}}])
    node = _inspect(api, state='inspect failed')
    assert node['driver'] == 'fake-hardware'
    assert 'x is not a hardware type' in node['last_error']
