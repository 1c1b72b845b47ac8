"""python-ironicclient's ``baremetal`` CLI over every resource and node
sub-command within API 1.61, against a real baremetal-server (the CLI
runs in this process: see tests/functional/cli.py)."""

import json

import pytest

from tests.functional import cli


@pytest.fixture(scope='module')
def bm(server):
    return cli.CLI(server.endpoint)


def _wait(bm, node, state):
    return bm.wait(node, state)


def test_chassis_ports_portgroups_volume(bm):
    ch = bm('chassis', 'create', '--description', 'rack 1', '--extra',
            'row=a', '-f', 'json')
    assert bm('chassis', 'show', ch['uuid'], '-f', 'json')['extra'] == \
        {'row': 'a'}
    bm('chassis', 'set', ch['uuid'], '--description', 'rack 2')
    bm('chassis', 'unset', ch['uuid'], '--extra', 'row')
    got = bm('chassis', 'show', ch['uuid'], '-f', 'json')
    assert (got['description'], got['extra']) == ('rack 2', {})
    assert ch['uuid'] in [c['uuid'] for c in bm('chassis', 'list', '-f',
                                                    'json')]

    node = bm('node', 'create', '--driver', 'fake-hardware', '--name',
              'cli-res', '--chassis-uuid', ch['uuid'], '-f', 'json')
    pg = bm('port', 'group', 'create', '--node', node['uuid'], '--name',
            'bond0', '--address', '52:54:00:cc:00:01', '--mode', '802.3ad',
            '-f', 'json')
    port = bm('port', 'create', '52:54:00:cc:00:02', '--node', node['uuid'],
              '--port-group', pg['uuid'], '--local-link-connection',
              'switch_id=00:11:22:33:44:55', '--local-link-connection',
              'port_id=Eth1/1', '--physical-network', 'physnet1',
              '-f', 'json')
    assert port['portgroup_uuid'] == pg['uuid']
    assert bm('port', 'list', '--node', node['uuid'], '-f', 'json')[0][
        'address'] == '52:54:00:cc:00:02'
    assert bm('port', 'list', '--address', '52:54:00:cc:00:02', '--long',
              '-f', 'json')[0]['physical_network'] == 'physnet1'
    bm('port', 'set', port['uuid'], '--extra', 'k=v', '--pxe-disabled')
    got = bm('port', 'show', port['uuid'], '-f', 'json')
    assert (got['extra'], got['pxe_enabled']) == ({'k': 'v'}, False)
    bm('port', 'unset', port['uuid'], '--extra', 'k')
    assert bm('port', 'group', 'list', '--node', node['uuid'], '-f',
              'json')[0]['name'] == 'bond0'
    bm('port', 'group', 'set', 'bond0', '--extra', 'a=b')
    bm('port', 'group', 'unset', 'bond0', '--extra', 'a')
    assert bm('port', 'group', 'show', 'bond0', '-f', 'json')['mode'] == \
        '802.3ad'

    vc = bm('volume', 'connector', 'create', '--node', node['uuid'],
            '--type', 'iqn', '--connector-id', 'iqn.2024-01.org:cli',
            '-f', 'json')
    vt = bm('volume', 'target', 'create', '--node', node['uuid'],
            '--type', 'iscsi', '--boot-index', '0', '--volume-id', 'vol-1',
            '-f', 'json')
    assert bm('volume', 'connector', 'list', '--node', node['uuid'],
              '--long', '-f', 'json')[0]['uuid'] == vc['uuid']
    assert bm('volume', 'target', 'list', '--node', node['uuid'], '-f',
              'json')[0]['uuid'] == vt['uuid']
    # as in Ironic, a node's volume information changes only while it is
    # powered off (a node never powered has no power state yet)
    bm('node', 'power', 'off', node['uuid'])
    assert bm.wait_power(node['uuid'], 'power off') == 'power off'
    bm('volume', 'connector', 'set', vc['uuid'], '--extra', 'x=1')
    bm('volume', 'target', 'set', vt['uuid'], '--property', 'lun=0')
    assert bm('volume', 'target', 'show', vt['uuid'], '-f', 'json')[
        'properties'] == {'lun': 0}
    bm('volume', 'connector', 'unset', vc['uuid'], '--extra', 'x')
    bm('volume', 'target', 'unset', vt['uuid'], '--property', 'lun')

    # chassis with nodes cannot go; resources go in the right order
    assert 'node' in bm('chassis', 'delete', ch['uuid'], ok=False).lower()
    bm('volume', 'target', 'delete', vt['uuid'])
    bm('volume', 'connector', 'delete', vc['uuid'])
    bm('port', 'delete', port['uuid'])
    bm('port', 'group', 'delete', 'bond0')
    bm('node', 'delete', 'cli-res')
    bm('chassis', 'delete', ch['uuid'])


