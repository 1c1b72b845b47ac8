"""One request sequence spoken by every Keystone persona, for comparing
access control with Ironic's (``tools/api-diff --personas``) and for
asserting ours (tests/functional/test_keystone_rbac.py).

``setup(url, ks)`` makes, as the system admin, four nodes -- ``rbac-a``
owned by project A, ``rbac-al`` owned by A and leased to B, ``rbac-b``
owned by B, ``rbac-free`` with neither -- a port on each of the first
three, and an allocation owned by each project.  ``run(url, ks)`` then
sends ``STEPS`` as each persona and returns, per persona and step, the
status and what the answer shows that access control decides: the names
a list holds, whether secrets are redacted.  Nothing in an answer that
differs between two services (UUIDs, times) is kept.
"""

import http.client
import json
import time
import urllib.parse

V = '1.95'
NODES = ('rbac-a', 'rbac-al', 'rbac-b', 'rbac-free')
MACS = {'rbac-a': '52:54:00:bb:00:01', 'rbac-al': '52:54:00:bb:00:02',
        'rbac-b': '52:54:00:bb:00:03'}

# (id, method, path, body); {name} is a node's UUID, {port:name} the
# UUID of the port on that node
STEPS = [
    ('nodes', 'GET', '/v1/nodes', None),
    ('nodes-detail', 'GET', '/v1/nodes/detail', None),
    ('nodes-project-b', 'GET', '/v1/nodes?project={project:b}', None),
    ('node-a', 'GET', '/v1/nodes/{rbac-a}', None),
    ('node-al', 'GET', '/v1/nodes/{rbac-al}', None),
    ('node-b', 'GET', '/v1/nodes/{rbac-b}', None),
    ('node-free', 'GET', '/v1/nodes/{rbac-free}', None),
    ('states-a', 'GET', '/v1/nodes/{rbac-a}/states', None),
    ('states-b', 'GET', '/v1/nodes/{rbac-b}/states', None),
    ('patch-extra-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'add', 'path': '/extra/by', 'value': 'x'}]),
    ('patch-extra-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'add', 'path': '/extra/by', 'value': 'x'}]),
    ('patch-extra-b', 'PATCH', '/v1/nodes/{rbac-b}',
     [{'op': 'add', 'path': '/extra/by', 'value': 'x'}]),
    ('patch-instance-info-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'add', 'path': '/instance_info/x', 'value': 'y'}]),
    ('patch-instance-info-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'add', 'path': '/instance_info/x', 'value': 'y'}]),
    ('patch-driver-info-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'add', 'path': '/driver_info/x', 'value': 'y'}]),
    # the fields a lessee may and may not change (rbac-al: leased to B)
    ('patch-driver-info-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'add', 'path': '/driver_info/x', 'value': 'y'}]),
    ('patch-description-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'add', 'path': '/description', 'value': 'd'}]),
    ('patch-interface-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'replace', 'path': '/deploy_interface', 'value': 'fake'}]),
    # its own name: the node lists of later steps stay the same
    ('patch-name-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'replace', 'path': '/name', 'value': 'rbac-al'}]),
    ('patch-properties-al', 'PATCH', '/v1/nodes/{rbac-al}',
     [{'op': 'add', 'path': '/properties/x', 'value': 'y'}]),
    ('patch-description-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'add', 'path': '/description', 'value': 'd'}]),
    ('patch-interface-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'replace', 'path': '/power_interface', 'value': 'fake'}]),
    ('patch-owner-a', 'PATCH', '/v1/nodes/{rbac-a}',
     [{'op': 'replace', 'path': '/owner', 'value': '{project:a}'}]),
    ('power-a', 'PUT', '/v1/nodes/{rbac-a}/states/power',
     {'target': 'power off'}),
    ('power-al', 'PUT', '/v1/nodes/{rbac-al}/states/power',
     {'target': 'power off'}),
    ('power-b', 'PUT', '/v1/nodes/{rbac-b}/states/power',
     {'target': 'power off'}),
    # "provide" from enroll: 400 once access control lets it through
    ('provide-a', 'PUT', '/v1/nodes/{rbac-a}/states/provision',
     {'target': 'provide'}),
    ('provide-al', 'PUT', '/v1/nodes/{rbac-al}/states/provision',
     {'target': 'provide'}),
    ('maintenance-al', 'PUT', '/v1/nodes/{rbac-al}/maintenance',
     {'reason': 'rbac'}),
    ('unmaintenance-al', 'DELETE', '/v1/nodes/{rbac-al}/maintenance', None),
    ('vifs-al', 'GET', '/v1/nodes/{rbac-al}/vifs', None),
    ('traits-a', 'GET', '/v1/nodes/{rbac-a}/traits', None),
    ('boot-device-a', 'GET', '/v1/nodes/{rbac-a}/management/boot_device',
     None),
    ('history-al', 'GET', '/v1/nodes/{rbac-al}/history', None),
    ('validate-al', 'GET', '/v1/nodes/{rbac-al}/validate', None),
    ('validate-b', 'GET', '/v1/nodes/{rbac-b}/validate', None),
    ('bios-b', 'GET', '/v1/nodes/{rbac-b}/bios', None),
    ('traits-b', 'GET', '/v1/nodes/{rbac-b}/traits', None),
    ('set-trait-a', 'PUT', '/v1/nodes/{rbac-a}/traits/CUSTOM_RBAC', None),
    ('set-trait-al', 'PUT', '/v1/nodes/{rbac-al}/traits/CUSTOM_RBAC',
     None),
    ('indicators-b', 'GET', '/v1/nodes/{rbac-b}/management/indicators',
     None),
    ('node-portgroups-b', 'GET', '/v1/nodes/{rbac-b}/portgroups', None),
    ('volume-connectors', 'GET', '/v1/volume/connectors', None),
    ('node-volume-b', 'GET', '/v1/nodes/{rbac-b}/volume/connectors', None),
    ('ports', 'GET', '/v1/ports', None),
    ('ports-detail', 'GET', '/v1/ports/detail', None),
    ('node-ports-b', 'GET', '/v1/nodes/{rbac-b}/ports', None),
    ('port-a', 'GET', '/v1/ports/{port:rbac-a}', None),
    ('port-b', 'GET', '/v1/ports/{port:rbac-b}', None),
    ('patch-port-a', 'PATCH', '/v1/ports/{port:rbac-a}',
     [{'op': 'add', 'path': '/extra/by', 'value': 'x'}]),
    ('patch-port-b', 'PATCH', '/v1/ports/{port:rbac-b}',
     [{'op': 'add', 'path': '/extra/by', 'value': 'x'}]),
    ('portgroups', 'GET', '/v1/portgroups', None),
    ('allocations', 'GET', '/v1/allocations', None),
    ('allocation-a', 'GET', '/v1/allocations/alloc-a', None),
    ('allocation-b', 'GET', '/v1/allocations/alloc-b', None),
    ('chassis', 'GET', '/v1/chassis', None),
    ('drivers', 'GET', '/v1/drivers', None),
    ('conductors', 'GET', '/v1/conductors', None),
    ('create-node', 'POST', '/v1/nodes',
     {'driver': 'fake-hardware', 'name': 'made-by-{persona}'}),
    ('delete-made-node', 'DELETE', '/v1/nodes/made-by-{persona}', None),
]

_REDACTED = ('driver_info', 'driver_internal_info', 'last_error',
             'reservation')


class Client:
    def __init__(self, url: str, token: str | None) -> None:
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port
        self.token = token

    def request(self, method, path, body=None):
        headers = {'Accept': 'application/json',
                   'X-OpenStack-Ironic-API-Version': V}
        if self.token:
            headers['X-Auth-Token'] = self.token
        data = None
        if body is not None:
            headers['Content-Type'] = 'application/json'
            data = json.dumps(body)
        c = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            c.request(method, path, data, headers)
            r = c.getresponse()
            raw = r.read()
        finally:
            c.close()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, None

    def ok(self, method, path, body=None):
        st, out = self.request(method, path, body)
        if st >= 300:
            raise RuntimeError('%s %s: %s %s' % (method, path, st, out))
        return out


def _fill(value, ids: dict, persona: str):
    text = json.dumps(value)
    for k, v in ids.items():
        text = text.replace('{%s}' % k, v)
    return json.loads(text.replace('{persona}', persona))


def setup(url: str, ks) -> dict:
    """Make the nodes, ports and allocations as the system admin; the
    names -> UUIDs (and project keys -> ids) the steps refer to."""
    admin = Client(url, ks.token('system-admin'))
    a, b = ks.project_id('a'), ks.project_id('b')
    ids = {'project:a': a, 'project:b': b}
    owners = {'rbac-a': (a, None), 'rbac-al': (a, b), 'rbac-b': (b, None),
              'rbac-free': (None, None)}
    for name in NODES:
        owner, lessee = owners[name]
        node = admin.ok('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'name': name, 'owner': owner,
            'lessee': lessee, 'driver_info': {'fake': 'x',
                                              'password': 'secret'}})
        ids[name] = node['uuid']
        if name in MACS:
            port = admin.ok('POST', '/v1/ports', {
                'node_uuid': node['uuid'], 'address': MACS[name]})
            ids['port:' + name] = port['uuid']
    for key, project in (('a', a), ('b', b)):
        admin.ok('POST', '/v1/allocations', {
            'name': 'alloc-' + key, 'resource_class': 'rbac-none',
            'owner': project})
    return ids


def _wait_idle(admin: Client, uuid: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st, n = admin.request('GET', '/v1/nodes/%s' % uuid)
        if st == 200 and not n.get('target_power_state') and \
                not n.get('reservation'):
            return
        time.sleep(0.1)


def summary(step_id: str, status: int, body) -> object:
    """What access control decides in an answer, nothing else."""
    if status >= 300 or not isinstance(body, dict):
        return None
    if 'driver_info' in body or 'last_error' in body:     # one node
        return sorted(f for f in _REDACTED
                      if 'Redacted' in json.dumps(body.get(f)))
    for key, name in (('nodes', 'name'), ('ports', 'address'),
                      ('portgroups', 'name'), ('allocations', 'name')):
        if isinstance(body.get(key), list):
            shown = [item.get(name) for item in body[key]]
            return sorted(x for x in shown if not str(x).startswith(
                'made-by-')) if key == 'nodes' else sorted(map(str, shown))
    return None


def run(url: str, ks, personas, ids: dict) -> dict:
    """{persona: {step id: [status, summary]}}."""
    admin = Client(url, ks.token('system-admin'))
    out: dict = {}
    for persona in personas:
        client = Client(url, ks.token(persona))
        seen = out.setdefault(persona, {})
        for sid, method, path, body in STEPS:
            st, answer = client.request(
                method, _fill(path, ids, persona),
                _fill(body, ids, persona) if body is not None else None)
            seen[sid] = [st, summary(sid, st, answer)]
            if method != 'GET' and st < 300 and '{rbac-' in path:
                _wait_idle(admin, ids[path.split('{')[1].split('}')[0]])
    return out
