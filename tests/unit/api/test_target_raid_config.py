"""PUT /v1/nodes/{node}/states/raid checks the target with Ironic's RAID
schema and messages; a refused target leaves the node as it was; an
empty one clears it."""

import pytest

from tests import harness

GOOD = {'logical_disks': [
    {'size_gb': 100, 'raid_level': '1', 'is_root_volume': True},
    {'size_gb': 'MAX', 'raid_level': '5', 'controller': 'RAID.1',
     'physical_disks': ['d2', 'd3', 'd4']}]}


def _put(api, node, body):
    status, got, _ = api.request('PUT', '/v1/nodes/%s/states/raid' % node,
                                 body, version='1.12')
    return status, got


def _target(api, node):
    _, got, _ = api.request('GET', '/v1/nodes/%s' % node, version='1.12')
    return got['target_raid_config']


@pytest.mark.parametrize('body, message', [
    ({'logical_disks': 'x'},
     "RAID config validation error: 'x' is not of type 'array'"),
    ({'logical_disks': []},
     'RAID config validation error: [] '),
    ({'logical_disks': [{'size_gb': 10}]},
     "RAID config validation error: 'raid_level' is a required property"),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '7'}]},
     "RAID config validation error: '7' is not one of"),
    ({'logical_disks': [{'size_gb': -1, 'raid_level': '0'}]},
     'RAID config validation error: -1 is not valid under any of the '
     'given schemas'),
    ({'logical_disks': [{'size_gb': 1, 'raid_level': '0',
                         'physical_disks': ['a', 'b']}]},
     "RAID config validation error: 'controller' is a dependency of "
     "'physical_disks'"),
    ({'logical_disks': [{'size_gb': 1, 'raid_level': '0', 'x': 1}]},
     'RAID config validation error: Additional properties are not '
     'allowed'),
    ({'logical_disks': [{'size_gb': 1, 'raid_level': '0',
                         'is_root_volume': True}] * 2},
     'Raid config cannot have more than one root volume. 2 root volumes '
     'were specified'),
])
def test_bad_target_is_a_400_and_the_node_keeps_its_own(api, body,
                                                        message):
    node = api.create_node()['uuid']
    assert _put(api, node, GOOD)[0] == 204
    status, got = _put(api, node, body)
    assert status == 400
    assert message in harness.error_message(got)
    assert _target(api, node) == GOOD


def test_empty_target_clears_it(api):
    node = api.create_node()['uuid']
    assert _put(api, node, GOOD)[0] == 204
    assert _put(api, node, {})[0] == 204
    assert _target(api, node) == {}
