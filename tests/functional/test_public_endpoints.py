"""The endpoints Ironic serves without authentication answer alike under
every ``auth_strategy``, over HTTP against a real baremetal-server.

Ironic's public routes are ``/``, ``/v1``, ``/v1/lookup``,
``/v1/heartbeat/{node}`` and ``/v1/continue_inspection``: the agent
ramdisk has no credentials.  For each strategy (noauth; http_basic with
an htpasswd file; keystone with keystonemiddleware pointed at a port on
loopback where nothing listens) every public request gets the same
status and body with no credential, a wrong one or (http_basic) a right
one; the other paths answer 401 without a valid credential.

The nodes the test inspects are prepared once by a noauth server (it is
the only way to enroll under keystone without an identity service): in
``inspect wait`` through the fake-hardware ``agent`` inspect interface
with fake boot and power; each strategy's server starts on a copy of
that database.
"""

import base64
import glob
import http.client
import json
import os
import shutil
import sqlite3
import time
import uuid

import bcrypt
import pytest

from tests.functional import processes

STRATEGIES = ('noauth', 'http_basic', 'keystone')
PASSWORD = 'Pa55-public-3f9a'
UNKNOWN_MAC = '52:54:00:00:0f:99'
# one node for the 202 under each strategy, one for the token rule
MACS = {'inspected': '52:54:00:00:0f:01', 'tokened': '52:54:00:00:0f:02'}
# nothing listens here: keystonemiddleware must not need it for a
# request without a token, nor ever see a public one
NOWHERE = 'http://127.0.0.1:9'


def _basic(password: str) -> str:
    return 'Basic ' + base64.b64encode(
        ('admin:%s' % password).encode()).decode()


# credentials a caller may send: public answers must not depend on them
WRONG = {'Authorization': _basic('wrong'), 'X-Auth-Token': 'bogus-token'}
RIGHT = {'Authorization': _basic(PASSWORD)}


def _request(endpoint: str, method: str, path: str, body=None,
             headers: dict | None = None, version: str | None = None):
    """(status, JSON body, headers); ``version`` None sends no version
    header, as ironic-python-agent posts its inventory."""
    h = {'Content-Type': 'application/json'}
    if version is not None:
        h['X-OpenStack-Ironic-API-Version'] = version
    h.update(headers or {})
    host, port = endpoint.rsplit(':', 1)
    conn = http.client.HTTPConnection(host.split('//')[1], int(port),
                                      timeout=30)
    try:
        conn.request(method, path, json.dumps(body)
                     if body is not None else None, h)
        r = conn.getresponse()
        raw = r.read()
        try:
            data = json.loads(raw) if raw else None
        except ValueError:  # keystonemiddleware's 503 is plain text
            data = raw.decode(errors='replace')
        return r.status, data, r.headers
    finally:
        conn.close()


def _inventory(mac: str) -> dict:
    return {'interfaces': [{'name': 'eth0', 'mac_address': mac}],
            'cpu': {'count': 2, 'architecture': 'x86_64'},
            'memory': {'physical_mb': 4096},
            'disks': [{'name': '/dev/vda', 'size': 10 * 1024 ** 3}]}


def _conf(state_dir: str, strategy: str, htpasswd: str) -> dict:
    conf = processes.base_conf(state_dir, conductor={
        'check_provision_state_interval': 1})
    conf['DEFAULT']['enabled_boot_interfaces'] = ['fake']
    conf['DEFAULT']['auth_strategy'] = strategy
    if strategy == 'http_basic':
        conf['DEFAULT']['http_basic_auth_user_file'] = htpasswd
    elif strategy == 'keystone':
        conf['keystone_authtoken'] = {
            'www_authenticate_uri': NOWHERE + '/',
            'auth_type': 'password', 'auth_url': NOWHERE + '/v3',
            'username': 'baremetal', 'password': 'x',
            'project_name': 'service', 'user_domain_name': 'Default',
            'project_domain_name': 'Default', 'http_connect_timeout': 2,
            'http_request_max_retries': 0}
    return conf


@pytest.fixture(scope='module')
def prepared(tmp_path_factory):
    """A database holding two nodes in ``inspect wait``, and the
    htpasswd file."""
    tmp = tmp_path_factory.mktemp('public')
    htpasswd = str(tmp / 'htpasswd')
    with open(htpasswd, 'w') as f:
        f.write('admin:%s\n' % bcrypt.hashpw(
            PASSWORD.encode(), bcrypt.gensalt(4)).decode())
    state = str(tmp / 'prep-state')
    svc = processes.Service('baremetal-server', tmp, 'prep',
                            _conf(state, 'noauth', htpasswd),
                            port=processes.free_port())
    svc.start()
    uuids = {}
    try:
        for name, mac in MACS.items():
            status, n, _ = _request(svc.endpoint, 'POST', '/v1/nodes', {
                'driver': 'fake-hardware', 'name': name,
                'inspect_interface': 'agent'}, version='1.84')
            assert status == 201, n
            uuids[name] = n['uuid']
            assert _request(svc.endpoint, 'POST', '/v1/ports', {
                'address': mac, 'node_uuid': n['uuid']},
                version='1.84')[0] == 201
        for verb, state_name in (('manage', 'manageable'),
                                 ('inspect', 'inspect wait')):
            for u in uuids.values():
                status, body, _ = _request(
                    svc.endpoint, 'PUT', '/v1/nodes/%s/states/provision'
                    % u, {'target': verb}, version='1.84')
                assert status == 202, body
            for u in uuids.values():
                _wait(svc.endpoint, u, state_name)
    finally:
        assert svc.stop() == 0, svc.log()
    return {'db': glob.glob(os.path.join(state, 'baremetal.sqlite*')),
            'htpasswd': htpasswd, 'uuids': uuids, 'tmp': tmp}


