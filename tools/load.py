#!/usr/bin/env python3
"""Load with correctness checks against a running baremetal API.

    python tools/load.py --endpoint http://127.0.0.1:6385 \
        [--clients 256] [--seconds 30] [--nodes-per-client 1] [--json]

Each client (a thread with its own keep-alive connection) enrolls its
own fake-hardware nodes, then until the time is up picks at random:
a PATCH of ``extra/load_seq`` (remembering the last value accepted), a
provision action that fits the node's state (manage, provide, active,
deleted), a GET of the node, or a page of the node list. Afterwards it
waits for every node to rest in a stable state and checks:

* no answer was a 5xx other than 503 with ``Retry-After`` (409
  ``NodeLocked`` is an expected answer under contention);
* every node shows the ``extra/load_seq`` its client last got a 2xx for
  (no update lost to a concurrent writer);
* every node rests in a stable state (nothing stuck in a transient one)
  with no reservation left.

It prints requests/s and latency percentiles per kind of request and
exits 1 if a check failed. The nodes it made are deleted at the end.
"""

import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

STABLE = ('enroll', 'manageable', 'available', 'active')
VERSION = '1.95'


class Conn:
    def __init__(self, endpoint: str) -> None:
        u = urllib.parse.urlsplit(endpoint)
        self.host, self.port = u.hostname, u.port or 80
        self.c = None

    def request(self, method: str, path: str, body=None):
        data = json.dumps(body) if body is not None else None
        headers = {'X-OpenStack-Ironic-API-Version': VERSION,
                   'Content-Type': 'application/json'}
        for attempt in range(3):
            if self.c is None:
                self.c = http.client.HTTPConnection(self.host, self.port,
                                                    timeout=60)
            try:
                self.c.request(method, path, data, headers)
                r = self.c.getresponse()
                raw = r.read()
                return r.status, raw, r.getheader('Retry-After')
            except (ConnectionError, http.client.HTTPException, OSError):
                # a keep-alive connection the server closed: once more
                self.c.close()
                self.c = None
                if attempt == 2:
                    raise
        raise AssertionError('unreachable')


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {}
        self.status: dict[int, int] = {}
        self.errors: list[str] = []

    def add(self, kind: str, seconds: float, status: int, retry_after,
            what: str, body: bytes) -> None:
        with self.lock:
            self.latency.setdefault(kind, []).append(seconds)
            self.status[status] = self.status.get(status, 0) + 1
            if status >= 500 and not (status == 503 and retry_after):
                self.errors.append('%s -> %d %s' % (what, status,
                                                     body[:300]))


def _verb_for(state: str) -> str | None:
    return {'enroll': 'manage', 'manageable': 'provide',
            'available': 'active', 'active': 'deleted'}.get(state)


def client(endpoint, stats, stop_at, n_nodes, idx, out):
    conn = Conn(endpoint)
    mine = {}       # uuid -> last accepted load_seq
    for i in range(n_nodes):
        t0 = time.monotonic()
        status, raw, ra = conn.request('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'name': 'load-%d-%d' % (idx, i),
            'extra': {'load': True}})
        stats.add('create', time.monotonic() - t0, status, ra,
                  'POST /v1/nodes', raw)
        if status == 201:
            mine[json.loads(raw)['uuid']] = None
    rnd = random.Random(idx)
    seq = 0
    while time.monotonic() < stop_at and mine:
        node = rnd.choice(list(mine))
        pick = rnd.random()
        t0 = time.monotonic()
        if pick < 0.35:
            seq += 1
            status, raw, ra = conn.request('PATCH', '/v1/nodes/%s' % node, [
                {'op': 'add', 'path': '/extra/load_seq', 'value': seq}])
            stats.add('patch', time.monotonic() - t0, status, ra,
                      'PATCH %s' % node, raw)
            if 200 <= status < 300:
                mine[node] = seq
        elif pick < 0.6:
            status, raw, ra = conn.request('GET', '/v1/nodes/%s' % node)
            stats.add('get', time.monotonic() - t0, status, ra,
                      'GET %s' % node, raw)
            if status != 200:
                continue
            verb = _verb_for(json.loads(raw)['provision_state'])
            if verb is None:
                continue
            t0 = time.monotonic()
            status, raw, ra = conn.request(
                'PUT', '/v1/nodes/%s/states/provision' % node,
                {'target': verb})
            stats.add('provision', time.monotonic() - t0, status, ra,
                      'PUT %s %s' % (verb, node), raw)
        elif pick < 0.9:
            status, raw, ra = conn.request('GET', '/v1/nodes/%s' % node)
            stats.add('get', time.monotonic() - t0, status, ra,
                      'GET %s' % node, raw)
        else:
            status, raw, ra = conn.request(
                'GET', '/v1/nodes?limit=50&fields=uuid,provision_state')
            stats.add('list', time.monotonic() - t0, status, ra,
                      'GET /v1/nodes', raw)
    out[idx] = mine


