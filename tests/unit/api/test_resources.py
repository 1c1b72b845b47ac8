"""Portgroups, volume connectors/targets, allocations, deploy templates
and events: CRUD, version gates and bad input."""

import threading
import time

import pytest

from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations
from tests import harness


def test_portgroups_crud_and_gates(api):
    n = api.create_node()
    status, pg, headers = api.request('POST', '/v1/portgroups', {
        'node_uuid': n['uuid'], 'address': '52:54:00:aa:bb:cc',
        'name': 'bond0', 'mode': '802.3ad', 'properties': {'miimon': 100}})
    assert status == 201, pg
    assert headers['Location'].endswith('/v1/portgroups/' + pg['uuid'])
    status, port, _ = api.request('POST', '/v1/ports', {
        'node_uuid': n['uuid'], 'address': '52:54:00:00:00:01',
        'portgroup_uuid': pg['uuid']})
    assert status == 201, port
    status, body, _ = api.request('GET', '/v1/portgroups/bond0/ports')
    assert [p['uuid'] for p in body['ports']] == [port['uuid']]
    status, body, _ = api.request('GET', '/v1/nodes/%s/portgroups'
                                  % n['uuid'])
    assert [p['name'] for p in body['portgroups']] == ['bond0']
    status, body, _ = api.request('GET', '/v1/portgroups/bond0',
                                  version='1.25')
    assert status == 200 and 'mode' not in body
    status, _, _ = api.request('GET', '/v1/portgroups', version='1.22')
    assert status == 404
    status, body, _ = api.request('DELETE', '/v1/portgroups/bond0')
    assert status == 409
    api.request('DELETE', '/v1/ports/%s' % port['uuid'])
    status, body, _ = api.request('PATCH', '/v1/portgroups/bond0', [
        {'op': 'replace', 'path': '/mode', 'value': 'active-backup'}])
    assert status == 200 and body['mode'] == 'active-backup'
    status, _, _ = api.request('DELETE', '/v1/portgroups/bond0')
    assert status == 204


@pytest.mark.parametrize('body', [
    {'address': '52:54:00:aa:bb:cc'},
    {'node_uuid': 'x', 'address': 'nope'},
    {'node_uuid': 'x', 'name': 'has space'},
    {'node_uuid': 'x', 'properties': []},
])
def test_portgroup_bad_input(api, body):
    n = api.create_node()
    if body.get('node_uuid') == 'x':
        body = dict(body, node_uuid=n['uuid'])
    status, resp, _ = api.request('POST', '/v1/portgroups', body)
    assert status == 400, resp


def test_volume_connectors_and_targets(api):
    n = api.create_node()
    status, c, _ = api.request('POST', '/v1/volume/connectors', {
        'node_uuid': n['uuid'], 'type': 'iqn',
        'connector_id': 'iqn.2017-05.org.openstack:01:d9a51732c3f'})
    assert status == 201, c
    status, t, _ = api.request('POST', '/v1/volume/targets', {
        'node_uuid': n['uuid'], 'volume_type': 'iscsi', 'boot_index': 0,
        'volume_id': '04452bed-5367-4202-8bf5-de4335ac56d2'})
    assert status == 201, t
    status, body, _ = api.request('GET', '/v1/nodes/%s/volume/targets'
                                  % n['uuid'])
    assert [x['uuid'] for x in body['targets']] == [t['uuid']]
    status, body, _ = api.request('GET', '/v1/volume')
    assert 'connectors' in body and 'targets' in body
    # ?detail= came with the volume endpoints (1.32), not with 1.43
    status, body, _ = api.request('GET', '/v1/volume/targets?node=%s'
                                  '&detail=True' % n['uuid'], version='1.32')
    assert status == 200 and body['targets'][0]['extra'] == {}, body
    status, body, _ = api.request('GET', '/v1/volume/connectors?detail=1',
                                  version='1.32')
    assert status == 200 and 'extra' in body['connectors'][0], body
    status, _, _ = api.request('GET', '/v1/volume', version='1.31')
    assert status == 404
    status, body, _ = api.request('POST', '/v1/volume/connectors', {
        'node_uuid': n['uuid'], 'type': 'floppy', 'connector_id': 'x'})
    assert status == 400
    status, body, _ = api.request('POST', '/v1/volume/targets', {
        'node_uuid': n['uuid'], 'volume_type': 'iscsi', 'boot_index': 0,
        'volume_id': 'another'})
    assert status == 409
    assert api.request('DELETE', '/v1/volume/connectors/%s'
                       % c['uuid'])[0] == 204


