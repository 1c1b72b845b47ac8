"""Bad input leaves a node as it was.

Randomised requests against one node of a real baremetal-server, over
HTTP: JSON patches of every field (wrong types, paths that do not
exist, read-only fields, malformed operations), provisioning verbs in
every state with malformed steps, config drives and passwords, power,
RAID, traits, boot device, maintenance, VIFs, boot mode and console
requests, at valid and invalid microversions, now and then a body that
is not JSON.  Some of them are valid; besides, about one request in
twenty is the valid verb that takes the node one step round enroll,
manageable, available and active, so that the bad ones meet it in each
of those states.

After every request: no 5xx; after every 4xx, the node reads exactly as
before it (every field, ``updated_at`` included: a refused request
writes nothing) and the answer says what was wrong (Ironic's error
body with a message; the only empty ones are Ironic's own plain 404 and
405 of a route the asked-for version does not have).  The seeds are
fixed, so a failure replays.
"""

import http.client
import json
import random
import time
import urllib.parse

import pytest

SEEDS = (1, 2, 3)
REQUESTS = 400
NEWEST = '1.115'
VERSIONS = (NEWEST, NEWEST, NEWEST, '1.1', '1.31', '1.61', '1.81', None,
            '2.0', 'x', '1.999')

FIELDS = (
    'name', 'description', 'driver', 'driver_info', 'extra', 'properties',
    'instance_info', 'instance_uuid', 'resource_class', 'owner', 'lessee',
    'conductor_group', 'shard', 'maintenance', 'maintenance_reason',
    'boot_interface', 'deploy_interface', 'power_interface',
    'raid_interface', 'network_interface', 'bios_interface',
    'rescue_interface', 'management_interface', 'inspect_interface',
    'firmware_interface', 'chassis_uuid', 'automated_clean', 'protected',
    'protected_reason', 'retired', 'retired_reason', 'parent_node',
    'network_data', 'disable_power_off', 'instance_name', 'uuid', 'id',
    'provision_state', 'power_state', 'traits', 'target_raid_config',
    'raid_config', 'driver_internal_info', 'console_enabled', 'fault',
    'last_error', 'reservation', 'created_at', 'updated_at', 'links',
    'ports', 'nonexistent')
VALUES = (None, '', 'x', 'fake-hardware', 'a' * 300, -1, 0, 2 ** 70, 1.5,
          True, [], ['a', 1], {}, {'a': {'b': [1, None]}}, '\u2603\x00',
          'CUSTOM_X')
VERBS = ('manage', 'provide', 'inspect', 'clean', 'active', 'deploy',
         'deleted', 'undeploy', 'rebuild', 'rescue', 'unrescue', 'abort',
         'adopt', 'service', 'unhold', 'bogus', None, 5, '')
# the valid move from each state of the cycle the node goes round
MOVES = {'enroll': 'manage', 'manageable': 'provide', 'available': 'active',
         'active': 'deleted'}
# a node at rest: no work under way, no lock held
AT_REST = frozenset(('enroll', 'manageable', 'available', 'active',
                     'clean failed', 'deploy failed', 'inspect failed',
                     'error', 'rescue', 'rescue failed', 'service failed',
                     'adopt failed', 'clean hold', 'deploy hold',
                     'service hold', 'rescue wait', 'clean wait',
                     'deploy wait', 'inspect wait'))


class Client:
    def __init__(self, endpoint: str) -> None:
        url = urllib.parse.urlsplit(endpoint)
        self.conn = http.client.HTTPConnection(url.hostname, url.port,
                                               timeout=60)

    def call(self, method, path, body=None, version=NEWEST, raw=None):
        headers = {'Content-Type': 'application/json'}
        if version is not None:
            headers['X-OpenStack-Ironic-API-Version'] = version
        data = raw if raw is not None else (
            None if body is None else json.dumps(body))
        self.conn.request(method, path, data, headers)
        r = self.conn.getresponse()
        text = r.read()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text

    def at_rest(self, uuid: str) -> dict:
        deadline = time.monotonic() + 30
        while True:
            status, node = self.call('GET', '/v1/nodes/' + uuid)
            assert status == 200, node
            if node['provision_state'] in AT_REST and \
                    not node['target_provision_state'] and \
                    not node['target_power_state'] and \
                    node['reservation'] is None:
                return node
            assert time.monotonic() < deadline, node
            time.sleep(0.02)