def _wait(endpoint: str, node: str, state: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        n = _request(endpoint, 'GET', '/v1/nodes/%s' % node,
                     version='1.84')[1]
        if n['provision_state'] == state and not n['reservation']:
            return
        assert time.monotonic() < deadline, n
        time.sleep(0.05)


@pytest.fixture(scope='module', params=STRATEGIES)
def server(request, prepared):
    """One baremetal-server per strategy, on a copy of the prepared
    database."""
    strategy = request.param
    tmp = prepared['tmp']
    state = str(tmp / ('%s-state' % strategy))
    os.makedirs(state)
    for f in prepared['db']:
        shutil.copy(f, state)
    svc = processes.Service(
        'baremetal-server', tmp, strategy,
        _conf(state, strategy, prepared['htpasswd']),
        port=processes.free_port())
    svc.strategy = strategy
    svc.db = os.path.join(state, 'baremetal.sqlite')
    svc.uuids = prepared['uuids']
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


def _credentials(server) -> list[dict]:
    out = [{}, WRONG]
    if server.strategy == 'http_basic':
        out.append(RIGHT)
    return out


def _provision_state(server, node: str) -> str:
    # read from the database: under keystone no token exists to ask the
    # API
    with sqlite3.connect('file:%s?mode=ro' % server.db, uri=True) as c:
        return c.execute('SELECT provision_state FROM nodes WHERE '
                         'uuid = ?', (node,)).fetchone()[0]


# (method, path, body, version, status): IPA looks up at 1.62 at most
# and posts its inventory without a version header
def _public_requests():
    unknown_node = str(uuid.uuid4())
    heartbeat = {'callback_url': 'http://127.0.0.1:9999',
                 'agent_version': '10.0.0'}
    return [
        ('GET', '/', None, None, 200),
        ('GET', '/v1', None, None, 200),
        ('GET', '/v1/', None, '1.84', 200),
        ('GET', '/v1/lookup?addresses=%s' % UNKNOWN_MAC, None, '1.62',
         404),
        ('POST', '/v1/heartbeat/%s' % unknown_node,
         dict(heartbeat, agent_token='t' * 43), '1.62', 404),
        ('POST', '/v1/heartbeat/%s' % unknown_node, heartbeat, '1.62',
         404),
        ('POST', '/v1/continue_inspection',
         {'inventory': _inventory(UNKNOWN_MAC)}, None, 404),
        ('POST', '/v1/continue_inspection',
         {'inventory': _inventory(UNKNOWN_MAC)}, '1.84', 404),
    ]


def test_public_endpoints_answer_alike_with_any_credential(server):
    for method, path, body, version, status in _public_requests():
        answers = []
        for creds in _credentials(server):
            got, data, headers = _request(server.endpoint, method, path,
                                          body, creds, version)
            assert got == status, (path, creds, got, data)
            assert 'WWW-Authenticate' not in headers
            answers.append(data)
        assert all(a == answers[0] for a in answers), (path, answers)


def test_inventory_of_a_node_in_inspect_wait_is_taken(server):
    """Without a credential, or with a wrong one alongside (as a proxy
    might add): 202, and the inspection finishes."""
    node = server.uuids['inspected']
    status, body, _ = _request(
        server.endpoint, 'POST', '/v1/continue_inspection',
        {'inventory': _inventory(MACS['inspected'])}, WRONG)
    assert status == 202, body
    assert body == {'uuid': node}
    deadline = time.monotonic() + 30
    while _provision_state(server, node) != 'manageable':
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)


def test_inventory_needs_no_agent_token(server):
    """As Ironic: the agent posts its inventory without a token (it
    sends none there), so a node that holds one (after a lookup, or a
    token on the boot medium) takes the inventory all the same; the
    answer carries no token."""
    node = server.uuids['tokened']
    status, body, _ = _request(
        server.endpoint, 'GET', '/v1/lookup?addresses=%s'
        % MACS['tokened'], version='1.62')
    assert status == 200, body
    token = body['config']['agent_token']
    assert len(token) >= 32
    status, body, _ = _request(
        server.endpoint, 'POST', '/v1/continue_inspection',
        {'inventory': _inventory(MACS['tokened'])})
    assert status == 202, body
    assert body == {'uuid': node}
    assert token not in json.dumps(body)
    deadline = time.monotonic() + 30
    while _provision_state(server, node) != 'manageable':
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)


def test_other_paths_need_credentials(server):
    protected = [('GET', '/v1/nodes'), ('GET', '/nodes'),
                 ('GET', '/v1/drivers'), ('GET', '/v1/no-such-thing'),
                 # Ironic's public routes carry /v1
                 ('GET', '/lookup?addresses=%s' % UNKNOWN_MAC),
                 ('POST', '/continue_inspection'),
                 ('GET', '/v1/lookup/extra')]
    for method, path in protected:
        for creds in ({}, WRONG):
            started = time.monotonic()
            status, body, headers = _request(
                server.endpoint, method, path,
                {} if method == 'POST' else None, creds, '1.84')
            assert time.monotonic() - started < 10, path
            if server.strategy == 'noauth':
                assert status != 401, (path, status, body)
            elif server.strategy == 'keystone' and creds:
                # a token is checked with the identity service, which
                # is unreachable here: refused at once, never served
                assert status == 503, (path, status, body)
            else:
                assert status == 401, (path, creds, status, body)
                assert 'WWW-Authenticate' in headers
    if server.strategy == 'http_basic':
        status, body, _ = _request(server.endpoint, 'GET', '/v1/nodes',
                                   None, RIGHT, '1.84')
        assert status == 200, body
