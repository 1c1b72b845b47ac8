"""Versioned notifications over a real RabbitMQ, as Ironic's consumers
receive them: baremetal-api and a baremetal-conductor (PostgreSQL) with
``notification_level = info`` on a topic of this test's own (in a vhost
of its own), an oslo.messaging notification listener in this process.

One node goes through create, update, maintenance on and off, manage,
provide, power on and off, deploy, undeploy and delete (the power
actions the conductor takes itself, at deploy and tear-down, included),
with chassis, volume connector and target, port, port group, allocation
and deploy template CRUD beside it; each
step's notifications are checked against Ironic's documentation
(admin/notifications.rst and its payload classes): event types in
order, publisher, priority, payload object name, namespace, version,
and every field with its type.  Field lists are written out here, not
taken from the code under test."""

import re
import threading
import time

import pytest

from tests import services
from tests.functional import notification_listener
from tests.functional.cluster import Cluster
from tests.functional.cluster import call

ISO = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
UUID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}$')

# field kinds: S string, B boolean, D dict, L list, T time, U uuid
# (each may be null unless upper-cased with a "!")
_NODE = dict(
    {f: 'S' for f in (
        'conductor_group', 'description', 'driver', 'boot_mode',
        'last_error', 'maintenance_reason', 'fault', 'name', 'owner',
        'lessee', 'power_state', 'protected_reason', 'provision_state',
        'resource_class', 'retired_reason', 'target_power_state',
        'target_provision_state') + tuple(
        '%s_interface' % i for i in (
            'bios', 'boot', 'console', 'deploy', 'inspect', 'management',
            'network', 'power', 'raid', 'rescue', 'storage', 'vendor'))},
    **{f: 'B' for f in ('console_enabled', 'disable_power_off',
                        'secure_boot', 'maintenance', 'protected',
                        'retired')},
    **{f: 'D' for f in ('clean_step', 'deploy_step', 'extra',
                        'properties')},
    **{f: 'T' for f in ('created_at', 'inspection_finished_at',
                        'inspection_started_at', 'provision_updated_at',
                        'updated_at')},
    instance_uuid='U', traits='L!', uuid='U!')

PAYLOADS = {
    'NodePayload': ('1.17', _NODE),
    'NodeSetPowerStatePayload': ('1.17', dict(_NODE, to_power='S')),
    'NodeSetProvisionStatePayload': ('1.18', dict(
        _NODE, instance_info='D', driver_internal_info='D', event='S',
        previous_provision_state='S',
        previous_target_provision_state='S')),
    'NodeCRUDPayload': ('1.15', dict(_NODE, chassis_uuid='U',
                                     instance_info='D', driver_info='D')),
    'ChassisCRUDPayload': ('1.0', dict(description='S', extra='D',
                                       created_at='T', updated_at='T',
                                       uuid='U!')),
    'PortCRUDPayload': ('1.8', dict(
        address='S', extra='D', local_link_connection='D',
        pxe_enabled='B', node_uuid='U!', portgroup_uuid='U',
        physical_network='S', created_at='T', updated_at='T', uuid='U!',
        is_smartnic='B', name='S', description='S', vendor='S',
        category='S', available_for_dynamic_portgroup='B!')),
    'PortgroupCRUDPayload': ('1.3', dict(
        address='S', category='S', extra='D', mode='S', name='S',
        node_uuid='U!', physical_network='S', properties='D',
        standalone_ports_supported='B', created_at='T', updated_at='T',
        uuid='U!', dynamic_portgroup='B')),
    'AllocationCRUDPayload': ('1.1', dict(
        uuid='U', name='S', node_uuid='S', state='S', last_error='S',
        owner='S', resource_class='S', traits='L', candidate_nodes='L',
        extra='D', created_at='T', updated_at='T')),
    'DeployTemplateCRUDPayload': ('1.0', dict(
        created_at='T', extra='D', name='S!', steps='L!', updated_at='T',
        uuid='U!')),
    'VolumeConnectorCRUDPayload': ('1.0', dict(
        extra='D', type='S', connector_id='S', node_uuid='U!',
        created_at='T', updated_at='T', uuid='U!')),
    'VolumeTargetCRUDPayload': ('1.0', dict(
        boot_index='I', extra='D', node_uuid='U!', properties='D',
        volume_id='S', volume_type='S', created_at='T', updated_at='T',
        uuid='U!')),
}

