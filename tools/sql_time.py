#!/usr/bin/env python3
"""Where the embedded server's SQLite time goes: the lifecycle benchmark
(../shared/bench/lifecycle.py) against a fresh baremetal-server whose
SQLite connections time every statement, commit and fetch with the
calling thread's CPU clock.  SQLite runs a statement in the thread that
asks, with the interpreter lock released: that clock holds what the
statement costs its thread (SQLite's own work and the driver's, the
kernel's for it - writes to the write-ahead log, file locks - and taking
the interpreter lock back).  Prints the statements by the CPU they took,
SQLite's total and the server's CPU over the same run.

    python tools/sql_time.py [-n 200] [-c 16] [--compare REF] [--top 25]
        [--drop-triggers] [--json-out F]

``--compare REF`` runs the embedded server of another commit the same
way (a detached git worktree, as ``tools/bench.py --compare``), round by
round in alternating order, and prints both side by side.
``--drop-triggers`` is an experiment, not a configuration: it drops the
change feed's SQLite triggers once the server is up (``GET /events``
then records nothing), to show what writing the events costs.

Figures are for telling where time goes on one machine in one run,
never for asserting.
"""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import bench
import proc_stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMIT = 'COMMIT'
ROLLBACK = 'ROLLBACK'


# ------------------------------------------------ in the server (--serve)

