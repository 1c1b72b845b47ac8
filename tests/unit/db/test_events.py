"""Node events: written with the change, in its transaction; ids visible
in id order, also under concurrent writers on PostgreSQL."""

import datetime
import threading

import pytest
import sqlalchemy as sa

from baremetal.db import engine as db_engine
from baremetal.db import events
from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations
from baremetal.db import rows as db_rows
from tests import harness
from tests import services

NODES = db_nodes.NODES
NOW = datetime.datetime(2026, 1, 2, 3, 4, 5)


def _node(**fields) -> int:
    return db_rows.create(NODES, dict({'driver': 'fake-hardware',
                                       'provision_state': 'enroll'},
                                      **fields))['id']


def _written(nid: int, *writes: dict) -> list[tuple]:
    """Each of ``writes`` saved to node ``nid``; the events they wrote
    (field, old, new, detail)."""
    start = events.last_id()
    for values in writes:
        assert db_rows.update(NODES, nid, values) == 1
    return [(e['field'], e['old'], e['new'], e['detail'])
            for e in events.after(start, 100)]


def test_a_state_change_says_its_targets_and_nothing_else_is_an_event(
        any_db_api):
    nid = _node(power_state='power off')
    assert _written(nid, {'provision_state': 'verifying',
                          'target_provision_state': 'manageable',
                          'extra': {}}) == [
        ('provision_state', 'enroll', 'verifying',
         {'old_target_provision_state': None,
          'target_provision_state': 'manageable'})]
    # the same values again, and fields that are not tracked: no event
    assert _written(nid, {'provision_state': 'verifying',
                          'power_state': 'power off',
                          'driver_info': {'a': 1}, 'extra': {'b': 2}}) == []
    # a target of its own is a provision state event
    assert [d for _, _, _, d in _written(
        nid, {'target_provision_state': None})] == [
        {'old_target_provision_state': 'manageable',
         'target_provision_state': None}]


def test_a_step_replaced_ends_one_and_starts_the_next_without_args(
        any_db_api):
    a = {'interface': 'deploy', 'step': 'erase', 'priority': 10,
         'args': {'password': 'secret'}}
    b = {'interface': 'bios', 'step': 'apply', 'priority': 5, 'args': {}}
    sa_ = {'interface': 'deploy', 'step': 'erase', 'priority': 10}
    sb = {'interface': 'bios', 'step': 'apply', 'priority': 5}
    nid = _node(clean_step=a)
    got = _written(nid, {'clean_step': b})
    assert got == [('clean_step', sa_, None, {'step': 'end'}),
                   ('clean_step', None, sb, {'step': 'start'})]
    assert 'secret' not in repr(events.after(0, 100))
    # the same step again with other arguments ends and starts again
    # (a step compares as stored); {} is no step
    assert [d for *_, d in _written(nid, {'clean_step': dict(b, args={
        'x': 1})})] == [{'step': 'end'}, {'step': 'start'}]
    assert _written(nid, {'clean_step': {}}, {'clean_step': None}) == [
        ('clean_step', sb, None, {'step': 'end'})]
    # a text that differs only in case is another step
    assert [d for *_, d in _written(
        nid, {'deploy_step': sb}, {'deploy_step': dict(sb, step='Apply')},
        {'deploy_step': {}})] == [{'step': 'start'}, {'step': 'end'},
                                  {'step': 'start'}, {'step': 'end'}]


def _feed(since=0):
    return [(e['field'], e['old'], e['new'])
            for e in events.after(since, 1000)]


def test_every_write_path_records_in_its_transaction(any_db_api):
    api = any_db_api
    node = api.create_node(name='n1', resource_class='rc', owner='p1')
    created = events.after(0, 10)
    assert [(e['field'], e['new'], e['node_uuid'], e['resource_class'],
             e['owner']) for e in created] == [
        ('node', 'created', node['uuid'], 'rc', 'p1')]
    start = events.last_id()
    nid = db_nodes.get_node(node['uuid'])['id']
    # untracked: no event
    assert db_rows.update(NODES, nid, {'extra': {'a': 1}}) == 1
    assert events.last_id() == start
    # a conditional update that matches nothing: no event either
    assert db_rows.update(NODES, nid, {'power_state': 'power on'},
                          where=(NODES.c.reservation == 'nobody',)) == 0
    assert events.last_id() == start
    assert db_rows.update(NODES, nid, {'power_state': 'power on',
                                       'owner': 'p2'}) == 1
    # the lock's release saves the task's changes with their events
    db_reservations.reserve_node('host-a', nid)
    assert db_reservations.release_node('host-a', nid,
                                        {'fault': 'power failure'})
    # a unique violation rolls the event back with the change
    other = api.create_node(name='n2')
    before = events.last_id()
    from baremetal.common import exception
    with pytest.raises(exception.DuplicateName):
        db_rows.update(NODES, db_nodes.get_node(other['uuid'])['id'],
                       {'name': 'n1', 'power_state': 'power off'})
    assert events.last_id() == before
    assert db_nodes.destroy_node(nid) == 1
    got = events.after(start, 100)
    assert [(e['field'], e['old'], e['new']) for e in got] == [
        ('power_state', None, 'power on'), ('fault', None, 'power failure'),
        ('node', None, 'created'), ('node', None, 'deleted')]
    # the node's owner at the time of each event
    assert [e['owner'] for e in got] == ['p2', 'p2', None, 'p2']
    ids = [e['id'] for e in events.after(0, 100)]
    assert ids == list(range(1, len(ids) + 1))