_CHECK = {'S': lambda v: isinstance(v, str),
          'B': lambda v: isinstance(v, bool),
          'D': lambda v: isinstance(v, dict),
          'I': lambda v: isinstance(v, int) and not isinstance(v, bool),
          'L': lambda v: isinstance(v, list),
          'T': lambda v: isinstance(v, str) and bool(ISO.match(v)),
          'U': lambda v: isinstance(v, str) and bool(UUID.match(v))}


def check_payload(msg: dict) -> dict:
    """The payload is Ironic's object of its name: namespace, version,
    exactly the documented fields, each of its type; returns the data."""
    p = msg['payload']
    name = p['ironic_object.name']
    version, fields = PAYLOADS[name]
    assert p['ironic_object.namespace'] == 'ironic', msg
    assert p['ironic_object.version'] == version, msg
    data = p['ironic_object.data']
    assert set(data) == set(fields), (name, set(data) ^ set(fields))
    for f, kind in fields.items():
        v = data[f]
        if v is None and not kind.endswith('!'):
            continue
        assert _CHECK[kind[0]](v), (msg['event_type'], f, v)
    return data


class Collector:
    """Every notification the listener got, with its priority."""

    def __init__(self) -> None:
        self.got: list[dict] = []
        self.cond = threading.Condition()

    def _add(self, priority, ctxt, publisher_id, event_type, payload,
             metadata):
        with self.cond:
            self.got.append({'priority': priority, 'event_type': event_type,
                             'publisher_id': publisher_id,
                             'payload': payload, 'metadata': metadata})
            self.cond.notify_all()

    def info(self, *a):
        self._add('info', *a)

    def error(self, *a):
        self._add('error', *a)

    def warn(self, *a):
        self._add('warning', *a)

    def take(self, n: int, timeout: float = 60) -> list[dict]:
        """The next ``n`` notifications (by send time)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.got) < n:
                left = deadline - time.monotonic()
                assert left > 0, 'got %s, wanted %d notifications' % (
                    [m['event_type'] for m in self.got], n)
                self.cond.wait(left)
            time.sleep(0.3)    # nothing more should come
            out = sorted(self.got, key=lambda m: m['metadata']['timestamp'])
            self.got = []
        return out


@pytest.fixture
def listener():
    """(rabbit URL, topic, collector): an oslo.messaging notification
    listener on a topic and vhost of this test's own."""
    with notification_listener.listening(
            Collector(), 'ironic_versioned_notifications') as bus:
        yield bus


@pytest.fixture
def bus(tmp_path, listener):
    """(cluster, collector): baremetal-api and one conductor sending
    notifications at info to the listener's topic."""
    url, topic, col = listener
    cluster = None
    try:
        cluster = Cluster(tmp_path, services.postgresql_url(), url,
                          conductors=1, DEFAULT={
                              'notification_level': 'info',
                              'host': 'api-host',
                              'versioned_notifications_topics': topic})
        cluster.wait_conductors(['cond-0'])
        yield cluster, col
    except Exception:
        if cluster is not None:
            print(cluster.logs())
        raise
    finally:
        if cluster is not None:
            cluster.stop()


def expect(col: Collector, events: list[tuple[str, str]],
           api: str = 'api-host', conductor: str = 'cond-0'
           ) -> list[dict]:
    """The next notifications are ``events`` ((event type, payload
    name)) in this order, each a valid payload; API events from
    ironic-api.<api> at info (error for .error), conductor ones from
    ironic-conductor.<conductor>."""
    got = col.take(len(events))
    assert [(m['event_type'], m['payload']['ironic_object.name'])
            for m in got] == events
    for m in got:
        check_payload(m)
        level = 'error' if m['event_type'].endswith('.error') else 'info'
        assert m['priority'] == level, m
        conductor_side = any(a in m['event_type'] for a in (
            '.provision_set.', '.power_set.', '.console_set.',
            '.power_state_corrected.'))
        assert m['publisher_id'] == (
            'ironic-conductor.' + conductor if conductor_side
            else 'ironic-api.' + api), m
    return got


def crud(kind: str, payload: str, action: str, status='end'):
    return [('baremetal.%s.%s.start' % (kind, action), payload),
            ('baremetal.%s.%s.%s' % (kind, action, status), payload)]


