"""python-ironicclient's ``baremetal inspection rule`` commands (API
1.96) against a real baremetal-server, and a rule applied when an
agent's inventory arrives."""

import json

import pytest

from tests.functional import cli

INVENTORY = {
    'interfaces': [{'name': 'eth0', 'mac_address': '52:54:00:ee:00:01'}],
    'cpu': {'count': 16, 'architecture': 'x86_64'},
    'memory': {'physical_mb': 65536},
    'disks': [{'name': '/dev/vda', 'size': 100 * 1024 ** 3}],
}
LOG = [{'op': 'log', 'args': {'msg': 'hello'}}]
BIG = [{'op': 'gt', 'args': {'values': [
    '{inventory[memory][physical_mb]}', '32768']}}]


@pytest.fixture(scope='module')
def bm(server):
    return cli.CLI(server.endpoint, version='1.96')


@pytest.fixture(autouse=True)
def _no_rules_left(bm):
    """Each test starts without rules, whatever the last one left."""
    yield
    for rule in bm('inspection', 'rule', 'list', '-f', 'json'):
        bm('inspection', 'rule', 'delete', rule['uuid'])


def _create(bm, *args):
    return bm('inspection', 'rule', 'create', *args, '-f', 'json')


def test_rule_crud(bm):
    rule = _create(bm, '--description', 'big memory', '--priority', '20',
                   '--conditions', json.dumps(BIG),
                   '--actions', json.dumps(LOG))
    assert rule['description'] == 'big memory' and rule['priority'] == 20
    assert rule['conditions'] == BIG and rule['actions'] == LOG
    assert rule['phase'] == 'main' and rule['sensitive'] is False
    uuid = rule['uuid']
    listed = bm('inspection', 'rule', 'list', '-f', 'json')
    assert [r['uuid'] for r in listed] == [uuid]
    long = bm('inspection', 'rule', 'list', '--long', '-f', 'json')
    assert long[0]['conditions'] == BIG
    shown = bm('inspection', 'rule', 'show', uuid, '-f', 'json')
    assert shown['actions'] == LOG and 'links' not in shown
    some = bm('inspection', 'rule', 'show', uuid, '--fields', 'uuid',
              'priority', '-f', 'json')
    assert some == {'uuid': uuid, 'priority': 20}
    new_actions = [{'op': 'add-trait', 'args': {'name': 'CUSTOM_BIG'}}]
    bm('inspection', 'rule', 'set', uuid, '--priority', '30',
       '--description', 'large', '--actions', json.dumps(new_actions))
    shown = bm('inspection', 'rule', 'show', uuid, '-f', 'json')
    assert (shown['priority'], shown['description'], shown['actions']) == \
        (30, 'large', new_actions)
    bm('inspection', 'rule', 'unset', uuid, '--description', '--priority')
    shown = bm('inspection', 'rule', 'show', uuid, '-f', 'json')
    assert shown['description'] is None and shown['priority'] == 0
    out = bm('inspection', 'rule', 'delete', uuid)
    assert 'Deleted rule %s' % uuid in out
    assert bm('inspection', 'rule', 'list', '-f', 'json') == []
    err = bm('inspection', 'rule', 'show', uuid, ok=False)
    assert 'Rule %s could not be found' % uuid in err


def test_sensitive_rule_is_masked(bm):
    rule = _create(bm, '--sensitive', 'true', '--conditions',
                   json.dumps(BIG), '--actions', json.dumps(LOG))
    assert rule['sensitive'] is True
    assert rule['conditions'] is None and rule['actions'] is None
    shown = bm('inspection', 'rule', 'show', rule['uuid'], '-f', 'json')
    assert shown['conditions'] is None and shown['actions'] is None
    long = bm('inspection', 'rule', 'list', '--long', '-f', 'json')
    assert [(r['conditions'], r['actions']) for r in long] == [(None, None)]
    bm('inspection', 'rule', 'delete', rule['uuid'])


def test_bad_rules_are_refused_with_the_reason(bm):
    err = bm('inspection', 'rule', 'create', '--conditions', '[]',
             '--actions', json.dumps([{'op': 'explode', 'args': {}}]),
             ok=False)
    assert 'Unsupported action operator: explode' in err
    err = bm('inspection', 'rule', 'create', '--conditions', '[]',
             '--priority', '10000', '--actions', json.dumps(LOG), ok=False)
    assert 'Priority must be between 0 and 9999' in err
    err = bm('inspection', 'rule', 'create', '--conditions', json.dumps(
        [{'op': 'eq', 'args': {'value': 1}}]), '--actions', json.dumps(LOG),
        ok=False)
    assert 'missing required argument(s): values' in err
    assert bm('inspection', 'rule', 'list', '-f', 'json') == []


def test_rule_applies_on_in_band_inspection(bm):
    rule = _create(bm, '--conditions', json.dumps(BIG), '--actions',
                   json.dumps([
                       {'op': 'add-trait', 'args': {'name': 'CUSTOM_BIG'}},
                       {'op': 'set-attribute', 'args': {
                           'path': '/properties/memory_class',
                           'value': 'big'}},
                       {'op': 'set-capability', 'args': {
                           'name': 'cpu_arch',
                           'value': '{inventory[cpu][architecture]}'}}]))
    n = bm('node', 'create', '--driver', 'fake-hardware',
           '--inspect-interface', 'agent', '-f', 'json')
    bm('port', 'create', INVENTORY['interfaces'][0]['mac_address'],
       '--node', n['uuid'])
    bm('node', 'manage', n['uuid'], '--wait', '30')
    node = bm.inspect_in_band(n['uuid'], INVENTORY)
    assert node['properties']['memory_class'] == 'big'
    assert node['properties']['memory_mb'] == 65536
    assert 'cpu_arch:x86_64' in node['properties']['capabilities']
    traits = bm('node', 'trait', 'list', n['uuid'], '-f', 'json')
    assert [t['traits'] for t in traits] == ['CUSTOM_BIG']
    bm('inspection', 'rule', 'delete', rule['uuid'])