def test_steps_and_maintenance_read_the_same_on_every_database(
        any_db_api):
    """SQLite writes the events with triggers, the others from Python:
    the same events either way."""
    nid = db_rows.create(NODES, {'driver': 'fake-hardware',
                                 'provision_state': 'enroll'})['id']
    start = events.last_id()
    a = {'interface': 'deploy', 'step': 'erase', 'priority': 10,
         'args': {'secret': 'x'}}
    b = {'interface': 'bios', 'step': 'apply', 'priority': 5}
    for values in ({'clean_step': a, 'provision_state': 'cleaning',
                    'target_provision_state': 'available'},
                   {'clean_step': b},
                   {'clean_step': {}}, {'maintenance': True,
                                        'maintenance_reason': 'fans'},
                   {'maintenance_reason': 'fans'},
                   {'maintenance_reason': 'psu'},
                   {'maintenance': False, 'maintenance_reason': None},
                   {'health': 'OK', 'fault': 'clean failure'}):
        assert db_rows.update(NODES, nid, values) == 1
    got = [(e['field'], e['old'], e['new'], e['detail'])
           for e in events.after(start, 100)]
    sa_ = {'interface': 'deploy', 'step': 'erase', 'priority': 10}
    sb = {'interface': 'bios', 'step': 'apply', 'priority': 5}
    assert got == [
        ('provision_state', 'enroll', 'cleaning',
         {'old_target_provision_state': None,
          'target_provision_state': 'available'}),
        ('clean_step', None, sa_, {'step': 'start'}),
        ('clean_step', sa_, None, {'step': 'end'}),
        ('clean_step', None, sb, {'step': 'start'}),
        ('clean_step', sb, None, {'step': 'end'}),
        ('maintenance', False, True, {'reason': 'fans'}),
        ('maintenance', True, True, {'reason': 'psu'}),
        ('maintenance', True, False, {'reason': None}),
        ('fault', None, 'clean failure', None),
        ('health', None, 'OK', None)]
    times = [e['created_at'] for e in events.after(start, 100)]
    assert all(abs((t - db_rows.utcnow()).total_seconds()) < 60 for t in times)


def test_a_node_write_with_events_costs_one_statement_or_no_compile(
        any_db_api):
    """A node write whose events the triggers write is one statement,
    run prepared, not through SQLAlchemy's execution (before its
    triggers, MariaDB's node write was a transaction of five statements
    from Python: the node read under its lock, its UPDATE, the counter,
    the events' INSERT)."""
    nid = db_rows.create(NODES, {'driver': 'fake-hardware',
                                 'provision_state': 'enroll'})['id']
    start = events.last_id()
    compiled, sent = [], []

    def after(conn, stmt, multiparams, params, options, result):
        compiled.append((str(stmt).split('(')[0], result.context.cache_hit))

    def before(conn, cursor, statement, *args):
        sent.append(statement.split('(')[0])
    step = {'interface': 'deploy', 'step': 'erase', 'priority': 10}
    engine = db_engine.engine()
    for i in range(2):
        compiled.clear()
        sent.clear()
        sa.event.listen(engine, 'after_execute', after)
        sa.event.listen(engine, 'before_cursor_execute', before)
        try:
            assert db_rows.update(NODES, nid, {
                'provision_state': ('cleaning', 'clean wait')[i],
                'clean_step': dict(step, priority=i)}) == 1
        finally:
            sa.event.remove(engine, 'after_execute', after)
            sa.event.remove(engine, 'before_cursor_execute', before)
    # the second write: the state, one step's end and the next's start
    assert [(e['field'], e['detail']) for e in events.after(start, 10)][
        -3:] == [('provision_state', {
            'old_target_provision_state': None,
            'target_provision_state': None}),
            ('clean_step', {'step': 'end'}),
            ('clean_step', {'step': 'start'})]
    assert len(sent) == 1 and sent[0].startswith('UPDATE nodes'), sent
    assert compiled == []