def data(msg):
    return msg['payload']['ironic_object.data']


def ok(st, body, want=(200, 201, 202, 204)):
    assert st in want, body
    return body


def wait_state(ep, uuid, state, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        st, node = call(ep, 'GET', '/v1/nodes/%s' % uuid)
        if node.get('provision_state') == state and \
                node.get('target_power_state') is None:
            return node
        assert time.monotonic() < deadline, node
        time.sleep(0.2)


def test_notifications_of_a_nodes_life_on_rabbitmq(bus):
    cluster, col = bus
    ep = cluster.api.endpoint
    PS = 'NodeSetProvisionStatePayload'

    chassis = ok(*call(ep, 'POST', '/v1/chassis', {'description': 'rack'}))
    got = expect(col, crud('chassis', 'ChassisCRUDPayload', 'create'))
    assert data(got[1])['uuid'] == chassis['uuid']
    assert data(got[0])['uuid'] == chassis['uuid']

    node = ok(*call(ep, 'POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'name': 'n1',
        'chassis_uuid': chassis['uuid'], 'resource_class': 'baremetal',
        'driver_info': {'fake_password': 'secret', 'x': 1}}))
    u = node['uuid']
    got = expect(col, crud('node', 'NodeCRUDPayload', 'create'))
    for m in got:
        d = data(m)
        assert (d['uuid'], d['chassis_uuid'], d['provision_state']) == \
            (u, chassis['uuid'], 'enroll')
        assert d['driver_info'] == {'fake_password': '******', 'x': 1}

    ok(*call(ep, 'PATCH', '/v1/nodes/%s' % u,
             [{'op': 'add', 'path': '/extra/rack', 'value': 'r1'}]))
    got = expect(col, crud('node', 'NodeCRUDPayload', 'update'))
    assert data(got[1])['extra'] == {'rack': 'r1'}

    ok(*call(ep, 'PUT', '/v1/nodes/%s/maintenance' % u, {'reason': 'fw'}))
    got = expect(col, crud('node', 'NodePayload', 'maintenance_set'))
    assert (data(got[1])['maintenance'],
            data(got[1])['maintenance_reason']) == (True, 'fw')
    ok(*call(ep, 'DELETE', '/v1/nodes/%s/maintenance' % u))
    got = expect(col, crud('node', 'NodePayload', 'maintenance_set'))
    assert data(got[1])['maintenance'] is False

    for verb, state, between in (('manage', 'manageable', 'verifying'),
                                 ('provide', 'available', 'cleaning')):
        ok(*call(ep, 'PUT', '/v1/nodes/%s/states/provision' % u,
                 {'target': verb}))
        wait_state(ep, u, state)
        got = expect(col, [('baremetal.node.provision_set.start', PS),
                           ('baremetal.node.provision_set.end', PS)])
        assert [(data(m)['previous_provision_state'],
                 data(m)['provision_state'], data(m)['event'])
                for m in got] == [
            (got[0]['payload']['ironic_object.data'][
                'previous_provision_state'], between, verb),
            (between, state, 'done')]

    for target in ('power on', 'power off'):
        ok(*call(ep, 'PUT', '/v1/nodes/%s/states/power' % u,
                 {'target': target}))
        wait_state(ep, u, 'available')
        got = expect(col, [
            ('baremetal.node.power_set.start', 'NodeSetPowerStatePayload'),
            ('baremetal.node.power_set.end', 'NodeSetPowerStatePayload')])
        assert [data(m)['to_power'] for m in got] == [target, target]
        assert data(got[1])['power_state'] == target

    for kind, body, payload in (
            ('connectors', {'type': 'iqn', 'connector_id': 'iqn.2017-05.x'},
             'VolumeConnectorCRUDPayload'),
            ('targets', {'volume_type': 'iscsi', 'volume_id': 'v1',
                         'boot_index': 0,
                         'properties': {'auth_password': 'chap'}},
             'VolumeTargetCRUDPayload')):
        what = 'volume' + kind[:-1]
        vol = ok(*call(ep, 'POST', '/v1/volume/%s' % kind,
                       dict(body, node_uuid=u)))
        got = expect(col, crud(what, payload, 'create'))
        assert (data(got[1])['uuid'], data(got[1])['node_uuid']) == \
            (vol['uuid'], u)
        if kind == 'targets':
            assert data(got[1])['properties'] == {
                'auth_password': '******'}
        ok(*call(ep, 'PATCH', '/v1/volume/%s/%s' % (kind, vol['uuid']),
                 [{'op': 'add', 'path': '/extra/k', 'value': 'v'}]))
        got = expect(col, crud(what, payload, 'update'))
        assert data(got[1])['extra'] == {'k': 'v'}
        ok(*call(ep, 'DELETE', '/v1/volume/%s/%s' % (kind, vol['uuid'])))
        expect(col, crud(what, payload, 'delete'))

    port = ok(*call(ep, 'POST', '/v1/ports', {
        'node_uuid': u, 'address': '52:54:00:aa:bb:01'}))
    got = expect(col, crud('port', 'PortCRUDPayload', 'create'))
    assert (data(got[1])['uuid'], data(got[1])['node_uuid'],
            data(got[1])['address']) == (port['uuid'], u,
                                         '52:54:00:aa:bb:01')
    # the same MAC again: start, then error (at ERROR), nothing created
    ok(*call(ep, 'POST', '/v1/ports', {
        'node_uuid': u, 'address': '52:54:00:aa:bb:01'}), want=(409,))
    expect(col, crud('port', 'PortCRUDPayload', 'create', 'error'))

    pg = ok(*call(ep, 'POST', '/v1/portgroups', {
        'node_uuid': u, 'name': 'bond0', 'address': '52:54:00:aa:bb:02'}))
    got = expect(col, crud('portgroup', 'PortgroupCRUDPayload', 'create'))
    assert data(got[1])['uuid'] == pg['uuid']
    ok(*call(ep, 'PATCH', '/v1/ports/%s' % port['uuid'], [
        {'op': 'add', 'path': '/portgroup_uuid', 'value': pg['uuid']}]))
    got = expect(col, crud('port', 'PortCRUDPayload', 'update'))
    assert data(got[1])['portgroup_uuid'] == pg['uuid']
    ok(*call(ep, 'PATCH', '/v1/portgroups/%s' % pg['uuid'], [
        {'op': 'add', 'path': '/extra/k', 'value': 'v'}]))
    got = expect(col, crud('portgroup', 'PortgroupCRUDPayload', 'update'))
    assert data(got[1])['extra'] == {'k': 'v'}

    tmpl = ok(*call(ep, 'POST', '/v1/deploy_templates', {
        'name': 'CUSTOM_HT_ON', 'steps': [{
            'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': []}, 'priority': 150}]}))
    got = expect(col, crud('deploytemplate', 'DeployTemplateCRUDPayload',
                           'create'))
    for m in got:
        assert data(m)['name'] == 'CUSTOM_HT_ON'
        assert data(m)['steps'][0]['step'] == 'apply_configuration'
    ok(*call(ep, 'PATCH', '/v1/deploy_templates/%s' % tmpl['uuid'], [
        {'op': 'add', 'path': '/extra/k', 'value': 1}]))
    got = expect(col, crud('deploytemplate', 'DeployTemplateCRUDPayload',
                           'update'))
    assert data(got[1])['extra'] == {'k': 1}
    ok(*call(ep, 'DELETE', '/v1/deploy_templates/%s' % tmpl['uuid']))
    expect(col, crud('deploytemplate', 'DeployTemplateCRUDPayload',
                     'delete'))

    # a node that does not match: start, then error
    ok(*call(ep, 'POST', '/v1/allocations', {
        'resource_class': 'other', 'node': u}), want=(409,))
    expect(col, crud('allocation', 'AllocationCRUDPayload', 'create',
                     'error'))
    alloc = ok(*call(ep, 'POST', '/v1/allocations', {
        'resource_class': 'baremetal', 'name': 'a1'}))
    got = expect(col, crud('allocation', 'AllocationCRUDPayload',
                           'create'))
    assert (data(got[1])['uuid'], data(got[1])['state']) == \
        (alloc['uuid'], 'allocating')
    deadline = time.monotonic() + 60
    while call(ep, 'GET', '/v1/allocations/%s' % alloc['uuid'])[1][
            'state'] != 'active':
        assert time.monotonic() < deadline
        time.sleep(0.2)
    ok(*call(ep, 'PATCH', '/v1/allocations/%s' % alloc['uuid'], [
        {'op': 'replace', 'path': '/name', 'value': 'a2'}]))
    got = expect(col, crud('allocation', 'AllocationCRUDPayload',
                           'update'))
    assert (data(got[1])['name'], data(got[1])['node_uuid'],
            data(got[1])['state']) == ('a2', u, 'active')
    ok(*call(ep, 'DELETE', '/v1/allocations/%s' % alloc['uuid']))
    expect(col, crud('allocation', 'AllocationCRUDPayload', 'delete'))

    ok(*call(ep, 'PUT', '/v1/nodes/%s/states/provision' % u,
             {'target': 'active'}))
    wait_state(ep, u, 'active')
    # the conductor powers the instance on itself: power_set too, as
    # Ironic sends it for every power action
    PW = 'NodeSetPowerStatePayload'
    got = expect(col, [('baremetal.node.provision_set.start', PS),
                       ('baremetal.node.power_set.start', PW),
                       ('baremetal.node.power_set.end', PW),
                       ('baremetal.node.provision_set.end', PS)])
    assert [(data(m)['provision_state'], data(m)['event'])
            for m in (got[0], got[3])] == [('deploying', 'deploy'),
                                           ('active', 'done')]
    assert data(got[0])['previous_target_provision_state'] is None
    assert data(got[0])['target_provision_state'] == 'active'
    assert [(data(m)['to_power'], data(m)['power_state'])
            for m in got[1:3]] == [('power on', 'power off'),
                                   ('power on', 'power on')]

    ok(*call(ep, 'PUT', '/v1/nodes/%s/states/provision' % u,
             {'target': 'deleted'}))
    wait_state(ep, u, 'available')
    got = expect(col, [('baremetal.node.provision_set.start', PS),
                       ('baremetal.node.power_set.start', PW),
                       ('baremetal.node.power_set.end', PW),
                       ('baremetal.node.provision_set.success', PS),
                       ('baremetal.node.provision_set.end', PS)])
    assert [data(m)['provision_state'] for m in got] == [
        'deleting', 'deleting', 'deleting', 'cleaning', 'available']
    assert [(data(m)['to_power'], data(m)['power_state'])
            for m in got[1:3]] == [('power off', 'power on'),
                                   ('power off', 'power off')]

    for path, kind, payload in (
            ('/v1/ports/%s' % port['uuid'], 'port', 'PortCRUDPayload'),
            ('/v1/portgroups/%s' % pg['uuid'], 'portgroup',
             'PortgroupCRUDPayload'),
            ('/v1/nodes/%s' % u, 'node', 'NodeCRUDPayload'),
            ('/v1/chassis/%s' % chassis['uuid'], 'chassis',
             'ChassisCRUDPayload')):
        ok(*call(ep, 'DELETE', path))
        got = expect(col, crud(kind, payload, 'delete'))
        assert data(got[0]) == data(got[1])
    assert data(got[1])['uuid'] == chassis['uuid']