class Requests:
    """The random requests of one seed."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def path(self) -> str:
        rnd = self.rnd
        field = rnd.choice(FIELDS)
        kind = rnd.randrange(8)
        if kind == 0:
            return '/%s/%s' % (field, rnd.choice(
                ['a', '0', '-', '~1', '~0x', '', 'deploy_kernel']))
        if kind == 1:
            return '/%s/a/b' % field
        if kind == 2:
            return rnd.choice(['', '/', '//', 'name', '/name/', '/~', '/-'])
        return '/' + field

    def patch(self):
        rnd = self.rnd
        if rnd.random() < 0.05:
            return rnd.choice([{}, 'x', None, 5,
                               {'op': 'add', 'path': '/extra/a',
                                'value': 1}])
        ops = []
        for _ in range(rnd.randrange(1, 4)):
            op = {'op': rnd.choice(['add', 'replace', 'remove', 'move',
                                    'copy', 'test', 'bogus', None, 5])}
            if rnd.random() < 0.95:
                op['path'] = self.path()
            if rnd.random() < 0.7:
                op['value'] = rnd.choice(VALUES)
            if op['op'] in ('move', 'copy') and rnd.random() < 0.8:
                op['from'] = self.path()
            if rnd.random() < 0.05:
                op = rnd.choice([[], 'x', None, 1, {'op': 'add'}])
            ops.append(op)
        return ops

    def provision(self):
        rnd = self.rnd
        if rnd.random() < 0.03:
            return rnd.choice([None, [], 'x', {}])
        body = {'target': rnd.choice(VERBS)}
        for key, values in (
                ('clean_steps', [None, [], 'x', [{}],
                                 [{'interface': 'deploy'}],
                                 [{'interface': 'deploy',
                                   'step': 'erase_devices', 'args': 'x'}],
                                 [{'interface': 'bogus', 'step': 's'}],
                                 [{'interface': 'raid',
                                   'step': 'create_configuration',
                                   'priority': -5}]]),
                ('deploy_steps', [None, [], 'x',
                                  [{'interface': 'deploy', 'step': 'x',
                                    'priority': 'a'}]]),
                ('service_steps', [None, [], [{'interface': 'bios'}]]),
                ('configdrive', [None, 'x', 5, {'meta_data': 'x'},
                                 {'user_data': 5}, {'bogus': 1}]),
                ('rescue_password', [None, '', 5, 'pw']),
                ('disable_ramdisk', [None, 'x', True]),
                ('runbook', [None, 'x', 5])):
            if rnd.random() < 0.25:
                body[key] = rnd.choice(values)
        return body

    def other(self):
        rnd = self.rnd
        return rnd.choice([
            ('PUT', '/states/power', {
                'target': rnd.choice(['power on', 'power off', 'rebooting',
                                      'soft power off', 'bogus', None, 5]),
                'timeout': rnd.choice([None, -1, 0, 'x', 10, 2 ** 40])}),
            ('PUT', '/states/raid', rnd.choice([
                {}, {'logical_disks': 'x'}, {'logical_disks': [{}]},
                {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '9'}]},
                {'logical_disks': [{'size_gb': -1, 'raid_level': '1'}]},
                'x', None])),
            ('PUT', '/traits', rnd.choice([
                {'traits': ['CUSTOM_A', 'bad trait']}, {'traits': 'x'}, {},
                {'traits': ['CUSTOM_' + 'A' * 300]}, {'traits': [5]}])),
            ('PUT', '/traits/' + rnd.choice(['CUSTOM_A', 'bad', 'x' * 300,
                                             'CUSTOM_%20']),
             rnd.choice([None, {}, 'x'])),
            ('PUT', '/management/boot_device', rnd.choice([
                {'boot_device': 'bogus'},
                {'boot_device': 'pxe', 'persistent': 'x'}, {}, None])),
            ('PUT', '/maintenance', rnd.choice([
                {'reason': 5}, {'reason': 'x' * 300}, 'x', None, {}])),
            ('POST', '/vifs', rnd.choice([
                {'id': 'x'}, {}, {'id': 5}, None,
                {'id': '00000000-0000-0000-0000-000000000000'}])),
            ('PUT', '/states/boot_mode', rnd.choice([
                {'target': 'bogus'}, {}, {'target': 5}])),
            ('PUT', '/states/console', rnd.choice([
                {'enabled': 'x'}, {}, {'enabled': None}])),
        ])

    def next(self, uuid: str, name: str):
        """(method, path, body, version, raw body)"""
        rnd = self.rnd
        k = rnd.random()
        if k < 0.45:
            method, sub, body = 'PATCH', '', self.patch()
        elif k < 0.75:
            method, sub, body = 'PUT', '/states/provision', self.provision()
        else:
            method, sub, body = self.other()
        ident = uuid if rnd.random() < 0.95 else rnd.choice(
            [name, 'nope', uuid.upper(), '%20'])
        raw = None
        if rnd.random() < 0.02:
            raw = rnd.choice(['{', '[1,', '\xff', 'null',
                              '{"a":' * 200 + '1' + '}' * 200])
        return (method, '/v1/nodes/' + ident + sub, body,
                rnd.choice(VERSIONS), raw)


def _message(body) -> str | None:
    """The message of an error answer (Ironic's body: ``error_message``
    holding a JSON text)."""
    if not isinstance(body, dict) or 'error_message' not in body:
        return None
    try:
        inner = json.loads(body['error_message'])
    except (TypeError, ValueError):
        return body['error_message'] or None
    return inner.get('faultstring') or inner.get('description')


def _plain_gate(status: int, body) -> bool:
    """Ironic's own plain 404/405 of a route the asked-for version does
    not have (an empty description, as Ironic 39 answers)."""
    if status not in (404, 405) or not isinstance(body, dict):
        return False
    try:
        inner = json.loads(body['error_message'])
    except (KeyError, TypeError, ValueError):
        return False
    return inner.get('code') == status and inner.get('description') == ''


@pytest.mark.parametrize('seed', SEEDS)
def test_a_refused_request_leaves_the_node_as_it_was(server, seed):
    client = Client(server.endpoint)
    name = 'refused-%d' % seed
    status, node = client.call('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'name': name})
    assert status == 201, node
    uuid = node['uuid']
    requests = Requests(seed)
    statuses: dict[int, int] = {}
    states = set()
    for i in range(REQUESTS):
        before = client.at_rest(uuid)
        states.add(before['provision_state'])
        move = MOVES.get(before['provision_state'])
        if move and requests.rnd.random() < 0.05:
            # one step round the cycle (refused, too, if an accepted
            # request made it impossible: maintenance, protection...)
            method, path, body, version, raw = (
                'PUT', '/v1/nodes/%s/states/provision' % uuid,
                {'target': move}, NEWEST, None)
        else:
            method, path, body, version, raw = requests.next(uuid, name)
        status, answer = client.call(method, path, body, version, raw)
        statuses[status] = statuses.get(status, 0) + 1
        what = '#%d %s %s %r at %s: %s %r' % (i, method, path,
                                              raw or body, version,
                                              status, answer)
        assert status < 500, what
        if status < 400:
            continue
        assert _message(answer) or _plain_gate(status, answer), what
        after = client.at_rest(uuid)
        changed = {k: (before.get(k), after.get(k))
                   for k in set(before) | set(after)
                   if before.get(k) != after.get(k)}
        assert not changed, '%s changed the node: %r' % (what, changed)
        if after['maintenance'] and requests.rnd.random() < 0.3:
            client.call('DELETE', '/v1/nodes/%s/maintenance' % uuid)
    # the requests reached past validation, and some were accepted
    assert statuses.get(400, 0) > REQUESTS // 4, statuses
    assert sum(n for s, n in statuses.items() if s < 300) >= 5, statuses
    assert states >= set(MOVES), states
    client.call('DELETE', '/v1/nodes/' + uuid)
    assert 'Traceback' not in server.log(tail=None)