def test_filters_and_project_scope(api):
    def node(**fields):
        return db_rows.create(NODES, dict(driver='fake-hardware', **fields))
    a = node(resource_class='gold', owner='p1')
    b = node(conductor_group='g2', lessee='p1')
    c = node(owner='p3')
    seen = {e['node_uuid'] for e in events.after(0, 100, project='p1')}
    assert seen == {a['uuid'], b['uuid']}
    assert [e['node_uuid'] for e in events.after(
        0, 100, resource_class='gold')] == [a['uuid']]
    assert [e['node_uuid'] for e in events.after(
        0, 100, conductor_group='g2')] == [b['uuid']]
    assert [e['node_uuid'] for e in events.after(
        0, 100, owner='p3', node_uuid=c['uuid'])] == [c['uuid']]
    for row in events.after(0, 100):
        assert events.matches(row, project='p1') == (
            row['node_uuid'] in (a['uuid'], b['uuid']))
    assert events.after(1, 100, until=2)[0]['id'] == 2


def test_purge_keeps_the_newest(api):
    for _ in range(5):
        api.create_node()
    assert events.purge(None, 2) == 3
    assert [e['id'] for e in events.after(0, 10)] == [4, 5]
    # by age: ids grow with time
    with db_engine.writer() as conn:
        conn.execute(events.EVENTS.update().where(events.EVENTS.c.id == 4)
                     .values(created_at=NOW))
    assert events.purge(NOW + datetime.timedelta(seconds=1), None) == 1
    assert [e['id'] for e in events.after(0, 10)] == [5]
    # the newest always stays, whatever the options ask: the next id
    # goes on from it (on SQLite it is the rowid after the largest)
    assert events.purge(None, 0) == 0
    with db_engine.writer() as conn:
        conn.execute(events.EVENTS.update().values(created_at=NOW))
    assert events.purge(NOW + datetime.timedelta(seconds=1), 0) == 0
    assert [e['id'] for e in events.after(0, 10)] == [5]
    api.create_node()
    assert [e['id'] for e in events.after(0, 10)] == [5, 6]


def test_conductor_periodic_purges_by_the_options(api):
    from baremetal.conductor import periodics
    for _ in range(4):
        api.create_node()
    harness.CONF.set_override('max_events', 1, group='events')
    try:
        assert periodics.purge_events(api.conductor) == 3
    finally:
        harness.CONF.clear_override('max_events', group='events')


@pytest.mark.parametrize('kind', ['postgresql', 'mysql'])
def test_ids_become_visible_in_id_order(tmp_path, kind):
    """Eight writers change nodes at once while a reader follows the
    feed by "events after the last id I saw": it must see every id
    exactly once and in order, never an id whose predecessor shows up
    later (which a sequence, handed out before commit, would allow)."""
    h = harness.Harness(tmp_path, db_url=services.db_url(kind, schema=True))
    try:
        nodes = [db_rows.create(NODES, {'driver': 'fake-hardware'})['id']
                 for _ in range(8)]
        start = events.last_id()
        per_writer = 40
        done = threading.Event()
        errors = []

        def write(nid):
            try:
                for i in range(per_writer):
                    db_rows.update(NODES, nid, {'power_state': 'power on'
                                                if i % 2 == 0 else
                                                'power off'})
            except Exception as e:   # pragma: no cover - reported below
                errors.append(e)
        seen = []

        def read():
            cursor = start
            while True:
                finished = done.is_set()
                rows = events.after(cursor, 50)
                for r in rows:
                    seen.append(r['id'])
                if rows:
                    cursor = rows[-1]['id']
                elif finished:
                    return
        writers = [threading.Thread(target=write, args=(n,)) for n in nodes]
        reader = threading.Thread(target=read)
        reader.start()
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        done.set()
        reader.join(60)
        assert not errors
        total = len(nodes) * per_writer
        assert seen == list(range(start + 1, start + total + 1))
    finally:
        h.close()


def test_schema_from_migrations_has_the_counter_row(tmp_path):
    """A database built by the migrations (not create_schema) starts the
    counter at 0 too."""
    from baremetal.db import migration
    engine = sa.create_engine('sqlite:///%s' % (tmp_path / 'm.sqlite'))
    migration.upgrade(engine)
    fresh = sa.create_engine('sqlite:///%s' % (tmp_path / 'f.sqlite'))
    assert migration.create_schema(fresh)
    query = sa.text("SELECT name, sql FROM sqlite_master WHERE type = "
                    "'trigger' ORDER BY name")
    with engine.connect() as conn, fresh.connect() as other:
        assert conn.execute(sa.text(
            'SELECT id, last_id FROM node_event_counter')).all() == [(1, 0)]
        # and SQLite's triggers, as create_schema makes them
        triggers = conn.execute(query).all()
        assert [t[0] for t in triggers] == sorted(
            events.SQLITE_TRIGGER_NAMES)
        assert 'node_events_on_deploy_step' in events.SQLITE_TRIGGER_NAMES
        assert triggers == other.execute(query).all()
    engine.dispose()
    fresh.dispose()