def _wait_allocation(api, ident, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        status, body, _ = api.request('GET', '/v1/allocations/%s' % ident)
        if body['state'] != 'allocating':
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.01)


def test_allocation_waits_for_a_node_locked_for_a_moment(api):
    """The only matching node is locked by a task finishing (or a
    periodic check) when the allocation looks: it gets the node once the
    lock is gone, as Ironic's allocation waits for a node; one locked for
    longer than [conductor]node_locked_retry_* allow fails with the
    error."""
    # a wait of 1 s (the unit tests' default is 0.1 s)
    harness.CONF.set_override('node_locked_retry_interval', 0.5,
                              group='conductor')
    try:
        _allocation_waits(api)
    finally:
        harness.CONF.set_override('node_locked_retry_interval', 0.05,
                                  group='conductor')


def _allocation_waits(api):
    n = api.make_available(resource_class='amber')
    row = api.node(n['uuid'])
    nid = db_nodes.get_node(row['uuid'])['id']
    assert db_reservations.reserve_node('other-host', nid)
    threading.Timer(0.3, db_reservations.release_node,
                    ('other-host', nid, {})).start()
    status, alloc, _ = api.request('POST', '/v1/allocations', {
        'resource_class': 'amber'})
    assert status == 201, alloc
    alloc = _wait_allocation(api, alloc['uuid'])
    assert alloc['state'] == 'active', alloc
    assert alloc['node_uuid'] == n['uuid']
    status, _, _ = api.request('DELETE', '/v1/allocations/%s'
                               % alloc['uuid'])
    assert status == 204
    # held past the wait: the allocation fails
    assert db_reservations.reserve_node('other-host', nid)
    try:
        status, alloc, _ = api.request('POST', '/v1/allocations', {
            'resource_class': 'amber'})
        alloc = _wait_allocation(api, alloc['uuid'], timeout=15)
        assert alloc['state'] == 'error', alloc
        assert 'No available nodes' in alloc['last_error']
    finally:
        db_reservations.release_node('other-host', nid, {})


def test_allocation_picks_a_matching_node(api):
    a = api.make_available(resource_class='gold')
    b = api.make_available(resource_class='gold')
    api.request('PUT', '/v1/nodes/%s/traits' % b['uuid'],
                {'traits': ['CUSTOM_GPU']})
    status, alloc, _ = api.request('POST', '/v1/allocations', {
        'resource_class': 'gold', 'traits': ['CUSTOM_GPU'],
        'name': 'job-1'})
    assert status == 201, alloc
    assert alloc['state'] == 'allocating'  # a conductor worker picks
    alloc = _wait_allocation(api, alloc['uuid'])
    assert alloc['state'] == 'active' and alloc['node_uuid'] == b['uuid']
    node = api.node(b['uuid'])
    assert node['allocation_uuid'] == alloc['uuid']
    assert node['instance_uuid'] == alloc['uuid']
    # the requested traits go to instance_info (deploy templates)
    assert node['instance_info'] == {'traits': ['CUSTOM_GPU']}
    status, body, _ = api.request('GET', '/v1/nodes/%s/allocation'
                                  % b['uuid'])
    assert body['uuid'] == alloc['uuid']
    # no second GPU node: error with a reason
    status, again, _ = api.request('POST', '/v1/allocations', {
        'resource_class': 'gold', 'traits': ['CUSTOM_GPU']})
    again = _wait_allocation(api, again['uuid'])
    assert again['state'] == 'error' and 'CUSTOM_GPU' in again['last_error']
    status, _, _ = api.request('DELETE', '/v1/allocations/job-1')
    assert status == 204
    assert api.node(b['uuid'])['instance_uuid'] is None
    assert api.node(a['uuid'])['allocation_uuid'] is None


