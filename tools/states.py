#!/usr/bin/env python3
"""Draw the provision state machine for the docs, from the machine.

Writes ``doc/source/_generated/states.rst`` (a table) and ``states.dot``
(Graphviz; rendered to ``states.svg`` when ``dot`` is installed).
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from baremetal.common import state_machine as sm  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'doc', 'source', '_generated')


def table() -> str:
    lines = ['.. list-table::', '   :header-rows: 1', '',
             '   * - State', '     - Kind', '     - Event', '     - Next']
    for state in sm.STATES:
        kind = ('stable' if state in sm.STABLE_STATES and
                state not in sm.FAIL_STATES else
                'failure' if state in sm.FAIL_STATES else
                'wait' if state in sm.WAIT_STATES else 'active')
        for event, nxt in sorted(sm.events_from(state).items()):
            verb = '' if event in sm.INTERNAL_EVENTS else ' (verb)'
            lines += ['   * - ``%s``' % state, '     - %s' % kind,
                      '     - ``%s``%s' % (event, verb),
                      '     - ``%s``' % nxt]
    return '\n'.join(lines) + '\n'


def dot() -> str:
    out = ['digraph states {', '  rankdir=LR;', '  node [shape=box];']
    for state in sm.STATES:
        style = ('style=bold' if state in sm.STABLE_STATES else
                 'color=red' if state in sm.FAIL_STATES else
                 'style=dashed')
        out.append('  "%s" [%s];' % (state, style))
    for src, event, dst in sm.TRANSITIONS:
        out.append('  "%s" -> "%s" [label="%s"];' % (src, dst, event))
    out.append('}')
    return '\n'.join(out) + '\n'


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'states.rst'), 'w') as f:
        f.write(table())
    path = os.path.join(OUT, 'states.dot')
    with open(path, 'w') as f:
        f.write(dot())
    if shutil.which('dot'):
        subprocess.run(['dot', '-Tsvg', path, '-o',
                        os.path.join(OUT, 'states.svg')], check=True)


if __name__ == '__main__':
    main()
