"""python-ironicclient's ``baremetal`` CLI over the commands of API 1.62
to 1.112 (runbooks and their traits, service with or without the
ramdisk, unhold, firmware, inventory, history, shards, children,
disable_power_off, instance_name, abort in wait call-back) against a
real baremetal-server."""

import json

import pytest

from tests.functional import cli

INVENTORY = {
    'interfaces': [{'name': 'eth0', 'mac_address': '52:54:00:dd:00:01'}],
    'cpu': {'count': 8, 'architecture': 'x86_64'},
    'memory': {'physical_mb': 16384},
    'disks': [{'name': '/dev/vda', 'size': 40 * 1024 ** 3}],
}
APPLY = [{'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': [{'name': 'BootMode', 'value': 'Uefi'}]}}]


@pytest.fixture(scope='module')
def bm(server):
    return cli.CLI(server.endpoint, version='1.95')


def _bios(bm, node):
    return {s['name']: s['value']
            for s in bm('node', 'bios', 'setting', 'list', node, '-f',
                        'json')}


def test_firmware_hold_unhold_service_and_power_off(bm):
    n = bm('node', 'create', '--driver', 'fake-hardware', '--name',
           'cli-new-1', '--firmware-interface', 'fake', '-f', 'json')
    assert n['firmware_interface'] == 'fake'
    bm('node', 'manage', n['uuid'], '--wait', '30')
    comps = {c['component']: c for c in bm(
        'node', 'firmware', 'list', n['uuid'], '-f', 'json')}
    assert comps['bmc']['initial_version'] == '1.0.0'
    # manual cleaning: a firmware update, a hold, then BIOS settings
    steps = [{'interface': 'firmware', 'step': 'update', 'args': {
                 'settings': [{'component': 'bmc',
                               'url': 'http://127.0.0.1/bmc-3.0.bin'}]}},
             {'interface': 'deploy', 'step': 'hold'}] + APPLY
    bm('node', 'clean', n['uuid'], '--clean-steps', json.dumps(steps))
    bm.wait_state(n['uuid'], 'clean hold')
    assert _bios(bm, n['uuid']) == {}
    bm('node', 'unhold', n['uuid'])
    bm.wait(n['uuid'], 'manageable')
    assert _bios(bm, n['uuid']) == {'BootMode': 'Uefi'}
    comps = {c['component']: c for c in bm(
        'node', 'firmware', 'list', n['uuid'], '-f', 'json')}
    assert comps['bmc']['current_version'] == 'bmc-3.0.bin'
    assert comps['bmc']['last_version_flashed'] == 'bmc-3.0.bin'
    # servicing the deployed node
    bm('node', 'provide', n['uuid'], '--wait', '30')
    bm('node', 'deploy', n['uuid'], '--wait', '30')
    bm('node', 'service', n['uuid'], '--service-steps', json.dumps(
        [{'interface': 'bios', 'step': 'factory_reset'}]))
    node = bm.wait(n['uuid'], 'active')
    assert node['last_error'] is None and _bios(bm, n['uuid']) == {}
    err = bm('node', 'service', n['uuid'], '--service-steps', json.dumps(
        [{'interface': 'bios', 'step': 'no_such_step'}]), ok=False)
    assert 'no_such_step' in err
    # disable_power_off
    bm('node', 'set', n['uuid'], '--disable-power-off')
    assert bm('node', 'show', n['uuid'], '-f', 'json')['disable_power_off']
    err = bm('node', 'power', 'off', n['uuid'], ok=False)
    assert 'disable_power_off' in err
    bm('node', 'set', n['uuid'], '--enable-power-off')
    bm('node', 'power', 'off', n['uuid'])


