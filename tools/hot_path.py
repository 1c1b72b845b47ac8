"""The hot path measured the way a polling client meets it: one
keep-alive client, ``GET /v1/nodes/{id}`` over N enrolled nodes in turn,
then ``GET /v1/nodes/detail`` of all of them, with the server's CPU per
request read from ``/proc`` (so that the client's own work is not in
it) beside the median time a request took.  ``tools/bench.py
--hot-path`` runs it in each round, for each server it starts (and
``--compare REF`` prints this tree's figures over REF's).

    python tools/hot_path.py --endpoint http://127.0.0.1:6385 --pid PID

The nodes it enrolls (fake-hardware) are deleted again at the end.
Requests ask for ``--version`` (default: the newest the server speaks,
at most 1.115); an older commit (``bench.py --compare``) speaks fewer
versions and its detail list has fewer fields, so compare at a version
both speak.
"""

import argparse
import http.client
import json
import statistics
import time
import urllib.parse

import proc_stats

NEWEST = (1, 115)
HEADERS = {'X-OpenStack-Ironic-API-Version': '%d.%d' % NEWEST,
           'Content-Type': 'application/json'}


def _call(conn, method: str, path: str, body=None) -> tuple[int, bytes]:
    conn.request(method, path,
                 None if body is None else json.dumps(body), HEADERS)
    r = conn.getresponse()
    return r.status, r.read()


def _version(conn, asked: str | None) -> str:
    """``asked``, else the newest version the server speaks (at most
    NEWEST)."""
    if asked:
        return asked
    conn.request('GET', '/')
    r = conn.getresponse()
    newest = json.loads(r.read())['default_version']['version']
    major, minor = (int(x) for x in newest.split('.'))
    return '%d.%d' % min((major, minor), NEWEST)


def _timed(conn, pid: int, paths: list[str]) -> dict:
    """Each path once, in order: the median time of a request, the
    server's CPU per request, and the statuses that were not 200."""
    took, bad = [], 0
    cpu0 = proc_stats.cpu_seconds(pid)
    for path in paths:
        t0 = time.perf_counter()
        status, _ = _call(conn, 'GET', path)
        took.append(time.perf_counter() - t0)
        bad += status != 200
    cpu = proc_stats.cpu_seconds(pid) - cpu0
    return {'requests': len(paths), 'not_ok': bad,
            'p50_ms': round(statistics.median(took) * 1e3, 3),
            'server_cpu_ms': round(cpu / len(paths) * 1e3, 3)}


def run(endpoint: str, pid: int, nodes: int = 200, gets: int = 4000,
        details: int = 300, version: str | None = None) -> dict:
    url = urllib.parse.urlsplit(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    HEADERS['X-OpenStack-Ironic-API-Version'] = _version(conn, version)
    uuids = []
    try:
        for i in range(nodes):
            status, body = _call(conn, 'POST', '/v1/nodes', {
                'driver': 'fake-hardware', 'name': 'hot-path-%d' % i,
                'properties': {'cpus': 8, 'memory_mb': 4096}})
            if status != 201:
                raise SystemExit('enrolling a node: %d %s' % (status, body))
            uuids.append(json.loads(body)['uuid'])
        status, body = _call(conn, 'GET', '/v1/nodes/detail')
        listed = len(json.loads(body)['nodes'])
        get = _timed(conn, pid, ['/v1/nodes/' + uuids[i % nodes]
                                 for i in range(gets)])
        detail = _timed(conn, pid, ['/v1/nodes/detail'] * details)
        return {'nodes': nodes, 'listed': listed, 'get_node': get,
                'version': HEADERS['X-OpenStack-Ironic-API-Version'],
                'detail': detail}
    finally:
        for uuid in uuids:
            _call(conn, 'DELETE', '/v1/nodes/' + uuid)
        conn.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--endpoint', default='http://127.0.0.1:6385')
    p.add_argument('--pid', type=int, required=True,
                   help='the server process, whose CPU is read')
    p.add_argument('-n', '--nodes', type=int, default=200)
    p.add_argument('--gets', type=int, default=4000)
    p.add_argument('--details', type=int, default=300)
    p.add_argument('--version', help='API version asked for (default: '
                   'the newest the server speaks, at most %d.%d)' % NEWEST)
    args = p.parse_args()
    print(json.dumps(run(args.endpoint, args.pid, args.nodes, args.gets,
                         args.details, args.version)))


if __name__ == '__main__':
    main()