def test_drivers_conductors_templates_allocations(bm):
    names = [d['name'] for d in bm('driver', 'list', '-f',
                                                   'json')]
    assert 'fake-hardware' in names
    shown = bm('driver', 'show', 'fake-hardware', '-f', 'json')
    assert shown['default_power_interface'] == 'fake'
    bm('driver', 'property', 'list', 'fake-hardware')
    assert 'raid_level' in bm('driver', 'raid', 'property', 'list',
                              'fake-hardware')
    bm('driver', 'passthru', 'list', 'fake-hardware')
    err = bm('driver', 'passthru', 'call', 'fake-hardware', 'nope',
             ok=False)
    assert 'No handler for method nope' in err

    conductors = bm('conductor', 'list', '-f', 'json')
    assert len(conductors) == 1 and conductors[0]['alive']
    assert bm('conductor', 'show', conductors[0]['hostname'], '-f',
              'json')['alive'] is True

    steps = json.dumps([{'interface': 'bios',
                         'step': 'apply_configuration', 'priority': 150,
                         'args': {'settings': [{'name': 'HT',
                                                'value': 'on'}]}}])
    bm('deploy', 'template', 'create', 'CUSTOM_HT_ON', '--steps', steps)
    assert bm('deploy', 'template', 'show', 'CUSTOM_HT_ON', '-f', 'json')[
        'steps'][0]['step'] == 'apply_configuration'
    bm('deploy', 'template', 'set', 'CUSTOM_HT_ON', '--extra', 'a=b')
    bm('deploy', 'template', 'unset', 'CUSTOM_HT_ON', '--extra', 'a')
    assert [t['name'] for t in bm('deploy', 'template', 'list', '-f',
                                  'json')] == ['CUSTOM_HT_ON']

    node = bm('node', 'create', '--driver', 'fake-hardware',
              '--resource-class', 'cli-gold', '-f', 'json')['uuid']
    bm('node', 'manage', node)
    _wait(bm, node, 'manageable')
    bm('node', 'provide', node)
    _wait(bm, node, 'available')
    bm('node', 'add', 'trait', node, 'CUSTOM_HT_ON')
    alloc = bm('allocation', 'create', '--resource-class', 'cli-gold',
               '--trait', 'CUSTOM_HT_ON', '--name', 'cli-alloc',
               '--wait', '30', '-f', 'json')
    assert alloc['state'] == 'active' and alloc['node_uuid'] == node
    bm('allocation', 'set', 'cli-alloc', '--extra', 'owner=me')
    bm('allocation', 'unset', 'cli-alloc', '--extra', 'owner')
    assert [a['uuid'] for a in bm('allocation', 'list', '--node', node,
                                  '-f', 'json')] == [alloc['uuid']]
    bm('node', 'deploy', node)
    got = _wait(bm, node, 'active')
    assert got['instance_uuid'] == alloc['uuid']
    # the template's BIOS step ran during deployment
    assert {s['name']: s['value'] for s in bm(
        'node', 'bios', 'setting', 'list', node, '-f', 'json')} == \
        {'HT': 'on'}
    bm('node', 'undeploy', node)
    _wait(bm, node, 'available')
    bm('allocation', 'delete', 'cli-alloc')
    bm('deploy', 'template', 'delete', 'CUSTOM_HT_ON')
    bm('node', 'delete', node)


