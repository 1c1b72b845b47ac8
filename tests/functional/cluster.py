"""A scale-out deployment for functional tests: baremetal-api and N
baremetal-conductor processes over RabbitMQ and PostgreSQL/MariaDB."""

import json
import subprocess
import time
import urllib.error
import urllib.request

from baremetal.db import migration
from tests.functional import processes

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.61',
           'Content-Type': 'application/json'}


def call(endpoint, method, path, body=None):
    req = urllib.request.Request(endpoint + path, method=method,
                                 headers=HEADERS,
                                 data=json.dumps(body).encode()
                                 if body is not None else None)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            data = r.read()
            return r.status, json.loads(data) if data else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'null')


def dbsync(tmp, conf):
    svc = processes.Service('baremetal-dbsync', tmp, 'dbsync', conf)
    out = subprocess.run([processes.os.path.join(processes.BIN,
                                                 'baremetal-dbsync'),
                          '--config-file', svc.conf_file, 'upgrade'],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(migration.HEAD)


class Cluster:
    def __init__(self, tmp, db_url, rabbit_url, conductors=2, **conf):
        self.tmp = tmp
        self.conf = {
            'DEFAULT': {'rpc_transport': 'oslo', 'transport_url': rabbit_url},
            'database': {'connection': db_url},
            'conductor': {'heartbeat_interval': 1, 'heartbeat_timeout': 6,
                          'hash_ring_reset_interval': 1,
                          'sync_power_state_interval': 0,
                          'takeover_interval': 1,
                          'check_provision_state_interval': 1},
            'oslo_messaging_rabbit': {'heartbeat_timeout_threshold': 0},
        }
        for section, values in conf.items():
            self.conf.setdefault(section, {}).update(values)
        dbsync(tmp, processes.base_conf(tmp, **self.conf))
        self.conductors = {}
        for i in range(conductors):
            self.add_conductor('cond-%d' % i)
        self.api = processes.Service(
            'baremetal-api', tmp, 'api', processes.base_conf(tmp,
                                                             **self.conf),
            port=processes.free_port())
        try:
            self.api.start()
        except Exception:
            # an API that does not come up (a loaded machine) leaves no
            # process behind: the caller never gets a cluster to stop
            print(self.api.log())
            self.stop()
            raise

    def add_conductor(self, name, start=True):
        conf = processes.base_conf(self.tmp, **self.conf)
        conf['DEFAULT']['host'] = name
        svc = processes.Service('baremetal-conductor', self.tmp, name, conf)
        self.conductors[name] = svc
        if start:
            svc.start(wait=False)
        return svc

    def wait_conductors(self, names, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            st, body = call(self.api.endpoint, 'GET', '/v1/conductors')
            alive = {c['hostname'] for c in (body or {}).get('conductors',
                                                              [])
                     if c['alive']}
            if st == 200 and set(names) <= alive:
                return
            if time.monotonic() > deadline:
                raise AssertionError('conductors %s not alive: %s\n%s' % (
                    names, body, '\n'.join(c.log() for c in
                                           self.conductors.values())))
            time.sleep(0.2)

    def logs(self):
        return '\n'.join('--- %s\n%s' % (n, s.log()) for n, s in
                         [('api', self.api)] + list(self.conductors.items()))

    def stop(self):
        for svc in list(self.conductors.values()) + [self.api]:
            svc.stop()


def enroll(endpoint, names) -> list[str]:
    """fake-hardware nodes with these names; their UUIDs."""
    uuids = []
    for name in names:
        st, body = call(endpoint, 'POST', '/v1/nodes',
                        {'driver': 'fake-hardware', 'name': name})
        assert st == 201, body
        uuids.append(body['uuid'])
    return uuids


def wait_all(endpoint, uuids, state, timeout=120):
    deadline = time.monotonic() + timeout
    pending = set(uuids)
    while pending:
        st, body = call(endpoint, 'GET', '/v1/nodes?fields=uuid,'
                        'provision_state,target_provision_state,last_error'
                        '&limit=1000')
        assert st == 200, body
        for n in body['nodes']:
            if n['uuid'] in pending and n['provision_state'] == state \
                    and not n['target_provision_state']:
                pending.discard(n['uuid'])
            assert 'failed' not in n['provision_state'], n
        if pending and time.monotonic() > deadline:
            raise AssertionError('%d nodes not %s' % (len(pending), state))
        if pending:
            time.sleep(0.2)


def provision_all(endpoint, uuids, verb):
    for u in uuids:
        for _ in range(100):
            st, body = call(endpoint, 'PUT', '/v1/nodes/%s/states/provision'
                            % u, {'target': verb})
            if st != 409:
                break
            time.sleep(0.1)
        assert st == 202, body