def test_runbooks(bm):
    rb = bm('runbook', 'create', '--name', 'CUSTOM_CLI_RB', '--steps',
            json.dumps([dict(APPLY[0], order=0)]), '--extra', 'team=ops',
            '-f', 'json')
    assert rb['name'] == 'CUSTOM_CLI_RB' and rb['extra'] == {'team': 'ops'}
    assert [r['name'] for r in bm('runbook', 'list', '-f', 'json')] == \
        ['CUSTOM_CLI_RB']
    bm('runbook', 'set', rb['uuid'], '--extra', 'site=a')
    bm('runbook', 'unset', rb['uuid'], '--extra', 'team')
    assert bm('runbook', 'show', 'CUSTOM_CLI_RB', '-f', 'json')[
        'extra'] == {'site': 'a'}
    n = bm('node', 'create', '--driver', 'fake-hardware', '-f', 'json')
    bm('node', 'manage', n['uuid'], '--wait', '30')
    err = bm('node', 'clean', n['uuid'], '--runbook', 'CUSTOM_CLI_RB',
             ok=False)
    assert 'trait' in err
    bm('node', 'add', 'trait', n['uuid'], 'CUSTOM_CLI_RB')
    bm('node', 'clean', n['uuid'], '--runbook', 'CUSTOM_CLI_RB')
    bm.wait(n['uuid'], 'manageable')
    assert _bios(bm, n['uuid']) == {'BootMode': 'Uefi'}
    bm('runbook', 'delete', rb['uuid'])
    assert bm('runbook', 'list', '-f', 'json') == []


def test_inventory_history_shards_children(bm, tmp_path):
    parent = bm('node', 'create', '--driver', 'fake-hardware', '--name',
                'cli-parent', '--shard', 'rack-9', '-f', 'json')
    child = bm('node', 'create', '--driver', 'fake-hardware', '--name',
               'cli-child', '--parent-node', parent['uuid'], '-f', 'json')
    assert bm('node', 'children', 'list', parent['uuid'], '-f',
              'json') == {'children': [child['uuid']]}
    shards = {s['name']: s['count']
              for s in bm('shard', 'list', '-f', 'json')}
    assert shards['rack-9'] == 1
    # in-band inspection: the agent's inventory, then `inventory save`
    bm('node', 'set', parent['uuid'], '--inspect-interface', 'agent')
    bm('port', 'create', '52:54:00:dd:00:01', '--node', parent['uuid'])
    bm('node', 'manage', parent['uuid'], '--wait', '30')
    bm.inspect_in_band(parent['uuid'], INVENTORY)
    out = tmp_path / 'inv.json'
    bm('node', 'inventory', 'save', parent['uuid'], '--file', str(out))
    assert json.loads(out.read_text())['inventory'] == INVENTORY
    # history: a failed clean step is recorded
    err = bm('node', 'service', parent['uuid'], '--service-steps',
             json.dumps(APPLY), ok=False)
    assert 'can not be performed' in err       # not active
    bm('node', 'clean', parent['uuid'], '--clean-steps', json.dumps(
        [{'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': 'not a list'}}]))
    bm.wait_state(parent['uuid'], 'clean failed')
    events = bm('node', 'history', 'list', parent['uuid'], '-f', 'json')
    assert events, 'no history event recorded for the failed cleaning'
    one = bm('node', 'history', 'get', parent['uuid'], events[-1]['uuid'],
             '-f', 'json')
    assert 'apply_configuration' in one['event']


@pytest.fixture(scope='module')
def bm112(server):
    return cli.CLI(server.endpoint, version='1.112')


