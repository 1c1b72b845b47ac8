"""Imports point one way: api -> rpcapi -> manager -> workflows ->
drivers.  The API imports nothing of the conductor but its RPC client
and nothing of the drivers; drivers never import the API or the
conductor; common/ and conf/ import nothing above them; states.py
imports nothing.  No module is exempt.

Every import counts: at the top of a module or inside a function,
absolute or relative, ``from baremetal import conductor`` as much as
``import baremetal.conductor.manager``, and ``importlib.import_module``
of a name written in the code."""

import ast
import os

import pytest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'baremetal')


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(PKG))[:-len('.py')]
    parts = rel.split(os.sep)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name a ``from ... import`` reads from."""
    if not node.level:
        return node.module or ''
    base = module.split('.')
    # a module's own package is one level up; a package's is itself
    up = node.level - (1 if is_package else 0)
    base = base[:len(base) - up] if up else base
    return '.'.join(base + ([node.module] if node.module else []))


def _dynamic(node: ast.Call) -> str | None:
    """The name given to importlib.import_module / __import__, when it
    is written in the code (or begins a concatenation)."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else \
        f.id if isinstance(f, ast.Name) else None
    if name not in ('import_module', '__import__') or not node.args:
        return None
    arg = node.args[0]
    while isinstance(arg, ast.BinOp):
        arg = arg.left
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def imported(source: str, module: str, is_package: bool = False):
    """Every name ``source`` (the text of the module ``module``)
    imports, absolute: ``from a import b`` gives ``a.b`` (whether ``b``
    is a module or a name in ``a``, it is under ``a``)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            for a in node.names:
                yield '%s.%s' % (base, a.name) if base else a.name
        elif isinstance(node, ast.Call):
            name = _dynamic(node)
            if name:
                yield name


def _modules(sub):
    base = os.path.join(PKG, sub)
    for dirpath, _, files in os.walk(base):
        for f in files:
            if f.endswith('.py'):
                yield os.path.join(dirpath, f)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + '.')


# sub-package -> (what it may not import, the exceptions to that)
RULES = {
    'api': (('baremetal.conductor', 'baremetal.drivers'),
            ('baremetal.conductor.rpcapi',)),
    'drivers': (('baremetal.api', 'baremetal.conductor'), ()),
    'common': (('baremetal.api', 'baremetal.conductor', 'baremetal.drivers',
                'baremetal.db', 'baremetal.objects'), ()),
    'conf': (('baremetal.api', 'baremetal.conductor', 'baremetal.drivers',
              'baremetal.db', 'baremetal.objects'), ()),
}


def forbidden(sub: str, name: str) -> bool:
    banned, allowed = RULES[sub]
    return any(_under(name, b) for b in banned) and \
        not any(_under(name, a) for a in allowed)


def _violations(sub: str) -> list[str]:
    bad = []
    for path in _modules(sub):
        with open(path) as f:
            source = f.read()
        names = imported(source, _module_name(path),
                         path.endswith('__init__.py'))
        for name in names:
            if forbidden(sub, name):
                bad.append('%s imports %s' % (os.path.relpath(path, PKG),
                                              name))
    return bad


@pytest.mark.parametrize('sub', sorted(RULES))
def test_imports_point_one_way(sub):
    bad = _violations(sub)
    assert not bad, bad


@pytest.mark.parametrize('source', [
    'from baremetal.conductor import manager',
    'from baremetal.conductor import allocations as allocating',
    'from baremetal import conductor',
    'from baremetal import drivers',
    'import baremetal.conductor',
    'import baremetal.conductor.steps',
    'from baremetal.drivers.modules import fake',
    'from ....conductor import retirement',
    'from .... import conductor',
    'def f():\n    from baremetal.conductor import steps\n',
    'import importlib\nimportlib.import_module("baremetal.conductor.steps")',
    'import importlib\nimportlib.import_module("baremetal.drivers." + x)',
    '__import__("baremetal.conductor")',
])
def test_the_api_may_not_import_this(source):
    names = list(imported(source, 'baremetal.api.controllers.v1.nodes'))
    assert any(forbidden('api', n) for n in names), names


@pytest.mark.parametrize('source', [
    'from baremetal.conductor import rpcapi',
    'import baremetal.conductor.rpcapi',
    'from baremetal.common import states',
    'from baremetal.db import nodes as db_nodes',
    'from ....common import exception',
    'from . import nodes',
    'import baremetal.conductorish',
])
def test_the_api_may_import_this(source):
    names = list(imported(source, 'baremetal.api.controllers.v1.nodes'))
    assert not any(forbidden('api', n) for n in names), names


def test_relative_imports_resolve_from_the_module():
    assert list(imported('from . import x', 'baremetal.api.v1.nodes')) == [
        'baremetal.api.v1.x']
    assert list(imported('from . import x', 'baremetal.api.v1', True)) == [
        'baremetal.api.v1.x']
    assert list(imported('from ..db import rows', 'baremetal.api.app')) == [
        'baremetal.db.rows']


def test_states_imports_nothing():
    path = os.path.join(PKG, 'common', 'states.py')
    with open(path) as f:
        assert list(imported(f.read(), 'baremetal.common.states')) == []
