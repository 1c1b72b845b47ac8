#!/usr/bin/env python3
"""Run ../shared/bench/lifecycle.py against a fresh embedded
baremetal-server and, with --ironic, against OpenStack Ironic in the same
run; print the figures and our ratios.

    python tools/bench.py -n 1000 -c 32 [--get-clients 8] [--ironic]
        [--scale-out] [--rounds N] [--json-out F]

``--compare REF`` runs the embedded server of another commit too (a
detached git worktree of REF, imported through PYTHONPATH), round by
round in alternating order, and prints this tree's figures over REF's
for each round and their medians: the way to tell what a change did to
the hot path on a machine whose speed drifts between minutes.
``--hot-path`` also runs tools/hot_path.py against each embedded server
(one keep-alive client: node GETs and detail lists, the server's CPU per
request from /proc), and with ``--compare`` its ratios too.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import hot_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.environ.get('BENCH_DIR',
                       os.path.join(ROOT, '..', 'shared', 'bench'))


def _wait(url: str, timeout: float = 120) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return time.monotonic() - t0
        except OSError:
            time.sleep(0.02)
    raise SystemExit('no answer from %s' % url)


def _lifecycle(endpoint: str, pid: int, label: str, nodes: int,
               clients: int, extra: list[str],
               version: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix='bm-bench-out-') as tmp:
        out = os.path.join(tmp, 'bench.jsonl')
        cmd = [sys.executable, os.path.join(BENCH, 'lifecycle.py'),
               '--endpoint', endpoint, '-n', str(nodes), '-c', str(clients),
               '--server-pid', str(pid), '--label', label,
               '--json-out', out] + extra
        if version:
            cmd += ['--api-version', version]
        subprocess.run(cmd, check=False)
        with open(out) as f:
            return json.loads(f.read().splitlines()[-1])


def run_bench(endpoint: str, pid: int, label: str, args) -> dict:
    result = _lifecycle(endpoint, pid, label, args.nodes, args.concurrency,
                        [], args.api_version)
    if args.get_clients:
        # the single-node GET throughput with fewer clients: enroll the
        # same number of nodes, read, delete (no transitions)
        second = _lifecycle(endpoint, pid, label, args.nodes,
                            args.get_clients,
                            ['--skip', 'manage,provide,deploy,undeploy',
                             '--probe-reps', '0'], args.api_version)
        result['get_node_fewer_clients'] = second.get('read', {}).get(
            'get_node_concurrent', {})
    return result


def ours(args, tree: str = ROOT) -> dict:
    """The embedded server of ``tree`` (this checkout, or a worktree of
    the commit --compare names) under the lifecycle benchmark."""
    # an installed package ships compiled bytecode; a source tree run
    # with PYTHONDONTWRITEBYTECODE would compile every module at each
    # start, which is not what the start-up figure is about
    subprocess.run([sys.executable, '-m', 'compileall', '-q',
                    os.path.join(tree, 'baremetal')], check=True)
    env = None
    if tree != ROOT:
        # the other commit's package before this checkout's
        env = dict(os.environ, PYTHONPATH=tree)
    state = tempfile.mkdtemp(prefix='bm-bench-')
    conf = os.path.join(state, 'bench.conf')
    with open(conf, 'w') as f:
        f.write('[DEFAULT]\nstate_path = %s\n[api]\nport = %d\n'
                % (state, args.port))
    exe = os.path.join(os.path.dirname(sys.executable), 'baremetal-server')
    proc = subprocess.Popen([exe, '--config-file', conf],
                            stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(state, 'log'), 'w'),
                            env=env)
    try:
        startup = _wait('http://127.0.0.1:%d/' % args.port)
        endpoint = 'http://127.0.0.1:%d' % args.port
        result = run_bench(endpoint, proc.pid, 'baremetal', args)
        result['startup_s'] = round(startup, 3)
        if args.hot_path:
            result['hot_path'] = hot_path.run(
                endpoint, proc.pid, args.nodes,
                version=args.api_version)
        return result
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(state, ignore_errors=True)


def _production_intervals() -> dict:
    """The cluster of the functional tests runs its periodic tasks every
    second or so; the benchmark measures what an operator runs: the
    defaults, as the embedded server it is compared with."""
    from baremetal.conf import conductor as conductor_conf
    names = ('sync_power_state_interval', 'heartbeat_interval',
             'heartbeat_timeout', 'hash_ring_reset_interval',
             'takeover_interval', 'check_provision_state_interval')
    return {o.name: o.default for o in conductor_conf.opts
            if o.name in names}


def scale_out(args) -> dict:
    """baremetal-api + 2 baremetal-conductor over RabbitMQ and PostgreSQL
    or MariaDB (``--scale-out-db``; a fresh database and vhost), the
    cluster of the functional tests."""
    sys.path.insert(0, ROOT)
    from tests import services
    from tests.functional import cluster
    tmp = tempfile.mkdtemp(prefix='bm-bench-scale-')
    db = {'postgresql': services.postgresql_url,
          'mysql': services.mysql_url}[args.scale_out_db]
    c = cluster.Cluster(tmp, db(),
                        services.rabbit_url(), conductors=2,
                        conductor=_production_intervals())
    try:
        c.wait_conductors(list(c.conductors))
        pids = ','.join(str(s.proc.pid) for s in
                        [c.api] + list(c.conductors.values()))
        return run_bench(c.api.endpoint, pids, 'baremetal-scale-out', args)
    finally:
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def ironic(args) -> dict:
    script = os.path.join(BENCH, 'start_ironic.sh')
    env = dict(os.environ, PORT=str(args.ironic_port))
    subprocess.run([script, 'fresh'], env=env, capture_output=True,
                   text=True, check=True)
    state = os.environ.get('STATE_DIR', os.path.join(
        os.environ.get('BENCH_HOME', os.path.expanduser(
            '~/.cache/baremetal-bench')), 'ironic-state'))
    with open(os.path.join(state, 'ironic.pid')) as f:
        pid = int(f.read().split()[0])
    try:
        return run_bench('http://127.0.0.1:%d' % args.ironic_port, pid,
                         'ironic', args)
    finally:
        subprocess.run([script, 'stop'], env=env, check=False)


FIGURES = (
    ('whole lifecycle wall (s)', lambda r: sum(
        p.get('wall_s') or 0 for k, p in r['phases'].items()
        if k in ('enroll', 'manage', 'provide', 'deploy', 'undeploy',
                 'delete'))),
    ('server CPU for the lifecycle (s)', lambda r: sum(
        p.get('server_cpu_s') or 0 for k, p in r['phases'].items()
        if k in ('enroll', 'manage', 'provide', 'deploy', 'undeploy',
                 'delete'))),
)


# tools/hot_path.py's figures (--hot-path)
HOT_PATH = (
    ('hot path: node GET, server CPU (ms)',
     lambda r: r['hot_path']['get_node']['server_cpu_ms']),
    ('hot path: node GET, median (ms)',
     lambda r: r['hot_path']['get_node']['p50_ms']),
    ('hot path: detail list, server CPU (ms)',
     lambda r: r['hot_path']['detail']['server_cpu_ms']),
    ('hot path: detail list, median (ms)',
     lambda r: r['hot_path']['detail']['p50_ms']),
)


def _read(r: dict, name: str):
    read = r.get('read', {})
    if name == 'get_node_rps':
        return read.get('get_node_concurrent', {}).get('rps')
    if name == 'get_node_rps_fewer':
        return r.get('get_node_fewer_clients', {}).get('rps')
    return read.get(name, {}).get('median_ms')


def _lifecycle_ratios(title: str, top: dict, bottom: dict,
                      fmt: str) -> None:
    print(title)
    for name, fn in FIGURES:
        a, b = fn(top), fn(bottom)
        print('  %-36s ' % name + fmt % (a / b if b else float('inf')))


def report(results: dict) -> None:
    for label, r in results.items():
        print('== %s' % label)
        for name, fn in FIGURES:
            print('  %-36s %s' % (name, round(fn(r), 2)))
        for name in ('list', 'list_detail', 'list_fields_paginated',
                     'get_node'):
            print('  %-36s %s' % ('read %s median (ms)' % name,
                                  _read(r, name)))
        print('  %-36s %s' % ('GET node req/s (-c clients)',
                              _read(r, 'get_node_rps')))
        if _read(r, 'get_node_rps_fewer'):
            print('  %-36s %s' % ('GET node req/s (--get-clients)',
                                  _read(r, 'get_node_rps_fewer')))
        print('  %-36s %s' % ('peak RSS (MiB)', r.get('server_peak_rss_mib')))
        if 'startup_s' in r:
            print('  %-36s %s' % ('start-up to first answer (s)',
                                  r['startup_s']))
        for name, fn in HOT_PATH:
            if 'hot_path' in r:
                print('  %-36s %s' % (name, fn(r)))
    if 'scale-out' in results:
        _lifecycle_ratios('== scale-out / embedded (lower is better)',
                          results['scale-out'], results['baremetal'],
                          '%.2fx')
    if 'ironic' in results:
        o, i = results['baremetal'], results['ironic']
        _lifecycle_ratios('== ratios (ironic / baremetal; higher is better)',
                          i, o, '%.1fx')
        for name in ('list', 'list_detail', 'list_fields_paginated',
                     'get_node'):
            a, b = _read(i, name), _read(o, name)
            if a and b:
                print('  %-36s %.1fx' % ('read ' + name, a / b))
        for key, name in (('get_node_rps', 'GET node req/s (-c)'),
                          ('get_node_rps_fewer',
                           'GET node req/s (--get-clients)')):
            a, b = _read(i, key), _read(o, key)
            if a and b:
                print('  %-36s %.1fx' % (name, b / a))
        a, b = i.get('server_peak_rss_mib'), o.get('server_peak_rss_mib')
        if a and b:
            print('  %-36s %.1fx' % ('RSS', a / b))


def report_rounds(rounds: list[dict]) -> None:
    """Each round's lifecycle figures; the scale-out/embedded ratios'
    medians when the cluster ran too."""
    print('== rounds (lifecycle wall s, server CPU s)')
    ratios: dict[str, list[float]] = {name: [] for name, _ in FIGURES}
    for i, one in enumerate(rounds, 1):
        line = '  round %d: embedded %s' % (i, ' / '.join(
            '%.2f' % fn(one['baremetal']) for _, fn in FIGURES))
        if 'scale-out' in one:
            line += ', scale-out %s' % ' / '.join(
                '%.2f' % fn(one['scale-out']) for _, fn in FIGURES)
            for name, fn in FIGURES:
                ratios[name].append(fn(one['scale-out']) /
                                    fn(one['baremetal']))
            line += ' (%s)' % ' / '.join(
                '%.2fx' % ratios[name][-1] for name, _ in FIGURES)
        print(line)
    for name, values in ratios.items():
        if values:
            print('  median scale-out/embedded %-26s %.2fx'
                  % (name, statistics.median(values)))


def report_compare(ref: str, rounds: list[dict]) -> None:
    """This tree's lifecycle figures over REF's, per round (each pair
    run back to back) and the median."""
    print('== this tree / %s (lower is better)' % ref)
    figures = FIGURES
    if all('hot_path' in one[k] for one in rounds
           for k in ('baremetal', 'compare')):
        figures = FIGURES + HOT_PATH
    ratios: dict[str, list[float]] = {name: [] for name, _ in figures}
    for i, one in enumerate(rounds, 1):
        parts = []
        for name, fn in figures:
            a, b = fn(one['baremetal']), fn(one['compare'])
            ratios[name].append(a / b if b else float('inf'))
            parts.append('%.2f / %.2f' % (a, b))
        print('  round %d: %s' % (i, ', '.join(parts)))
    for name, values in ratios.items():
        print('  median %-36s %.3fx' % (name, statistics.median(values)))


class _Worktree:
    """A detached worktree of ``ref`` in a temporary directory."""

    def __init__(self, ref: str) -> None:
        self.path = tempfile.mkdtemp(prefix='bm-bench-ref-')
        subprocess.run(['git', '-C', ROOT, 'worktree', 'add', '--detach',
                        '-q', self.path, ref], check=True)

    def remove(self) -> None:
        subprocess.run(['git', '-C', ROOT, 'worktree', 'remove', '--force',
                        self.path], check=False)
        shutil.rmtree(self.path, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('-n', '--nodes', type=int, default=200)
    p.add_argument('-c', '--concurrency', type=int, default=16)
    p.add_argument('--get-clients', type=int, default=0,
                   help='also measure GET /v1/nodes/{id} req/s with this '
                        'many clients (a second pass: enroll, read, '
                        'delete)')
    p.add_argument('--port', type=int, default=6395)
    p.add_argument('--ironic', action='store_true',
                   help='also run OpenStack Ironic (start_ironic.sh)')
    p.add_argument('--scale-out-db', choices=('postgresql', 'mysql'),
                   default='postgresql',
                   help='the database of --scale-out (the local server)')
    p.add_argument('--scale-out', action='store_true',
                   help='also run baremetal-api + 2 conductors over '
                        'RabbitMQ and PostgreSQL (local services)')
    p.add_argument('--rounds', type=int, default=1,
                   help='run baremetal (and the scale-out cluster) this '
                        'many times, alternating, and show every round '
                        'and the median of the scale-out/embedded ratios '
                        '(a shared machine drifts by tens of percent '
                        'between minutes); the other figures are the '
                        'first round\'s')
    p.add_argument('--ironic-port', type=int, default=6390)
    p.add_argument('--compare', metavar='REF',
                   help='also run the embedded server of commit REF in '
                        'each round (alternating which goes first) and '
                        'print this tree\'s figures over REF\'s')
    p.add_argument('--hot-path', action='store_true',
                   help='also measure node GETs and detail lists with '
                        'one keep-alive client, with the server\'s CPU '
                        'per request (tools/hot_path.py), in every round')
    p.add_argument('--api-version', metavar='X.Y',
                   help='the API version every request asks for '
                   '(default: lifecycle.py\'s, 1.81, and the newest the '
                   'server speaks up to 1.115 for --hot-path; each capped '
                   'at what the server speaks); with --compare against '
                   'an older commit, give one both speak, as newer '
                   'versions show more fields')
    p.add_argument('--json-out')
    args = p.parse_args()
    rounds = []
    other = _Worktree(args.compare) if args.compare else None
    try:
        for i in range(max(1, args.rounds)):
            one = {}
            if other and i % 2:
                one['compare'] = ours(args, other.path)
            one['baremetal'] = ours(args)
            if other and not i % 2:
                one['compare'] = ours(args, other.path)
            if args.scale_out:
                one['scale-out'] = scale_out(args)
            rounds.append(one)
    finally:
        if other:
            other.remove()
    results = {k: v for k, v in rounds[0].items() if k != 'compare'}
    if args.ironic:
        results['ironic'] = ironic(args)
    report(results)
    if len(rounds) > 1:
        report_rounds(rounds)
    if other:
        report_compare(args.compare, rounds)
    if len(rounds) > 1 or other:
        results['rounds'] = rounds
    if args.json_out:
        with open(args.json_out, 'a') as f:
            f.write(json.dumps(results) + '\n')


if __name__ == '__main__':
    main()