def test_runbook_traits_and_description(bm112):
    bm = bm112
    rb = bm('runbook', 'create', '--name', 'enable-ht', '--description',
            'Enable hyperthreading', '--steps',
            json.dumps([dict(APPLY[0], order=0)]), '-f', 'json')
    assert rb['description'] == 'Enable hyperthreading'
    assert rb['traits'] == []
    bm('runbook', 'set', 'enable-ht', '--description', 'HT on')
    assert bm('runbook', 'show', 'enable-ht', '-f', 'json')[
        'description'] == 'HT on'
    bm('runbook', 'unset', 'enable-ht', '--description')
    assert bm('runbook', 'show', 'enable-ht', '-f', 'json')[
        'description'] is None
    bm('runbook', 'trait', 'add', 'enable-ht', 'CUSTOM_HT', 'CUSTOM_GPU')
    listed = bm('runbook', 'trait', 'list', 'enable-ht', '-f', 'json')
    assert sorted(t['traits'] for t in listed) == ['CUSTOM_GPU',
                                                   'CUSTOM_HT']
    err = bm('runbook', 'trait', 'add', 'enable-ht', 'not-a-trait',
             ok=False)
    assert 'not-a-trait' in err
    # a node with one of the runbook's traits may use it
    n = bm('node', 'create', '--driver', 'fake-hardware', '-f', 'json')
    bm('node', 'manage', n['uuid'], '--wait', '30')
    err = bm('node', 'clean', n['uuid'], '--runbook', 'enable-ht',
             ok=False)
    assert 'CUSTOM_GPU' in err
    bm('node', 'add', 'trait', n['uuid'], 'CUSTOM_GPU')
    bm('node', 'clean', n['uuid'], '--runbook', 'enable-ht')
    bm.wait(n['uuid'], 'manageable')
    assert _bios(bm, n['uuid']) == {'BootMode': 'Uefi'}
    bm('runbook', 'trait', 'remove', 'enable-ht', 'CUSTOM_GPU')
    assert [t['traits'] for t in bm('runbook', 'trait', 'list',
                                    'enable-ht', '-f', 'json')] == [
        'CUSTOM_HT']
    bm('runbook', 'trait', 'remove', 'enable-ht', '--all')
    assert bm('runbook', 'trait', 'list', 'enable-ht', '-f', 'json') == []
    bm('runbook', 'delete', 'enable-ht')


def test_instance_name_service_without_ramdisk_and_abort(bm112):
    bm = bm112
    n = bm('node', 'create', '--driver', 'fake-hardware', '--instance-name',
           'vm-cli', '-f', 'json')
    assert n['instance_name'] == 'vm-cli' and n['health'] is None
    found = bm('node', 'list', '--instance-name', 'vm-cli', '-f', 'json')
    assert [f['uuid'] for f in found] == [n['uuid']]
    bm('node', 'set', n['uuid'], '--instance-name', 'vm-cli-2')
    assert bm('node', 'list', '--instance-name', 'vm-cli', '-f',
              'json') == []
    bm('node', 'unset', n['uuid'], '--instance-name')
    assert bm('node', 'show', n['uuid'], '-f', 'json')[
        'instance_name'] is None
    bm('node', 'manage', n['uuid'], '--wait', '30')
    bm('node', 'provide', n['uuid'], '--wait', '30')
    # a deployment waiting in wait call-back can be aborted (1.110)
    bm('node', 'deploy', n['uuid'], '--deploy-steps', json.dumps(
        [{'interface': 'deploy', 'step': 'wait', 'priority': 90}]))
    bm.wait_state(n['uuid'], 'wait call-back')
    bm('node', 'abort', n['uuid'])
    node = bm.wait_state(n['uuid'], 'deploy failed')
    assert 'aborted' in node['last_error']
    bm('node', 'deploy', n['uuid'], '--wait', '30')
    # servicing without the ramdisk (1.108)
    bm('node', 'service', n['uuid'], '--disable-ramdisk',
       '--service-steps', json.dumps(APPLY))
    node = bm.wait(n['uuid'], 'active')
    assert node['last_error'] is None
    assert _bios(bm, n['uuid']) == {'BootMode': 'Uefi'}


def test_history_and_firmware_fields_of_1_113_to_1_115(server):
    bm = cli.CLI(server.endpoint, version='1.115')
    n = bm('node', 'create', '--driver', 'fake-hardware',
           '--firmware-interface', 'fake', '-f', 'json')
    bm('node', 'manage', n['uuid'], '--wait', '30')
    comps = {c['component']: c for c in bm(
        'node', 'firmware', 'list', n['uuid'], '-f', 'json')}
    assert comps['bmc']['initial_version'] == '1.0.0'
    bm('node', 'clean', n['uuid'], '--clean-steps', json.dumps(
        [{'interface': 'bios', 'step': 'apply_configuration',
          'args': {'settings': 'not a list'}}]))
    bm.wait_state(n['uuid'], 'clean failed')
    events = bm('node', 'history', 'list', n['uuid'], '--long', '-f',
                'json')
    assert len(events) == 1, events
    event = events[0]
    assert event['state'] == 'cleaning', event
    assert event['target_provision_state'] == 'manageable'
    assert isinstance(event['duration_seconds'], int)
    assert 'project' in event
