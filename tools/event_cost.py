#!/usr/bin/env python3
"""What the change feed's events cost a node write on SQLite (the
embedded server): a database with the service's schema and triggers
(``baremetal/db/events.py``), one node written again and again, each
write a transaction of its own as the conductor's are, timed with the
thread's CPU clock.

    .venv/bin/python tools/event_cost.py [-n 4000] [--rounds 3]
        [--variants none,feed,...] [--json-out FILE]

Three kinds of write: ``step`` (a clean step and the internal info, as
the step runner saves them: two events, the old step's end and the new
one's start), ``state`` (a provision state and its target: one event)
and ``untracked`` (the internal info alone: no event).  Each under the
triggers as they are (``feed``), with none (``none``), and with one part
of the event left out: its JSON values (``no-json``), its timestamp
(``fixed-time``) or its context columns (``no-context``).  Variants run
in turn, round after round, on a table of events that grows as in the
server.  Figures are for one machine in one run, never for asserting.
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import sqlalchemy as sa  # noqa: E402

from baremetal.db import events  # noqa: E402
from baremetal.db import models  # noqa: E402

_CONTEXT = '{r}.resource_class, {r}.conductor_group, {r}.owner, {r}.lessee'


def _no_json(sql: str) -> str:
    sql = re.sub(r"json_remove\((\w+\.\w+), '\$\.args'\)", r'\1', sql)
    sql = re.sub(r'json_quote\((\w+\.\w+)\)', r'\1', sql)
    sql = re.sub(r"json_object\('old_target_provision_state'.*?"
                 r'NEW\.target_provision_state\)', 'NULL', sql)
    return re.sub(r"json_object\('step', '(\w+)'\)", r"'\1'", sql)


def _fixed_time(sql: str) -> str:
    return sql.replace(events._NOW, "'2026-01-01 00:00:00.000000'")


def _no_context(sql: str) -> str:
    for r in ('NEW', 'OLD'):
        sql = sql.replace(_CONTEXT.format(r=r), 'NULL, NULL, NULL, NULL')
    return sql


VARIANTS = {'none': None, 'feed': lambda s: s, 'no-json': _no_json,
            'fixed-time': _fixed_time, 'no-context': _no_context}


def _triggers(variant: str) -> list[str]:
    change = VARIANTS[variant]
    if change is None:
        return []
    out = [change(sql) for sql in events.SQLITE_TRIGGERS]
    if variant != 'feed' and out == list(events.SQLITE_TRIGGERS):
        # the triggers' text moved on: say so rather than time nothing
        raise SystemExit('%s: no trigger changed (update the tool to '
                         'db/events.py)' % variant)
    return out


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    # the embedded server's settings (db/engine.py)
    for pragma in ('journal_mode=WAL', 'synchronous=NORMAL',
                   'temp_store=MEMORY'):
        conn.execute('PRAGMA ' + pragma)
    return conn


def _set_triggers(conn: sqlite3.Connection, variant: str) -> None:
    for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND "
            "tbl_name = 'nodes'").fetchall():
        conn.execute('DROP TRIGGER %s' % name)
    for sql in _triggers(variant):
        conn.execute(sql)


def _write(conn: sqlite3.Connection, kind: str, i: int) -> None:
    at = '2026-01-01 00:00:00.%06d' % i
    info = json.dumps({'agent_url': 'http://192.0.2.1:9999', 'n': i})
    if kind == 'step':
        step = json.dumps({'step': 'erase_devices_%d' % (i % 7),
                           'interface': 'deploy', 'priority': 10,
                           'args': {'n': i}})
        conn.execute('UPDATE nodes SET driver_internal_info = ?, '
                     'clean_step = ?, updated_at = ? WHERE id = 1',
                     (info, step, at))
    elif kind == 'state':
        conn.execute('UPDATE nodes SET provision_state = ?, '
                     'target_provision_state = ?, provision_updated_at = ?, '
                     'updated_at = ? WHERE id = 1',
                     (('cleaning', 'clean wait')[i % 2], 'available', at, at))
    else:
        conn.execute('UPDATE nodes SET driver_internal_info = ?, '
                     'updated_at = ? WHERE id = 1', (info, at))


KINDS = ('step', 'state', 'untracked')


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('-n', type=int, default=4000,
                   help='writes of each kind a variant and round')
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--variants', default=','.join(VARIANTS),
                   help='comma-separated, of: %s' % ', '.join(VARIANTS))
    p.add_argument('--json-out', metavar='FILE',
                   help='also write the figures as JSON: {variant: {kind: '
                   '{"us": median, "events_a_write": events / writes}}}')
    args = p.parse_args()
    variants = args.variants.split(',')
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit('unknown variant %r' % v)
    tmp = tempfile.mkdtemp(prefix='event-cost-')
    try:
        path = os.path.join(tmp, 'events.db')
        engine = sa.create_engine('sqlite:///' + path)
        models.Base.metadata.create_all(engine)   # with the triggers
        engine.dispose()
        conn = _connect(path)
        conn.execute(
            "INSERT INTO nodes (uuid, driver, provision_state, maintenance, "
            "console_enabled, protected, driver_internal_info, created_at) "
            "VALUES ('11111111-2222-3333-4444-555555555555', "
            "'fake-hardware', 'available', 0, 0, 0, '{}', "
            "'2026-01-01 00:00:00.000000')")
        took = {(v, k): [] for v in variants for k in KINDS}
        wrote = {(v, k): 0 for v in variants for k in KINDS}
        for _ in range(args.rounds):
            for v in variants:
                _set_triggers(conn, v)
                for kind in KINDS:
                    before = _events(conn)
                    t = time.thread_time()
                    for i in range(args.n):
                        conn.execute('BEGIN')
                        _write(conn, kind, i)
                        conn.execute('COMMIT')
                    took[v, kind].append(
                        (time.thread_time() - t) / args.n * 1e6)
                    wrote[v, kind] += _events(conn) - before
        conn.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    writes = args.rounds * args.n
    print('us of CPU a write (its transaction included), median of %d '
          'rounds of %d writes; in brackets the events a write recorded'
          % (args.rounds, args.n))
    print('%-12s' % 'variant' + ''.join('%16s' % k for k in KINDS))
    for v in variants:
        print('%-12s' % v + ''.join(
            '%10.1f (%.2f)' % (statistics.median(took[v, k]),
                               wrote[v, k] / writes) for k in KINDS))
    if args.json_out:
        with open(args.json_out, 'w') as f:
            json.dump({v: {k: {'us': round(statistics.median(took[v, k]), 2),
                               'events_a_write': wrote[v, k] / writes}
                           for k in KINDS} for v in variants}, f, indent=1)


def _events(conn: sqlite3.Connection) -> int:
    return conn.execute('SELECT count(*) FROM node_events').fetchone()[0]


if __name__ == '__main__':
    main()
