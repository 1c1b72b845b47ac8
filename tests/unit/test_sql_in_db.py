"""SQL is built in baremetal/db/ only, and no table leaves it: a module
anywhere else that imports SQLAlchemy (even for annotations only),
reads a table's columns (``table.c``) or a table (``x.table``), takes a
database connection to run statements on, names a table a db module
holds (``db_nodes.NODES``, ``from baremetal.db.traits import TRAITS``),
imports db.models, or calls db.rows's generic row calls that take a
table (``db_rows.get``, ``query``, ``create``, ``update``, ``delete``,
``count``) fails this test.  Callers use the named functions of db/
(``db.ports.of_node``, ``db.history.add``, ...) or a resource's
``Rows`` (``db.ports.ROWS``).
"""

import ast
import functools
import importlib
import os
import pkgutil

import sqlalchemy as sa

import baremetal.db

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'baremetal')

# what takes a connection or the engine (db.engine's blocks)
_CONNECTION_CALLS = {'reader', 'writer', 'single', 'engine'}
# what runs a statement on a connection
_STATEMENT_CALLS = {'execute', 'exec_driver_sql'}
# db.rows's generic calls, which take a table
_TABLE_CALLS = {'get', 'query', 'create', 'update', 'delete', 'count'}

# Modules outside db/ that may still build SQL or hold a table, each
# with why.  Never add one without a reason that holds; remove it when
# its queries move to db/.
ALLOWED: dict[str, str] = {}


def _modules():
    for dirpath, _, files in os.walk(PKG):
        rel = os.path.relpath(dirpath, PKG)
        if rel == 'db' or rel.startswith('db' + os.sep):
            continue
        for f in files:
            if f.endswith('.py'):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, PKG).replace(os.sep, '/'), path


@functools.cache
def _tables() -> dict[str, frozenset[str]]:
    """For each module of baremetal/db/, the names it binds to a table
    (or to a dict of tables, as ``T``)."""
    out = {}
    for info in pkgutil.iter_modules(baremetal.db.__path__):
        mod = importlib.import_module('baremetal.db.' + info.name)
        out[info.name] = frozenset(
            name for name, value in vars(mod).items()
            if isinstance(value, sa.Table) or (
                isinstance(value, dict) and value and all(
                    isinstance(v, sa.Table) for v in value.values())))
    return out


def _db_aliases(tree) -> dict[str, str]:
    """The names this module binds to baremetal/db/ modules, each with
    the module's name (``{'db_nodes': 'nodes'}``)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and \
                node.module == 'baremetal.db':
            out.update((a.asname or a.name, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            out.update((a.asname, a.name.rsplit('.', 1)[1])
                       for a in node.names
                       if a.name.startswith('baremetal.db.') and a.asname)
    return out


def _import_uses(node, line: int) -> list[str]:
    if isinstance(node, ast.Import):
        return ['%d: imports %s' % (line, a.name) for a in node.names
                if a.name.split('.')[0] == 'sqlalchemy' or
                a.name == 'baremetal.db.models']
    if isinstance(node, ast.ImportFrom):
        module = node.module or ''
        if module.split('.')[0] == 'sqlalchemy':
            return ['%d: imports from %s' % (line, module)]
        if module == 'baremetal.db' and any(a.name == 'models'
                                            for a in node.names):
            return ['%d: imports baremetal.db.models' % line]
        if module == 'baremetal.db.models':
            return ['%d: imports from %s' % (line, module)]
        if module.startswith('baremetal.db.'):
            tables = _tables().get(module.rsplit('.', 1)[1], ())
            return ['%d: imports a table (%s.%s)' % (line, module, a.name)
                    for a in node.names if a.name in tables]
    return []


def _owner_is(node, names: set) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def sql_uses(source: str) -> list[str]:
    """What in ``source`` builds or runs SQL or holds a table, one line
    each."""
    found = []
    tree = ast.parse(source)
    aliases = _db_aliases(tree)
    engines = {'db', 'db_engine', 'engine'} | {
        a for a, m in aliases.items() if m == 'engine'}
    rows = {a for a, m in aliases.items() if m == 'rows'}
    for node in ast.walk(tree):
        line = getattr(node, 'lineno', 0)
        found += _import_uses(node, line)
        if isinstance(node, ast.Attribute):
            if node.attr == 'c':
                found.append('%d: reads table columns (.c)' % line)
            elif node.attr == 'table':
                found.append('%d: reads a table (.table)' % line)
            elif isinstance(node.value, ast.Name) and \
                    node.attr in _tables().get(
                        aliases.get(node.value.id), ()):
                found.append('%d: names a table (%s.%s)'
                             % (line, node.value.id, node.attr))
        if isinstance(node, ast.Call) and \
                isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            if name in _STATEMENT_CALLS:
                found.append('%d: runs a statement (.%s)' % (line, name))
            elif name in _CONNECTION_CALLS and _owner_is(owner, engines):
                found.append('%d: takes a connection (%s.%s)'
                             % (line, owner.id, name))
            elif name in _TABLE_CALLS and _owner_is(owner, rows):
                found.append('%d: passes a table (%s.%s)'
                             % (line, owner.id, name))
    return sorted(set(found), key=lambda s: (int(s.split(':')[0]), s))


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


def test_detects_tables_passed_around():
    src = ('from baremetal.db import nodes as db_nodes\n'
           'C = db_nodes.T["chassis"]\n'
           'from baremetal.db import rows\n'
           'row = rows.get(db_nodes.NODES, ident, NotFound)\n'
           'rows.update(C, 1, {})\n'
           'kind = columns.kind(record.table, "x")\n'
           'from baremetal.db import models\n'
           'from baremetal.db.traits import TRAITS, traits_for_nodes\n'
           'import baremetal.db.ports as p\n'
           'p.P\n')
    assert sql_uses(src) == [
        '2: names a table (db_nodes.T)',
        '4: names a table (db_nodes.NODES)', '4: passes a table (rows.get)',
        '5: passes a table (rows.update)', '6: reads a table (.table)',
        '7: imports baremetal.db.models',
        '8: imports a table (baremetal.db.traits.TRAITS)',
        '10: names a table (p.P)'], sql_uses(src)


def test_the_tables_db_modules_hold_are_known():
    assert {'NODES', 'N', 'T'} <= _tables()['nodes']
    assert 'TABLES' in _tables()['models']
    assert 'ROWS' not in _tables()['nodes']


def test_named_db_functions_are_not_sql():
    src = ('from baremetal.db import nodes as db_nodes\n'
           'from baremetal.db import ports as db_ports\n'
           'from baremetal.db import rows as db_rows\n'
           'rows = db_ports.of_node(node_id)\n'
           'row = db_ports.ROWS.get(ident)\n'
           'db_ports.ROWS.update(row["id"], {})\n'
           'node = db_nodes.get_node(ident)\n'
           'ok = db_rows.is_uuid_like(ident)\n')
    assert sql_uses(src) == []


def test_imports_for_annotations_only_are_sql_too():
    src = ('from typing import TYPE_CHECKING\n'
           'if TYPE_CHECKING:\n'
           '    import sqlalchemy as sa\n'
           'table: "sa.Table"\n')
    assert sql_uses(src) == ['3: imports sqlalchemy']