def test_allocation_gates_and_patch(api):
    status, _, _ = api.request('GET', '/v1/allocations', version='1.51')
    assert status == 404
    status, body, _ = api.request('POST', '/v1/allocations', {})
    assert status == 400
    status, alloc, _ = api.request('POST', '/v1/allocations',
                                   {'resource_class': 'x'})
    status, body, _ = api.request('PATCH', '/v1/allocations/%s'
                                  % alloc['uuid'], [
        {'op': 'add', 'path': '/extra/a', 'value': 1}], version='1.56')
    assert status == 405 or status == 404
    status, body, _ = api.request('PATCH', '/v1/allocations/%s'
                                  % alloc['uuid'], [
        {'op': 'add', 'path': '/extra/a', 'value': 1}])
    assert status == 200 and body['extra'] == {'a': 1}
    status, body, _ = api.request('PATCH', '/v1/allocations/%s'
                                  % alloc['uuid'], [
        {'op': 'replace', 'path': '/state', 'value': 'active'}])
    assert status == 400
    n = api.make_available(resource_class='rc')
    status, body, _ = api.request('POST', '/v1/allocations', {
        'node': n['uuid']}, version='1.57')
    assert status == 406
    # backfilling, as Ironic: only an active node, matching what is asked
    status, body, _ = api.request('POST', '/v1/allocations', {
        'node': n['uuid']})
    assert status == 409
    assert 'must be in the "active" state' in harness.error_message(body)
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'active')
    for ask, words in (({'resource_class': 'other'}, 'Resource class rc'),
                       ({'traits': ['CUSTOM_NOPE']}, 'CUSTOM_NOPE'),
                       ({'candidate_nodes': [a['uuid'] for a in (
                           api.create_node(),)]}, 'Candidate nodes')):
        status, body, _ = api.request('POST', '/v1/allocations',
                                      dict(ask, node=n['uuid']))
        assert status == 409 and words in harness.error_message(body), body
    status, body, _ = api.request('GET', '/v1/allocations')
    assert [x['uuid'] for x in body['allocations']] == [alloc['uuid']]
    status, body, _ = api.request('POST', '/v1/allocations', {
        'node': n['uuid']})
    assert status == 201 and body['node_uuid'] == n['uuid']
    assert body['state'] == 'active'
    assert api.node(n['uuid'])['instance_info']['traits'] == []
    # no traits asked for: an empty list of them, as Ironic records
    m = api.make_available(resource_class='plain')
    status, alloc, _ = api.request('POST', '/v1/allocations',
                                   {'resource_class': 'plain'})
    assert _wait_allocation(api, alloc['uuid'])['node_uuid'] == m['uuid']
    assert api.node(m['uuid'])['instance_info'] == {'traits': []}


def test_deploy_templates_crud(api):
    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': []}, 'priority': 150}]
    status, t, _ = api.request('POST', '/v1/deploy_templates', {
        'name': 'CUSTOM_HT_ON', 'steps': steps})
    assert status == 201, t
    assert t['steps'] == steps
    status, body, _ = api.request('GET', '/v1/deploy_templates')
    assert [x['name'] for x in body['deploy_templates']] == ['CUSTOM_HT_ON']
    status, body, _ = api.request('PATCH', '/v1/deploy_templates/%s'
                                  % t['uuid'], [
        {'op': 'replace', 'path': '/name', 'value': 'CUSTOM_HT_OFF'}])
    assert status == 200 and body['name'] == 'CUSTOM_HT_OFF'
    for bad in ({'name': 'lower', 'steps': steps},
                {'name': 'CUSTOM_X', 'steps': []},
                {'name': 'CUSTOM_X', 'steps': [{'interface': 'x',
                                                'step': 'y',
                                                'priority': 1}]},
                {'name': 'CUSTOM_X', 'steps': [dict(steps[0],
                                                    priority=-1)]}):
        status, body, _ = api.request('POST', '/v1/deploy_templates', bad)
        assert status == 400, (bad, body)
    status, _, _ = api.request('GET', '/v1/deploy_templates',
                               version='1.54')
    assert status == 404
    assert api.request('DELETE', '/v1/deploy_templates/%s'
                       % t['uuid'])[0] == 204


def test_events(api):
    ev = {'event': 'network.bind_port', 'port_id': 'p1',
          'mac_address': '52:54:00:00:00:01', 'status': 'ACTIVE'}
    status, body, _ = api.request('POST', '/v1/events', {'events': [ev]})
    assert status == 204, body
    for bad in ({'events': []}, {'events': [dict(ev, event='x')]},
                {'events': [dict(ev, colour='red')]}, {'other': 1},
                {'events': [{'event': 'network.bind_port'}]}):
        status, body, _ = api.request('POST', '/v1/events', bad)
        assert status == 400, (bad, body)
        assert harness.error_message(body)
    status, _, _ = api.request('POST', '/v1/events', {'events': [ev]},
                               version='1.53')
    assert status == 404
