"""db/rows.py's kept page statements: a page asked for without a marker
or after a node's UUID (``rows.Bound``), whose conditions are all
``rows.fixed`` ones (the default node list) or ``rows.Bound`` ones
(``nodes.equals``), is built once and run again with each request's
values, on every database; what it returns is read anew each time."""

from baremetal.db import nodes as db_nodes
from baremetal.db import prepared
from baremetal.db import rows as db_rows


def _builds(monkeypatch) -> list:
    """The page statements built from now on (none kept before: the
    kept ones are the process's, whatever the database)."""
    monkeypatch.setattr(db_rows, '_FIXED_STMTS',
                        db_rows.collections.OrderedDict())
    built = []
    real = db_rows._page

    def counting(*args):
        built.append(args)
        return real(*args)
    monkeypatch.setattr(db_rows, '_page', counting)
    return built


def _names(**kwargs) -> list:
    return [r['name'] for r in db_nodes.list_page(
        columns=('id', 'uuid', 'name'), **kwargs)]


def test_the_default_page_is_built_once_and_read_anew(any_db_api,
                                                       monkeypatch):
    built = _builds(monkeypatch)
    shapes = []
    real_shape = prepared.page_shape

    def shape(stmt, dialect, raw, kept=False):
        shapes.append(kept)
        return real_shape(stmt, dialect, raw, kept)
    monkeypatch.setattr(prepared, 'page_shape', shape)
    for name in ('a', 'b'):
        db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': name})
    plain = [db_nodes.without_parent()]
    assert _names(filters=plain, limit=10) == ['a', 'b']
    db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': 'c'})
    child = db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': 'd',
                                  'parent_node': 'a'})
    assert _names(filters=plain, limit=10) == ['a', 'b', 'c']
    db_nodes.ROWS.update(child['id'], {'parent_node': None})
    assert _names(filters=plain, limit=10) == ['a', 'b', 'c', 'd']
    assert len(built) == 1
    if any_db_api.db_kind == 'sqlite':
        # run prepared: its shape looked for once (the inner call), then
        # known by the object
        assert shapes == [True, False, True, True]

    # another limit is another statement, kept too
    assert _names(filters=plain, limit=2) == ['a', 'b']
    assert _names(filters=plain, limit=2) == ['a', 'b']
    assert len(built) == 2


def test_other_pages_are_built_each_time(api, monkeypatch):
    built = _builds(monkeypatch)
    for name in ('a', 'b'):
        db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': name,
                              'provision_state': 'available'})
    first = db_nodes.list_page(columns=('id', 'uuid', 'name'), limit=1)[0]
    for _ in range(2):
        # a condition with a value, built per request
        assert _names(filters=[db_nodes.NODES.c.name == 'b']) == ['b']
        # a marker
        assert _names(filters=[db_nodes.without_parent()],
                      marker=first) == ['b']
    # the unfiltered page above is kept; the four others were built
    assert len(built) == 1 + 4


def test_equals_and_uuid_markers_keep_the_page_with_their_values(
        any_db_api, monkeypatch):
    built = _builds(monkeypatch)
    for name, rc in (('a', 'gold'), ('b', 'silver'), ('c', 'gold')):
        db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': name,
                              'resource_class': rc, 'shard': 's-' + rc})

    def of(rc):
        return [db_nodes.without_parent(),
                db_nodes.equals('resource_class', rc)]

    def after(name):
        return db_nodes.after_uuid(db_nodes.get_node(name)['uuid'])
    for _ in range(2):
        assert _names(filters=of('gold'), limit=10) == ['a', 'c']
        assert _names(filters=of('silver'), limit=10) == ['b']
        assert _names(filters=of('bronze'), limit=10) == []
        assert _names(filters=of('gold'), limit=10,
                      marker=after('a')) == ['c']
        assert _names(filters=of('gold'), limit=10, marker=after('c')) == []
        assert _names(filters=of('silver'), limit=10,
                      marker=after('a')) == ['b']
    # one statement without a marker, one after a node: both kept
    assert len(built) == 2
    assert db_rows.count(db_nodes.NODES,
                         [db_nodes.equals('resource_class', 'gold')]) == 2
    # one shard (a Nova of one shard) is such a condition; several are
    # an IN list, built each time
    built.clear()
    for _ in range(2):
        assert _names(filters=[db_nodes.in_shards(['s-gold'])],
                      limit=10) == ['a', 'c']
        assert _names(filters=[db_nodes.in_shards(['s-silver'])],
                      limit=10) == ['b']
    assert len(built) == 1
    assert _names(filters=[db_nodes.in_shards(['s-silver', 's-gold'])],
                  limit=10) == ['a', 'b', 'c']
    assert len(built) == 2


def test_flags_and_projects_keep_the_page_with_their_values(
        any_db_api, monkeypatch):
    """A node list's associated=, maintenance=, retired=, sharded= and a
    project's nodes (owned or leased), and a project's ports: each
    built once, on every database, right for every value."""
    from baremetal.db import ports as db_ports
    from baremetal.db import projects
    built = _builds(monkeypatch)
    a = db_nodes.ROWS.create({
        'driver': 'fake-hardware', 'name': 'a', 'maintenance': True,
        'instance_uuid': '6b3c3bd1-8a41-4e3b-9d5b-0b7f3c2c1a11',
        'owner': 'p1'})
    b = db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': 'b',
                              'maintenance': False, 'lessee': 'p1',
                              'shard': 's1'})
    db_nodes.ROWS.create({'driver': 'fake-hardware', 'name': 'c',
                          'retired': True, 'owner': 'p2'})
    for node, mac in ((a, '52:54:00:00:00:0a'), (b, '52:54:00:00:00:0b')):
        db_ports.ROWS.create({'node_id': node['id'], 'address': mac})
    cases = [
        (db_nodes.associated(True), ['a']),
        (db_nodes.associated(False), ['b', 'c']),
        (db_nodes.in_maintenance(True), ['a']),
        (db_nodes.in_maintenance(False), ['b', 'c']),
        (db_nodes.retired(True), ['c']),
        (db_nodes.retired(False), ['a', 'b']),
        (db_nodes.sharded(True), ['b']),
        (db_nodes.sharded(False), ['a', 'c']),
    ]
    for _ in range(2):
        for flag, names in cases:
            assert _names(filters=[flag], limit=10) == names
        for project, names in (('p1', ['a', 'b']), ('p2', ['c']),
                               ('p3', [])):
            assert _names(filters=[projects.nodes_of(project)],
                          limit=10) == names
        for project, macs in (('p1', ['52:54:00:00:00:0a',
                                      '52:54:00:00:00:0b']),
                              ('p2', [])):
            got = db_ports.ROWS.list_page(
                [projects.children_of(db_ports.ROWS, project)], limit=10)
            assert [p['address'] for p in got] == macs
    # eight flags, a project's nodes, a project's ports: built once each
    assert len(built) == 10
    assert db_rows.count(db_nodes.NODES, [projects.nodes_of('p1')]) == 2