def _pct(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def run(endpoint: str, clients: int, seconds: float, per_client: int,
        settle: float = 60.0, tidy: bool = True) -> dict:
    stats = Stats()
    out: dict[int, dict] = {}
    start = time.monotonic()
    stop_at = start + seconds
    threads = [threading.Thread(target=client, args=(
        endpoint, stats, stop_at, per_client, i, out)) for i in
        range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    problems = list(stats.errors)
    conn = Conn(endpoint)
    expected = {u: s for m in out.values() for u, s in m.items()}
    # every node comes to rest, with every accepted PATCH visible
    deadline = time.monotonic() + settle
    pending = set(expected)
    while pending and time.monotonic() < deadline:
        for uuid in list(pending):
            status, raw, _ = conn.request('GET', '/v1/nodes/%s' % uuid)
            n = json.loads(raw)
            if status == 200 and n['provision_state'] in STABLE and \
                    not n['target_provision_state'] and \
                    not n['reservation']:
                pending.discard(uuid)
                want = expected[uuid]
                got = n['extra'].get('load_seq')
                if want is not None and got != want:
                    problems.append('lost update on %s: extra/load_seq is '
                                    '%r, the last accepted PATCH set %r'
                                    % (uuid, got, want))
        if pending:
            time.sleep(0.2)
    for uuid in pending:
        status, raw, _ = conn.request('GET', '/v1/nodes/%s' % uuid)
        n = json.loads(raw)
        problems.append('node %s did not come to rest: %s (target %s, '
                        'reservation %s, last_error %s)'
                        % (uuid, n.get('provision_state'),
                           n.get('target_provision_state'),
                           n.get('reservation'), n.get('last_error')))
    # tidy up: back to manageable or enroll, then delete
    for uuid in (expected if tidy else ()):
        for _ in range(60):
            status, raw, _ = conn.request('GET', '/v1/nodes/%s' % uuid)
            state = json.loads(raw).get('provision_state')
            if state in ('enroll', 'manageable'):
                conn.request('DELETE', '/v1/nodes/%s' % uuid)
                break
            verb = {'available': 'manage', 'active': 'deleted'}.get(state)
            if verb:
                conn.request('PUT', '/v1/nodes/%s/states/provision' % uuid,
                             {'target': verb})
            time.sleep(0.1)
    total = sum(len(v) for v in stats.latency.values())
    result = {
        'clients': clients, 'seconds': round(elapsed, 2),
        'nodes': len(expected), 'requests': total,
        'requests_per_s': round(total / elapsed, 1),
        'status': dict(sorted(stats.status.items())),
        'latency_ms': {k: {'n': len(v),
                           'p50': round(_pct(v, 0.5) * 1000, 1),
                           'p99': round(_pct(v, 0.99) * 1000, 1)}
                       for k, v in sorted(stats.latency.items())},
        'p99_ms': round(_pct([x for v in stats.latency.values()
                              for x in v], 0.99) * 1000, 1),
        'problems': problems,
    }
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--endpoint', default='http://127.0.0.1:6385')
    p.add_argument('--clients', type=int, default=256)
    p.add_argument('--seconds', type=float, default=30)
    p.add_argument('--nodes-per-client', type=int, default=1)
    p.add_argument('--json', action='store_true')
    p.add_argument('--keep', action='store_true',
                   help='leave the nodes it made')
    args = p.parse_args()
    result = run(args.endpoint, args.clients, args.seconds,
                 args.nodes_per_client, tidy=not args.keep)
    if args.json:
        print(json.dumps(result))
    else:
        print('%(clients)d clients, %(seconds)s s, %(nodes)d nodes: '
              '%(requests)d requests, %(requests_per_s)s req/s, p99 '
              '%(p99_ms)s ms' % result)
        for kind, lat in result['latency_ms'].items():
            print('  %-10s n=%-6d p50 %7.1f ms  p99 %7.1f ms'
                  % (kind, lat['n'], lat['p50'], lat['p99']))
        print('  status codes: %s' % result['status'])
        for line in result['problems']:
            print('PROBLEM: %s' % line)
    return 1 if result['problems'] else 0


if __name__ == '__main__':
    sys.exit(main())
