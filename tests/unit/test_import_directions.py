"""Imports point one way: api -> rpcapi -> manager -> workflows ->
drivers.  The API never imports the manager or drivers; drivers never
import the API or the conductor; common/ and conf/ import nothing above
them; states.py imports nothing."""

import ast
import os

import pytest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'baremetal')


def _imports(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            for a in node.names:
                yield '%s.%s' % (node.module, a.name)


def _modules(sub):
    base = os.path.join(PKG, sub)
    for dirpath, _, files in os.walk(base):
        for f in files:
            if f.endswith('.py'):
                yield os.path.join(dirpath, f)


FORBIDDEN = {
    'api': ('baremetal.conductor.manager', 'baremetal.drivers',
            'baremetal.conductor.task_manager',
            'baremetal.conductor.cleaning',
            'baremetal.conductor.deployments'),
    'drivers': ('baremetal.api', 'baremetal.conductor'),
    'common': ('baremetal.api', 'baremetal.conductor', 'baremetal.drivers',
               'baremetal.db', 'baremetal.objects'),
    'conf': ('baremetal.api', 'baremetal.conductor', 'baremetal.drivers',
             'baremetal.db', 'baremetal.objects'),
}


@pytest.mark.parametrize('sub', sorted(FORBIDDEN))
def test_imports_point_one_way(sub):
    bad = []
    for path in _modules(sub):
        for name in _imports(path):
            if name.startswith(FORBIDDEN[sub]):
                bad.append('%s imports %s' % (os.path.relpath(path, PKG),
                                              name))
    assert not bad, bad


def test_states_imports_nothing():
    assert list(_imports(os.path.join(PKG, 'common', 'states.py'))) == []