class Accounts:
    """Statement -> [calls, CPU seconds running it, CPU seconds fetching
    its rows]; counted only while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.rows: dict[str, list] = {}
        self._lock = threading.Lock()

    def add(self, sql: str, cpu: float, fetch: bool = False) -> None:
        with self._lock:
            row = self.rows.get(sql)
            if row is None:
                row = self.rows[sql] = [0, 0.0, 0.0]
            if fetch:
                row[2] += cpu
            else:
                row[0] += 1
                row[1] += cpu


def install(accounts: Accounts) -> None:
    """Every sqlite3 connection opened from now on is timed."""
    clock = time.thread_time

    class Cursor(sqlite3.Cursor):
        _sql = None

        def _run(self, run, sql, args):
            if not accounts.on:
                return run(sql, *args)
            self._sql = sql
            t = clock()
            try:
                return run(sql, *args)
            finally:
                accounts.add(sql, clock() - t)

        def execute(self, sql, *args):
            return self._run(super().execute, sql, args)

        def executemany(self, sql, *args):
            return self._run(super().executemany, sql, args)

        def _fetch(self, fetch, *args):
            if not accounts.on or self._sql is None:
                return fetch(*args)
            t = clock()
            try:
                return fetch(*args)
            finally:
                accounts.add(self._sql, clock() - t, fetch=True)

        def fetchall(self):
            return self._fetch(super().fetchall)

        def fetchone(self):
            return self._fetch(super().fetchone)

        def fetchmany(self, *args):
            return self._fetch(super().fetchmany, *args)

    class Connection(sqlite3.Connection):
        def cursor(self, factory=Cursor):
            return super().cursor(factory)

        # the C method would make a plain cursor
        def execute(self, sql, *args):
            return self.cursor().execute(sql, *args)

        def executemany(self, sql, *args):
            return self.cursor().executemany(sql, *args)

        def _end(self, name, end):
            if not accounts.on:
                return end()
            t = clock()
            try:
                return end()
            finally:
                accounts.add(name, clock() - t)

        def commit(self):
            return self._end(COMMIT, super().commit)

        def rollback(self):
            return self._end(ROLLBACK, super().rollback)

    connect = sqlite3.connect

    def timed_connect(*args, **kwargs):
        kwargs.setdefault('factory', Connection)
        return connect(*args, **kwargs)

    sqlite3.connect = timed_connect
    sqlite3.dbapi2.connect = timed_connect


def serve(control: str, server_args: list[str]) -> None:
    """Run baremetal-server with its SQLite timed; ``control``/start
    (a file) begins the count, ``control``/stop writes it to
    ``control``/accounts.json."""
    accounts = Accounts()
    install(accounts)

    def watch():
        start, stop = (os.path.join(control, f) for f in ('start', 'stop'))
        while not os.path.exists(start):
            time.sleep(0.05)
        accounts.on = True
        while not os.path.exists(stop):
            time.sleep(0.05)
        accounts.on = False
        out = os.path.join(control, 'accounts.json')
        with open(out + '.tmp', 'w') as f:
            json.dump(accounts.rows, f)
        os.rename(out + '.tmp', out)

    threading.Thread(target=watch, name='sql-time', daemon=True).start()
    from baremetal.cmd import server
    sys.argv = ['baremetal-server'] + server_args
    server.main()


# ------------------------------------------------ the run

def _touch(path: str) -> None:
    open(path, 'w').close()


def drop_triggers(db: str) -> list[str]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        names = [n for (n,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND "
            "name LIKE 'node_events_on_%'")]
        for name in names:
            conn.execute('DROP TRIGGER %s' % name)
        conn.commit()
    finally:
        conn.close()
    return names


def one_run(tree: str, args, label: str) -> dict:
    """The lifecycle benchmark against ``tree``'s embedded server, its
    SQLite timed."""
    subprocess.run([sys.executable, '-m', 'compileall', '-q',
                    os.path.join(tree, 'baremetal')], check=True)
    state = tempfile.mkdtemp(prefix='bm-sql-time-')
    conf = os.path.join(state, 'server.conf')
    with open(conf, 'w') as f:
        f.write('[DEFAULT]\nstate_path = %s\n[api]\nport = %d\n'
                % (state, args.port))
    control = os.path.join(state, 'control')
    os.mkdir(control)
    env = dict(os.environ, PYTHONPATH=tree)
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), '--serve', control,
         '--', '--config-file', conf],
        stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(state, 'log'), 'w'), env=env)
    try:
        endpoint = 'http://127.0.0.1:%d' % args.port
        bench._wait(endpoint + '/')
        dropped = []
        if args.drop_triggers:
            dropped = drop_triggers(os.path.join(state, 'baremetal.sqlite'))
        cpu0 = proc_stats.cpu_seconds(proc.pid)
        _touch(os.path.join(control, 'start'))
        result = bench._lifecycle(
            endpoint, proc.pid, label, args.nodes, args.concurrency,
            ['--skip', 'read', '--probe-reps', '0'], args.api_version)
        _touch(os.path.join(control, 'stop'))
        server_cpu = proc_stats.cpu_seconds(proc.pid) - cpu0
        out = os.path.join(control, 'accounts.json')
        deadline = time.monotonic() + 60
        while not os.path.exists(out):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit('the server wrote no accounts (log: %s)'
                                 % os.path.join(state, 'log'))
            time.sleep(0.05)
        with open(out) as f:
            rows = json.load(f)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(state, ignore_errors=True)
    return {'failures': result.get('failure_count'),
            'nodes': args.nodes, 'server_cpu_s': round(server_cpu, 3),
            'sqlite_cpu_s': round(sum(r[1] + r[2] for r in rows.values()),
                                  4),
            'triggers_dropped': len(dropped), 'statements': rows}


def _short(sql: str, width: int) -> str:
    text = ' '.join(sql.split())
    return text if len(text) <= width else text[:width - 3] + '...'


def report(runs: dict[str, list[dict]], top: int) -> None:
    names = list(runs)
    print('== totals (median of rounds; seconds)')
    for name in names:
        sqlite_s = statistics.median(r['sqlite_cpu_s'] for r in runs[name])
        server_s = statistics.median(r['server_cpu_s'] for r in runs[name])
        print('  %-12s SQLite CPU %.3f of the server\'s %.2f (%.0f%%)'
              % (name, sqlite_s, server_s,
                 100 * sqlite_s / server_s if server_s else 0))
    # each statement's CPU: the median over the rounds of each tree
    merged: dict[str, dict[str, tuple]] = {}
    for name in names:
        keys = set().union(*(r['statements'] for r in runs[name]))
        for sql in keys:
            per = [r['statements'].get(sql, [0, 0.0, 0.0])
                   for r in runs[name]]
            merged.setdefault(sql, {})[name] = (
                statistics.median(p[0] for p in per),
                statistics.median(p[1] + p[2] for p in per))
    order = sorted(merged, key=lambda s: -max(
        v[1] for v in merged[s].values()))
    print('== statements by CPU (calls, ms, us a call)')
    for sql in order[:top]:
        cells = []
        for name in names:
            calls, cpu = merged[sql].get(name, (0, 0.0))
            cells.append('%7d %8.1f %6.1f' % (
                calls, cpu * 1e3, cpu / calls * 1e6 if calls else 0))
        print('  %s  %s' % (' | '.join(cells), _short(sql, 90)))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == '--serve':
        rest = sys.argv[3:]
        serve(sys.argv[2], rest[1:] if rest[:1] == ['--'] else rest)
        return
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('-n', '--nodes', type=int, default=200)
    p.add_argument('-c', '--concurrency', type=int, default=16)
    p.add_argument('--port', type=int, default=6396)
    p.add_argument('--rounds', type=int, default=1)
    p.add_argument('--compare', metavar='REF',
                   help='also run the embedded server of commit REF, '
                        'alternating, and print both')
    p.add_argument('--drop-triggers', action='store_true',
                   help='an experiment: drop the change feed\'s triggers '
                        'once the server is up')
    p.add_argument('--api-version', metavar='X.Y', default='1.61')
    p.add_argument('--top', type=int, default=25)
    p.add_argument('--json-out')
    args = p.parse_args()
    runs: dict[str, list[dict]] = {'this tree': []}
    other = None
    if args.compare:
        runs[args.compare] = []
        other = bench._Worktree(args.compare)
    try:
        for i in range(max(1, args.rounds)):
            order = [('this tree', ROOT)]
            if other:
                order.append((args.compare, other.path))
                if i % 2:
                    order.reverse()
            for name, tree in order:
                runs[name].append(one_run(tree, args, name))
    finally:
        if other:
            other.remove()
    failed = sum(r['failures'] or 0 for rs in runs.values() for r in rs)
    report(runs, args.top)
    if args.json_out:
        with open(args.json_out, 'w') as f:
            json.dump(runs, f)
    if failed:
        raise SystemExit('%d lifecycle failures' % failed)


if __name__ == '__main__':
    main()
