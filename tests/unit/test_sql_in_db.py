"""SQL is built in baremetal/db/ only: a module anywhere else that
imports SQLAlchemy, reads a table's columns (``table.c``), or takes a
database connection to run statements on fails this test.  Callers use
the named functions of db/ (``db.ports.of_node``, ...), and the generic
``db.api`` calls that take conditions built there (``db.query``,
``db.count``, ``db.get``, ``db.create``, ``db.update``, ``db.delete``).
"""

import ast
import os

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'baremetal')

# what takes a connection or the engine (db.api's blocks)
_CONNECTION_CALLS = {'reader', 'writer', 'single', 'engine'}
# what runs a statement on a connection
_STATEMENT_CALLS = {'execute', 'exec_driver_sql'}

# Modules outside db/ that may build SQL, each with why (none today).
# Never add one without a reason that holds; remove it when its queries
# move to db/.
ALLOWED: dict[str, str] = {
}


def _modules():
    for dirpath, _, files in os.walk(PKG):
        rel = os.path.relpath(dirpath, PKG)
        if rel == 'db' or rel.startswith('db' + os.sep):
            continue
        for f in files:
            if f.endswith('.py'):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, PKG).replace(os.sep, '/'), path


def _type_checking_imports(tree) -> set:
    """Imports under ``if TYPE_CHECKING:``: for annotations only (e.g.
    ``sa.Table`` in objects/base.py), never run, so they build nothing."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                getattr(node.test, 'id', None) == 'TYPE_CHECKING' or
                getattr(node.test, 'attr', None) == 'TYPE_CHECKING'):
            for inner in node.body:
                out.update(id(n) for n in ast.walk(inner)
                           if isinstance(n, (ast.Import, ast.ImportFrom)))
    return out


def sql_uses(source: str) -> list[str]:
    """What in ``source`` builds or runs SQL, one line each."""
    found = []
    tree = ast.parse(source)
    for_types = _type_checking_imports(tree)
    for node in ast.walk(tree):
        line = getattr(node, 'lineno', 0)
        if id(node) in for_types:
            continue
        if isinstance(node, ast.Import):
            found += ['%d: imports %s' % (line, a.name) for a in node.names
                      if a.name.split('.')[0] == 'sqlalchemy']
        elif isinstance(node, ast.ImportFrom):
            if (node.module or '').split('.')[0] == 'sqlalchemy':
                found.append('%d: imports from %s' % (line, node.module))
        elif isinstance(node, ast.Attribute) and node.attr == 'c':
            found.append('%d: reads table columns (.c)' % line)
        elif isinstance(node, ast.Call) and \
                isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            if name in _STATEMENT_CALLS:
                found.append('%d: runs a statement (.%s)' % (line, name))
            elif name in _CONNECTION_CALLS and \
                    isinstance(owner, ast.Name) and owner.id == 'db':
                found.append('%d: takes a connection (db.%s)'
                             % (line, name))
    return sorted(found, key=lambda s: int(s.split(':')[0]))


def test_sql_is_built_in_db_only():
    bad = {}
    for rel, path in _modules():
        with open(path) as f:
            uses = sql_uses(f.read())
        if uses and rel not in ALLOWED:
            bad[rel] = uses
    assert not bad, bad


def test_allowed_modules_still_need_it():
    """An entry of the allow-list whose module no longer builds SQL
    (or is gone) is removed, so that the list says what remains."""
    stale = []
    for rel in ALLOWED:
        path = os.path.join(PKG, rel)
        if not os.path.exists(path):
            stale.append(rel)
            continue
        with open(path) as f:
            if not sql_uses(f.read()):
                stale.append(rel)
    assert not stale, stale


def test_detects_what_builds_sql():
    src = ('import sqlalchemy as sa\n'
           'from sqlalchemy import func\n'
           'x = T.c.node_id == 1\n'
           'with db.writer() as conn:\n'
           '    conn.execute(stmt)\n')
    uses = sql_uses(src)
    assert uses == ['1: imports sqlalchemy', '2: imports from sqlalchemy',
                    '3: reads table columns (.c)',
                    '4: takes a connection (db.writer)',
                    '5: runs a statement (.execute)'], uses


def test_named_db_functions_are_not_sql():
    src = ('from baremetal.db import ports as db_ports\n'
           'rows = db_ports.of_node(node_id)\n'
           'row = db.get(db.PORTS, ident, NotFound)\n')
    assert sql_uses(src) == []


def test_imports_for_annotations_only_are_not_sql():
    src = ('from typing import TYPE_CHECKING\n'
           'if TYPE_CHECKING:\n'
           '    import sqlalchemy as sa\n'
           'table: "sa.Table"\n')
    assert sql_uses(src) == []
    assert sql_uses(src.replace('TYPE_CHECKING:', 'True:')) == [
        '3: imports sqlalchemy']