def test_the_embedded_server_sends_them_without_rpc(tmp_path, listener):
    """baremetal-server (no RPC bus) with only a notification transport
    ([oslo_messaging_notifications]transport_url): both publishers, one
    process."""
    from tests.functional import processes
    url, topic, col = listener
    conf = processes.base_conf(
        tmp_path, DEFAULT={'notification_level': 'info', 'host': 'solo',
                           'versioned_notifications_topics': topic},
        oslo_messaging_notifications={'transport_url': url})
    server = processes.Service('baremetal-server', tmp_path, 'server', conf,
                               port=processes.free_port())
    try:
        server.start()
        ep = server.endpoint
        node = ok(*call(ep, 'POST', '/v1/nodes',
                        {'driver': 'fake-hardware'}))
        expect(col, crud('node', 'NodeCRUDPayload', 'create'),
               api='solo')
        ok(*call(ep, 'PUT', '/v1/nodes/%s/states/provision'
                 % node['uuid'], {'target': 'manage'}))
        wait_state(ep, node['uuid'], 'manageable')
        PS = 'NodeSetProvisionStatePayload'
        got = expect(col, [('baremetal.node.provision_set.start', PS),
                           ('baremetal.node.provision_set.end', PS)],
                     conductor='solo')
        assert data(got[1])['uuid'] == node['uuid']
    except Exception:
        print(server.log())
        raise
    finally:
        server.stop()