def test_node_subcommands(bm):
    node = bm('node', 'create', '--driver', 'fake-hardware', '--name',
              'cli-sub', '--property', 'cpus=2', '--driver-info',
              'fake_password=secret', '-f', 'json')['uuid']
    assert bm('node', 'show', 'cli-sub', '-f', 'json')['driver_info'] == \
        {'fake_password': '******'}
    bm('node', 'set', 'cli-sub', '--description', 'd', '--extra', 'a=1',
       '--property', 'memory_mb=1024', '--owner', 'p1')
    bm('node', 'unset', 'cli-sub', '--extra', 'a', '--owner')
    got = bm('node', 'show', 'cli-sub', '--fields', 'uuid', 'properties',
             'extra', 'owner', '-f', 'json')
    assert got['properties'] == {'cpus': 2, 'memory_mb': 1024}
    assert (got['extra'], got['owner']) == ({}, None)
    assert [r['Interface'] for r in bm('node', 'validate', 'cli-sub',
                                       '-f', 'json')][:3]
    bm('node', 'manage', 'cli-sub')
    _wait(bm, node, 'manageable')
    bm('node', 'inspect', 'cli-sub')
    assert _wait(bm, node, 'manageable')['properties']['cpus'] == 2

    bm('node', 'power', 'on', 'cli-sub')
    bm('node', 'reboot', 'cli-sub', '--soft')
    bm('node', 'power', 'off', 'cli-sub', '--soft', '--power-timeout', '5')
    assert bm.wait_power('cli-sub', 'power off') == 'power off'
    bm('node', 'boot', 'device', 'set', 'cli-sub', 'pxe', '--persistent')
    assert bm('node', 'boot', 'device', 'show', 'cli-sub', '-f', 'json') \
        == {'boot_device': 'pxe', 'persistent': True}
    assert 'disk' in bm('node', 'boot', 'device', 'show', 'cli-sub',
                        '--supported', '-f', 'json')[
        'supported_boot_devices'].split(', ')
    bm('node', 'inject', 'nmi', 'cli-sub')
    bm('node', 'console', 'enable', 'cli-sub')
    assert bm('node', 'console', 'show', 'cli-sub', '-f', 'json')[
        'console_enabled'] is True
    bm('node', 'console', 'disable', 'cli-sub')

    bm('node', 'maintenance', 'set', 'cli-sub', '--reason', 'fan')
    got = bm('node', 'show', 'cli-sub', '-f', 'json')
    assert (got['maintenance'], got['maintenance_reason']) == (True, 'fan')
    bm('node', 'maintenance', 'unset', 'cli-sub')

    bm('node', 'trait', 'add', 'cli-sub', 'CUSTOM_A', 'CUSTOM_B')
    traits = [t['traits'] for t in bm('node', 'trait', 'list', 'cli-sub',
                                      '-f', 'json')]
    assert sorted(traits) == ['CUSTOM_A', 'CUSTOM_B']
    bm('node', 'trait', 'remove', 'cli-sub', 'CUSTOM_A')
    bm('node', 'vif', 'attach', 'cli-sub', 'vif-1')
    assert [v['id'] for v in bm('node', 'vif', 'list', 'cli-sub', '-f',
                                'json')] == ['vif-1']
    bm('node', 'vif', 'detach', 'cli-sub', 'vif-1')

    bm('node', 'passthru', 'list', 'cli-sub')
    out = bm('node', 'passthru', 'call', 'cli-sub', 'first_method',
             '--arg', 'x=1')
    assert 'x' in out

    bm('node', 'clean', 'cli-sub', '--clean-steps', json.dumps(
        [{'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': [{'name': 'SMT', 'value': 'off'}]}}]))
    _wait(bm, node, 'manageable')
    settings = bm('node', 'bios', 'setting', 'list', 'cli-sub', '-f',
                  'json')
    assert {'SMT'} <= {s['name'] for s in settings}
    assert bm('node', 'bios', 'setting', 'show', 'cli-sub', 'SMT', '-f',
              'json')['value'] == 'off'

    bm('node', 'provide', 'cli-sub')
    _wait(bm, node, 'available')
    bm('node', 'deploy', 'cli-sub', '--config-drive', '{"meta_data": {}}')
    _wait(bm, node, 'active')
    bm('node', 'rebuild', 'cli-sub')
    _wait(bm, node, 'active')
    bm('node', 'rescue', 'cli-sub', '--rescue-password', 'pw')
    _wait(bm, node, 'rescue')
    bm('node', 'unrescue', 'cli-sub')
    _wait(bm, node, 'active')
    bm('node', 'undeploy', 'cli-sub')
    _wait(bm, node, 'available')

    # errors come back as the CLI prints them: status and message
    err = bm('node', 'deploy', 'no-such-node', ok=False)
    assert 'no-such-node' in err and 'could not be found' in err
    err = bm('node', 'set', 'cli-sub', '--driver', 'no-such-driver',
             ok=False)
    assert 'no-such-driver' in err
    bm('node', 'manage', 'cli-sub')
    _wait(bm, node, 'manageable')
    bm('node', 'delete', 'cli-sub')


def test_create_from_file(bm, tmp_path):
    spec = tmp_path / 'nodes.json'
    spec.write_text(json.dumps({'chassis': [{
        'description': 'from file', 'nodes': [{
            'driver': 'fake-hardware', 'name': 'file-node',
            'ports': [{'address': '52:54:00:dd:00:01'}]}]}]}))
    bm('create', str(spec))
    node = bm('node', 'show', 'file-node', '-f', 'json')
    assert node['chassis_uuid']
    assert bm('port', 'list', '--node', 'file-node', '-f', 'json')[0][
        'address'] == '52:54:00:dd:00:01'
