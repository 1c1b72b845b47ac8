"""tools/sql_time.py at a small size, for correctness only: the
lifecycle benchmark passes against an embedded server whose SQLite
statements are timed (the timing changes nothing the server does), each
node statement is counted as often as the lifecycle runs it, and
``--drop-triggers`` drops every trigger of the change feed.  No timing
is asserted: the figures are printed."""

import json
import os
import subprocess
import sys

import pytest

from baremetal.db import events
from tests.functional import processes

TOOL = os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                    'sql_time.py')
NODES = 5
# the lifecycle benchmark the tool runs (tools/bench.py's BENCH_DIR)
LIFECYCLE = os.path.join(
    os.environ.get('BENCH_DIR', os.path.join(
        os.path.dirname(__file__), '..', '..', '..', 'shared', 'bench')),
    'lifecycle.py')


def _calls(statements: dict, prefix: str) -> int:
    return sum(row[0] for sql, row in statements.items()
               if ' '.join(sql.split()).startswith(prefix))


def test_sql_time_counts_the_lifecycle_statements(tmp_path):
    if not os.path.exists(LIFECYCLE):
        pytest.skip('%s is absent: the shared/ folder lies beside the '
                    'repository in CI only' % LIFECYCLE)
    out = tmp_path / 'sql.json'
    run = subprocess.run(
        [sys.executable, TOOL, '-n', str(NODES), '-c', '2',
         '--port', str(processes.free_port()), '--drop-triggers',
         '--top', '10', '--json-out', str(out)],
        capture_output=True, text=True, timeout=300)
    print(run.stdout[-3000:])
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    [result] = json.loads(out.read_text())['this tree']
    assert result['failures'] == 0
    assert result['triggers_dropped'] == len(events.SQLITE_TRIGGERS)
    statements = result['statements']
    # enrolled once, deleted once; the node reserved for each of the
    # four transitions (manage, provide, deploy, undeploy)
    assert _calls(statements, 'INSERT INTO nodes ') == NODES
    assert _calls(statements, 'DELETE FROM nodes ') == NODES
    assert _calls(statements, 'UPDATE nodes SET reservation=?') == \
        4 * NODES
    # each of those wrote in a transaction of its own, which ended in a
    # commit that was timed too
    assert statements['COMMIT'][0] >= 2 * NODES + 4 * NODES
    assert result['sqlite_cpu_s'] > 0
    assert 'statements by CPU' in run.stdout
