"""Odd input sent to every route of the API, and every field of every
resource: whatever it is, the answer is below 500 (a client's mistake is
a 4xx saying what was wrong; a server error is the service's bug).

``sweep(h)`` drives a harness (tests/harness.py, on any database) and
returns the requests answered 500 or more, as readable lines.  The unit
tests run it small; ``tools/api-fuzz`` runs it whole on a chosen
database, for a developer looking for more.
"""

import json
import re
import socket

from baremetal.api import routing

# JSON values a field of any type may be sent
ODD_VALUES = (None, -1, 'x', '', [], {}, True, 'a' * 256, '\u0000',
              2 ** 31, 2 ** 63 - 1, 2 ** 64 - 1)
FULL_ODD_VALUES = ODD_VALUES + (1, 1.5, 'a' * 4097, 'a' * 70000, [None],
                                {'a': None}, '\u00fc' * 10, -2 ** 63,
                                1e300)
# request bodies, JSON or raw bytes, for routes that take one
BODIES = (None, 'x', [1], {'a': None},
          [{'op': 'replace', 'path': '/extra/x', 'value': '\u0000'}],
          {'target': 1}, {'a' * 300: 1})
FULL_BODIES = BODIES + (
    {}, [], 1, 1.5e308, [None], {'': ''},
    [{'op': 'remove', 'path': '/'}],
    [{'op': 'replace', 'path': '', 'value': 1}],
    [{'op': 'move', 'from': '/extra', 'path': '/name'}],
    [{'op': 'add', 'path': '/extra/0/1', 'value': 1}],
    [{'op': 'replace', 'path': '/driver_info', 'value': []}],
    [{'op': 'add', 'path': '/traits/0', 'value': 'CUSTOM_X'}],
    [{'op': 'x'}], [{'path': '/name'}], [1, 2],
    {'target': None}, {'target': 'active', 'configdrive': 5},
    {'target': 'clean', 'clean_steps': 'x'},
    {'target': 'clean', 'clean_steps': [{}]},
    {'target': 'service', 'service_steps': [None]},
    {'target': 'power on', 'timeout': -1},
    {'boot_device': 'pxe', 'persistent': 'maybe'},
    {'traits': [1]}, {'steps': None}, {'image_url': None},
    {'callback_url': 5}, {'agent_token': []}, {'rules': 'x'},
    {'conditions': [{}], 'actions': [{}]}, {'task': 1},
    [[[[[[[[[[[[[]]]]]]]]]]]]])
RAW = (b'{', b'{"a": NaN}', b'"\\ud800"', b'18446744073709551616')
FULL_RAW = RAW + (b'\xff\xfe', b'[1,', b'{"a": Infinity}', b'1e999',
                  b'{"a":1,"a":2}', b'{"name": "\\u0000"}')
QUERIES = ('limit=x', 'limit=-1', 'sort_key=x', 'sort_dir=x', 'fields=x',
           'marker=x', 'driver=%00', 'detail=maybe')
FULL_QUERIES = QUERIES + (
    'limit=99999999999999999999', 'fields=,', 'detail=true&fields=uuid',
    'associated=x', 'maintenance=x', 'provision_state=x',
    'resource_class=' + 'a' * 100, 'node=x', 'node_uuid=x', 'address=x',
    'conductor_group=' + 'x' * 300, 'fault=x', 'include_children=x',
    'description_contains=%25', 'limit=1&limit=2', 'name=a%00b')
VERSIONS = ('1.1', 'latest', '1.a')
FULL_VERSIONS = VERSIONS + ('1.999', '', '2.0', '1.01', ' 1.5')
IDENTS = ('%00', 'a' * 300, 'null', '%C3%BC')
# a resource of each kind, created once per sweep (and again after a
# route that deletes): (path, key of the ids, body; '{node}' filled in)
RESOURCES = (
    ('/v1/ports', 'port', {'node_uuid': '{node}',
                           'address': '52:54:00:00:{a}:{b}'}),
    ('/v1/chassis', 'chassis', {}),
    ('/v1/portgroups', 'portgroup', {'node_uuid': '{node}',
                                     'name': 'pg{n}'}),
    ('/v1/allocations', 'allocation', {'resource_class': 'odd',
                                       'name': 'al{n}'}),
    ('/v1/deploy_templates', 'template', {
        'name': 'CUSTOM_DT{n}', 'steps': [{
            'interface': 'deploy', 'step': 'x', 'args': {},
            'priority': 1}]}),
    ('/v1/runbooks', 'runbook', {
        'name': 'CUSTOM_RB{n}', 'steps': [{
            'interface': 'deploy', 'step': 'x', 'args': {}, 'order': 1}]}),
    ('/v1/volume/connectors', 'connector', {
        'node_uuid': '{node}', 'type': 'iqn', 'connector_id': 'iqn.x{n}'}),
    ('/v1/volume/targets', 'target', {
        'node_uuid': '{node}', 'volume_type': 'iscsi', 'volume_id': 'v{n}',
        'boot_index': 0}),
    ('/v1/inspection_rules', 'rule', {'actions': [{
        'op': 'set-attribute', 'args': {'path': '/extra/a', 'value': 1}}]}),
)
VERSION = '1.115'


