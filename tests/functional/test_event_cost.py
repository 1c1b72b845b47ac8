"""tools/event_cost.py at a small size, for correctness only: every
variant it times still changes the change feed's SQLite triggers, and
each kind of write records the events it is meant to (a step change
two, a provision state one, the internal info none; no trigger, none).
No timing is asserted: the figures are printed."""

import json
import os
import subprocess
import sys

TOOL = os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                    'event_cost.py')


def test_event_cost_times_writes_that_record_their_events(tmp_path):
    out = tmp_path / 'cost.json'
    run = subprocess.run(
        [sys.executable, TOOL, '-n', '10', '--rounds', '2',
         '--json-out', str(out)],
        capture_output=True, text=True, timeout=120)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    figures = json.loads(out.read_text())
    assert set(figures) == {'none', 'feed', 'no-json', 'fixed-time',
                            'no-context'}
    expected = {'step': 2, 'state': 1, 'untracked': 0}
    for variant, kinds in figures.items():
        for kind, got in kinds.items():
            want = 0 if variant == 'none' else expected[kind]
            # the first step write of all finds no step to end
            assert abs(got['events_a_write'] - want) <= 0.05, \
                (variant, kind, got)
            assert got['us'] > 0