def test_upgrade_replaces_the_single_trigger_of_0006(tmp_path):
    """A database whose 0006 made the one trigger for every field gets
    a trigger per field from 0007, and its writes still have events."""
    from baremetal.db import migration
    engine = sa.create_engine('sqlite:///%s' % (tmp_path / 'o.sqlite'))
    migration.upgrade(engine, '0006')
    with engine.begin() as conn:
        for name in events.SQLITE_TRIGGER_NAMES:
            conn.exec_driver_sql('DROP TRIGGER IF EXISTS %s' % name)
        # the shape of 0006's own trigger (its body does not matter)
        conn.exec_driver_sql(
            "CREATE TRIGGER node_events_on_update AFTER UPDATE OF "
            "power_state ON nodes FOR EACH ROW BEGIN INSERT INTO "
            "node_events (node_uuid, field, created_at) VALUES "
            "(NEW.uuid, 'old trigger', '2026-01-01'); END")
    migration.upgrade(engine)
    with engine.begin() as conn:
        names = [r[0] for r in conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' "
            "ORDER BY name")]
        assert names == sorted(events.SQLITE_TRIGGER_NAMES)
        conn.execute(NODES.insert().values(
            uuid='u1', driver='fake-hardware', provision_state='enroll'))
        conn.exec_driver_sql(
            "UPDATE nodes SET power_state = 'power on', "
            "provision_state = 'verifying' WHERE uuid = 'u1'")
        got = conn.exec_driver_sql(
            'SELECT field, new FROM node_events ORDER BY id').all()
    assert got == [('node', '"created"'), ('provision_state', '"verifying"'),
                   ('power_state', '"power on"')]
    engine.dispose()


def test_upgrade_keeps_the_events_and_drops_autoincrement(tmp_path):
    """0007 copies node_events into a table without AUTOINCREMENT: the
    events stay, and new ones go on after the largest id."""
    from baremetal.db import migration
    engine = sa.create_engine('sqlite:///%s' % (tmp_path / 'o.sqlite'))
    migration.upgrade(engine, '0006')
    with engine.begin() as conn:
        conn.execute(NODES.insert().values(
            uuid='u1', driver='fake-hardware', provision_state='enroll'))
        conn.exec_driver_sql(
            "UPDATE nodes SET provision_state = 'verifying'")
        before = conn.exec_driver_sql(
            'SELECT id, field, new FROM node_events ORDER BY id').all()
    assert len(before) == 2
    migration.upgrade(engine)
    with engine.begin() as conn:
        ddl = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE name = 'node_events'"
        ).scalar()
        assert 'AUTOINCREMENT' not in ddl.upper()
        conn.exec_driver_sql(
            "UPDATE nodes SET provision_state = 'manageable'")
        after = conn.exec_driver_sql(
            'SELECT id, field, new FROM node_events ORDER BY id').all()
    assert after[:2] == before
    assert after[2] == (before[-1][0] + 1, 'provision_state',
                        '"manageable"')
    engine.dispose()


def test_mariadb_upgrade_to_triggers_goes_on_from_the_counter():
    """0011 on a MariaDB database whose events the previous release
    wrote from the service (ids from the counter): the events stay, the
    triggers take the next ids from the same counter, and a downgrade
    drops them again."""
    import alembic.command

    from baremetal.db import migration
    engine = sa.create_engine(services.mysql_url())
    try:
        migration.upgrade(engine, '0010')
        with engine.begin() as conn:
            conn.execute(NODES.insert().values(
                uuid='u1', driver='fake-hardware', maintenance=False,
                console_enabled=False, protected=False))
            # as the previous release wrote its event: the counter taken
            conn.exec_driver_sql(
                'UPDATE node_event_counter SET last_id = 41')
            conn.execute(events.EVENTS.insert().values(
                id=41, node_uuid='u1', field='node', new='created',
                created_at=NOW))
        migration.upgrade(engine)

        def feed():
            with engine.connect() as conn:
                return [(r.id, r.field, r.new) for r in conn.execute(
                    sa.select(events.EVENTS).order_by(events.EVENTS.c.id))]
        with engine.begin() as conn:
            conn.execute(NODES.update().values(power_state='power on'))
        assert feed() == [(41, 'node', 'created'),
                          (42, 'power_state', 'power on')]
        with engine.begin() as conn:
            alembic.command.downgrade(migration._config(conn), '0010')
        with engine.begin() as conn:
            conn.execute(NODES.update().values(power_state='power off'))
        assert len(feed()) == 2
    finally:
        engine.dispose()