class Sweep:
    def __init__(self, h, full: bool = False) -> None:
        self.h = h
        self.full = full
        self.sent = 0
        self.bad: dict[str, str] = {}
        self._made = 0

    # ------------------------------------------------------- the requests
    def send(self, method: str, path: str, body=None, raw=None,
             query: str = '', version: str = VERSION, what: str = ''):
        self.sent += 1
        if query:
            path += '?' + query
        try:
            status, resp, _ = self.h.request(method, path, body,
                                             version=version, raw=raw)
        except Exception as e:      # the harness's own call raised
            status, resp = 'raised', repr(e)
        if status == 'raised' or status >= 500:
            key = '%s %s %s' % (method, what or path, _short(
                raw if raw is not None else body))
            self.bad.setdefault(key, '%s %s' % (status, _short(resp)))

    def resources(self) -> dict:
        """A node and one of each other resource; their ids by key."""
        self._made += 1
        n = self._made
        _, node, _ = self.h.request(
            'POST', '/v1/nodes', {'driver': 'fake-hardware',
                                  'name': 'odd-%d' % n,
                                  'resource_class': 'odd'},
            version=VERSION)
        ids = {'node': node['uuid']}
        for path, key, body in RESOURCES:
            text = json.dumps(body).replace('{node}', node['uuid']) \
                .replace('{n}', str(n)).replace('{a}', '%02x' % (n // 256)) \
                .replace('{b}', '%02x' % (n % 256))
            status, made, _ = self.h.request('POST', path, json.loads(text),
                                             version=VERSION)
            ids[key] = made['uuid'] if status == 201 else 'x'
        ids.update({'hostname': socket.gethostname(), 'name': 'fake-hardware',
                    'trait': 'CUSTOM_X', 'method': 'first_method',
                    'indicator': 'led-0@system'})
        return ids

    @staticmethod
    def fill(route: routing.Route, ids: dict, odd: str | None = None):
        def value(m):
            name = m.group(1)
            if odd is not None:
                return odd
            if name == 'ident':
                for part, key in (('allocations', 'allocation'),
                                  ('connectors', 'connector'),
                                  ('targets', 'target')):
                    if part in route.template:
                        return ids[key]
            if name == 'pg':
                return ids['portgroup']
            for key in ids:
                if key in name:
                    return ids[key]
            return 'x'
        return re.sub(r'\{([^}]+)\}', value, route.template)

    # ------------------------------------------------------------- sweeps
    def routes(self) -> None:
        """Every route: odd bodies, raw bytes, queries, versions, ids."""
        bodies = FULL_BODIES if self.full else BODIES
        raws = FULL_RAW if self.full else RAW
        queries = FULL_QUERIES if self.full else QUERIES
        versions = FULL_VERSIONS if self.full else VERSIONS
        ids = self.resources()
        for route in sorted(routing._ROUTES,
                            key=lambda r: r.method == 'DELETE'):
            if route.method == 'DELETE':
                ids = self.resources()
            path = self.fill(route, ids)
            what = route.template
            m = route.method
            if m in ('POST', 'PUT', 'PATCH'):
                for body in bodies:
                    self.send(m, path, body, what=what)
                for raw in raws:
                    self.send(m, path, raw=raw, what=what)
            for query in queries:
                self.send(m, path, query=query, what=what)
            for version in versions:
                self.send(m, path, version=version, what=what)
            if '{' in route.template:
                for odd in IDENTS:
                    self.send(m, self.fill(route, ids, odd), what=what)

    def fields(self) -> None:
        """Every field of each resource, created and patched with odd
        values."""
        values = FULL_ODD_VALUES if self.full else ODD_VALUES
        kinds = (('/v1/nodes', 'node', {'driver': 'fake-hardware'}),) + \
            RESOURCES
        for base, key, minimal in kinds:
            ids = self.resources()
            status, item, _ = self.h.request('GET', base + '/' + ids[key],
                                             version=VERSION)
            if status != 200:
                self.bad.setdefault('GET %s/{%s}' % (base, key),
                                    '%s %s' % (status, _short(item)))
                continue
            names = [f for f in item if f != 'links'] + ['extra/a']
            for name in names:
                for v in values:
                    self.send('PATCH', base + '/' + ids[key],
                              [{'op': 'add', 'path': '/' + name,
                                'value': v}], what='%s /%s' % (base, name))
                    body = json.loads(json.dumps(minimal).replace(
                        '{node}', ids['node']).replace('{n}', 'f').replace(
                        '{a}', 'ff').replace('{b}', 'fe'))
                    body[name.split('/')[0]] = v
                    self.send('POST', base, body,
                              what='%s %s' % (base, name))


# what a failed rule's message must not hold: a driver's or Python's own
# words instead of the rule's mistake
_RAW = ('sqlite3.', 'psycopg2', 'pymysql', 'Traceback', '[SQL:',
        'An internal error')
RULE_VALUES = (None, ['x'], {'a': 1}, '')


class RuleSweep:
    """Every op of the inspection rules, its required arguments odd,
    run through an in-band inspection: the rule is refused (4xx), or the
    inspection ends (manageable, or inspect failed naming the rule's
    mistake in words of its own)."""

    def __init__(self, h) -> None:
        self.h = h
        self.sent = 0
        self.bad: dict[str, str] = {}
        self._macs = 0

    def run(self, values=RULE_VALUES) -> None:
        from baremetal.common import inspection_rules as ops
        for op, (sig, _) in sorted(ops.CONDITIONS.items()):
            for v in values:
                self.rule(op, {'conditions': [{
                    'op': op, 'args': dict.fromkeys(sig.required, v)}],
                    'actions': [{'op': 'log', 'args': {'msg': 'm'}}]})
        for op, sig in sorted(ops.ACTIONS.items()):
            if op == 'api-call':        # it would call out
                continue
            for v in values:
                self.rule(op, {'actions': [{
                    'op': op, 'args': dict.fromkeys(sig.required, v)}]})

    def rule(self, op: str, body: dict) -> None:
        h = self.h
        self.sent += 1
        what = '%s %s' % (op, _short(body))
        status, made, _ = h.request('POST', '/v1/inspection_rules', body,
                                    version='1.96')
        if status >= 500:
            self.bad[what] = 'create: %s %s' % (status, _short(made))
        if status != 201:
            return
        try:
            node = self.inspected()
            error = node['last_error'] or ''
            if node['provision_state'] not in ('manageable',
                                               'inspect failed') or \
                    any(w in error for w in _RAW):
                self.bad[what] = '%s: %s' % (node['provision_state'],
                                             _short(error))
        finally:
            h.request('DELETE', '/v1/inspection_rules/' + made['uuid'],
                      version='1.96')

    def inspected(self) -> dict:
        """A new node inspected in band (an agent posting a small
        inventory), once it rests."""
        h = self.h
        self._macs += 1
        mac = '52:54:00:ee:%02x:%02x' % divmod(self._macs, 256)
        uuid = h.make_manageable(mac, inspect_interface='agent')
        h.provision(uuid, 'inspect')
        h.wait_for(uuid, 'inspect wait')
        h.request('POST', '/v1/continue_inspection', {'inventory': {
            'interfaces': [{'name': 'eth0', 'mac_address': mac}],
            'cpu': {'count': 4, 'architecture': 'x86_64'},
            'memory': {'physical_mb': 8192},
            'disks': [{'name': '/dev/vda', 'size': 20 * 1024 ** 3}]}},
            version='1.84')
        h.conductor.workers.wait_idle(10)
        return h.node(uuid)


def _short(value) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 160 else text[:157] + '...'


def sweep(h, full: bool = False) -> Sweep:
    s = Sweep(h, full)
    s.routes()
    s.fields()
    return s
