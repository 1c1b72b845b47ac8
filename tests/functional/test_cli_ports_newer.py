"""python-ironicclient's ``baremetal port`` and ``baremetal port group``
commands over the fields and filters of API 1.97 to 1.111 (description,
vendor, category, the port group's physical network and category, the
port group shard filter, dynamic port group flags) against a real
baremetal-server."""

import pytest

from tests.functional import cli


@pytest.fixture(scope='module')
def bm(server):
    return cli.CLI(server.endpoint, version='1.111')


@pytest.fixture(scope='module')
def node(bm):
    return bm('node', 'create', '--driver', 'fake-hardware', '--name',
              'cli-ports-newer', '--shard', 'shard-a', '-f', 'json')['uuid']


def test_port_description_vendor_and_category(bm, server, node):
    port = bm('port', 'create', '52:54:00:97:01:01', '--node', node,
              '--description', 'rack 7 uplink', '--vendor', 'acme',
              '--category', 'storage', '-f', 'json')
    assert (port['vendor'], port['category']) == ('acme', 'storage')
    uuid = port['uuid']
    # create prints the client's own columns; show prints them all
    got = bm('port', 'show', uuid, '-f', 'json')
    assert got['description'] == 'rack 7 uplink'
    assert got['available_for_dynamic_portgroup'] is True
    bm('port', 'set', uuid, '--description', 'spare', '--vendor', 'other',
       '--category', 'mgmt')
    got = bm('port', 'show', uuid, '-f', 'json')
    assert (got['description'], got['vendor'], got['category']) == \
        ('spare', 'other', 'mgmt')
    listed = bm('port', 'list', '--node', node, '--long', '-f', 'json')
    assert [(p['vendor'], p['category']) for p in listed] == \
        [('other', 'mgmt')]
    bm('port', 'unset', uuid, '--description', '--vendor', '--category')
    got = bm('port', 'show', uuid, '-f', 'json')
    assert (got['description'], got['vendor'], got['category']) == \
        (None, None, None)
    # validated by the server
    err = bm('port', 'set', uuid, '--vendor', 'v' * 33, ok=False)
    # Ironic 39's words (the patched port against its schema)
    assert "'%s' is too long" % ('v' * 33) in err, err
    # and refused by older versions
    old = cli.CLI(server.endpoint, version='1.96')
    err = old('port', 'create', '52:54:00:97:01:02', '--node', node,
              '--description', 'too new', ok=False)
    # the client's words for a 406
    assert 'not supported by the requested version' in err, err
    assert 'description' not in old('port', 'show', uuid, '-f', 'json')
    bm('port', 'delete', uuid)


def test_port_group_physical_network_and_category(bm, server, node):
    pg = bm('port', 'group', 'create', '--node', node, '--name',
            'bond-newer', '--physical-network', 'physnet1', '--category',
            'uplinks', '-f', 'json')
    assert (pg['physical_network'], pg['category']) == \
        ('physnet1', 'uplinks')
    assert bm('port', 'group', 'show', pg['uuid'], '-f', 'json')[
        'dynamic_portgroup'] is False
    # a port names its group by UUID (portgroup_uuid), as in Ironic
    port = bm('port', 'create', '52:54:00:97:02:01', '--node', node,
              '--port-group', pg['uuid'], '--physical-network',
              'physnet1', '-f', 'json')
    assert port['portgroup_uuid'] == pg['uuid']
    # a port on another network may not join
    err = bm('port', 'create', '52:54:00:97:02:02', '--node', node,
             '--port-group', pg['uuid'], '--physical-network',
             'physnet9', ok=False)
    assert 'physnet1' in err
    # the group's network is its ports'
    bm('port', 'group', 'set', 'bond-newer', '--physical-network',
       'physnet2', '--category', 'spine')
    got = bm('port', 'group', 'show', 'bond-newer', '-f', 'json')
    assert (got['physical_network'], got['category']) == \
        ('physnet2', 'spine')
    assert bm('port', 'show', port['uuid'], '-f', 'json')[
        'physical_network'] == 'physnet2'
    err = bm('port', 'set', port['uuid'], '--physical-network', 'physnet3',
             ok=False)
    assert 'physical_network cannot be changed' in err
    bm('port', 'group', 'unset', 'bond-newer', '--physical-network',
       '--category')
    got = bm('port', 'group', 'show', 'bond-newer', '-f', 'json')
    assert (got['physical_network'], got['category']) == (None, None)
    assert bm('port', 'show', port['uuid'], '-f', 'json')[
        'physical_network'] is None
    # hidden from older versions
    old = cli.CLI(server.endpoint, version='1.101')
    got = old('port', 'group', 'show', 'bond-newer', '-f', 'json')
    assert 'physical_network' not in got and 'category' not in got
    bm('port', 'delete', port['uuid'])
    bm('port', 'group', 'delete', 'bond-newer')


def test_port_group_list_by_shard(bm, node):
    other = bm('node', 'create', '--driver', 'fake-hardware', '--shard',
               'shard-b', '-f', 'json')['uuid']
    a = bm('port', 'group', 'create', '--node', node, '-f', 'json')
    b = bm('port', 'group', 'create', '--node', other, '-f', 'json')
    listed = bm('port', 'group', 'list', '--shards', 'shard-a', '-f',
                'json')
    assert [g['uuid'] for g in listed] == [a['uuid']]
    listed = bm('port', 'group', 'list', '--shards', 'shard-a', 'shard-b',
                '-f', 'json')
    assert {g['uuid'] for g in listed} == {a['uuid'], b['uuid']}
    err = cli.CLI(bm.env['OS_ENDPOINT'], version='1.105')(
        'port', 'group', 'list', '--shards', 'shard-a', ok=False)
    assert 'not supported by the requested version' in err, err
    for g in (a, b):
        bm('port', 'group', 'delete', g['uuid'])
