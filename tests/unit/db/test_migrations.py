"""Migrations build the models' schema on SQLite, PostgreSQL and MariaDB,
0002 gives existing nodes retired=false and 0004 each existing runbook
its name as its trait."""

import uuid

import pytest
import sqlalchemy as sa
from alembic import autogenerate
from alembic.migration import MigrationContext

from baremetal.db import migration
from baremetal.db import models
from tests import services


@pytest.fixture(params=['sqlite', 'postgresql', 'mysql'])
def engine(request, tmp_path):
    url = services.db_url(request.param) or \
        'sqlite:///%s' % (tmp_path / 'm.sqlite')
    engine = sa.create_engine(url)
    yield engine
    engine.dispose()


def _diff(engine):
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={
            'compare_type': False, 'render_as_batch': True})
        diff = autogenerate.compare_metadata(ctx, models.Base.metadata)
    # index/constraint naming of unique keys differs between backends
    return [d for d in diff if d[0] not in ('remove_index', 'add_index')
            or d[1].name not in {i.name for t in models.TABLES.values()
                                 for i in t.indexes}]


def test_upgrade_builds_the_models_schema(engine):
    assert not migration.is_current(engine)
    migration.upgrade(engine)
    assert migration.version(engine) == migration.HEAD
    assert migration.is_current(engine)
    assert _diff(engine) == []


def test_head_constant_is_alembics_head():
    import alembic.config
    import alembic.script
    cfg = alembic.config.Config()
    cfg.set_main_option('script_location', migration._SCRIPTS)
    heads = alembic.script.ScriptDirectory.from_config(cfg).get_heads()
    assert heads == [migration.HEAD]


def test_retired_migration_keeps_old_nodes(engine):
    migration.upgrade(engine, '0001')
    nodes = sa.table('nodes', sa.column('uuid'), sa.column('driver'),
                     sa.column('maintenance'), sa.column('console_enabled'),
                     sa.column('protected'), sa.column('conductor_group'),
                     sa.column('provision_state'))
    u = str(uuid.uuid4())
    with engine.begin() as c:
        c.execute(nodes.insert().values(
            uuid=u, driver='fake-hardware', maintenance=False,
            console_enabled=False, protected=False, conductor_group='',
            provision_state='active'))
    migration.upgrade(engine)
    with engine.connect() as c:
        row = c.execute(sa.text('SELECT retired, retired_reason, '
                                'provision_state FROM nodes WHERE uuid=:u'),
                        {'u': u}).one()
    assert not row[0] and row[0] is not None
    assert row[1] is None
    assert row[2] == 'active'


def test_runbook_traits_migration_gives_each_runbook_its_name(engine):
    # before 1.112 a runbook applied to nodes with a trait of its name;
    # 0004 keeps that true by making the name its one trait
    migration.upgrade(engine, '0003')
    runbooks = sa.table('runbooks', sa.column('uuid'), sa.column('name'),
                        sa.column('public'), sa.column('disable_ramdisk'))
    u = str(uuid.uuid4())
    with engine.begin() as c:
        c.execute(runbooks.insert().values(
            uuid=u, name='CUSTOM_OLD_RUNBOOK', public=False,
            disable_ramdisk=False))
    migration.upgrade(engine, '0004')
    with engine.connect() as c:
        rows = c.execute(sa.text(
            'SELECT t.trait, r.description FROM runbook_traits t JOIN '
            'runbooks r ON r.id = t.runbook_id WHERE r.uuid = :u'),
            {'u': u}).all()
    assert [tuple(r) for r in rows] == [('CUSTOM_OLD_RUNBOOK', None)]


def test_create_schema_needs_an_empty_database(engine):
    assert migration.create_schema(engine)
    assert migration.version(engine) == migration.HEAD   # alembic reads it
    assert migration.is_current(engine)
    assert not migration.create_schema(engine)
    migration.upgrade(engine)             # nothing to do, and no error
    assert migration.version(engine) == migration.HEAD


def test_create_schema_equals_the_migrations(engine):
    """What a first start creates (models + stamp) is what the
    migrations build."""
    assert migration.create_schema(engine)
    assert _diff(engine) == []


def test_is_current_on_an_empty_database_behind_oslo_db(tmp_path):
    """oslo.db wraps 'no such table' in its own exception class."""
    from oslo_db.sqlalchemy import engines
    engine = engines.create_engine('sqlite:///%s' % (tmp_path / 'e.sqlite'))
    try:
        assert not migration.is_current(engine)
        migration.upgrade(engine)
        assert migration.is_current(engine)
    finally:
        engine.dispose()


def test_node_updated_at_keeps_microseconds(engine):
    """0008: MariaDB's nodes.updated_at is DATETIME(6), as the other
    databases keep it: two writes within a second are told apart."""
    import datetime
    migration.upgrade(engine)
    at = datetime.datetime(2026, 11, 27, 8, 0, 0, 123456)
    nodes = models.TABLES['nodes']
    with engine.begin() as conn:
        conn.execute(nodes.insert().values(
            uuid=str(uuid.uuid4()), driver='fake-hardware', updated_at=at))
        assert conn.execute(sa.select(nodes.c.updated_at)).scalar() == at


def test_migrated_database_writes_node_events_in_the_database(engine):
    """0007 (SQLite), 0010 (PostgreSQL) and 0011 (MariaDB): triggers
    write a node's change feed events in the statement that changes it,
    in order, whatever writes the node (here: no code of db/)."""
    migration.upgrade(engine)
    nodes, ev = models.TABLES['nodes'], models.TABLES['node_events']
    u = str(uuid.uuid4())
    with engine.begin() as conn:
        conn.execute(nodes.insert().values(
            uuid=u, driver='fake-hardware', provision_state='enroll'))
    with engine.begin() as conn:
        conn.execute(nodes.update().where(nodes.c.uuid == u).values(
            provision_state='verifying',
            target_provision_state='manageable'))
        conn.execute(nodes.update().where(nodes.c.uuid == u).values(
            extra='{}'))                    # no tracked field: no event
    with engine.begin() as conn:
        conn.execute(nodes.delete().where(nodes.c.uuid == u))
    with engine.connect() as conn:
        got = [(r.id, r.node_uuid, r.field, r.old, r.new, r.detail)
               for r in conn.execute(sa.select(ev).order_by(ev.c.id))]
    assert got == [
        (1, u, 'node', None, 'created', {'provision_state': 'enroll'}),
        (2, u, 'provision_state', 'enroll', 'verifying',
         {'old_target_provision_state': None,
          'target_provision_state': 'manageable'}),
        (3, u, 'node', None, 'deleted', {'provision_state': 'verifying'})]


@pytest.mark.parametrize('build', ['upgrade', 'create_schema'])
def test_a_mariadb_url_gets_the_event_triggers_too(build):
    """SQLAlchemy names a ``mariadb+pymysql://`` URL's dialect
    ``mariadb``, not ``mysql``: its schema, migrated or created, has the
    change feed's triggers all the same."""
    url = services.mysql_url().replace('mysql+pymysql://',
                                       'mariadb+pymysql://', 1)
    engine = sa.create_engine(url)
    try:
        assert engine.dialect.name == 'mariadb'
        getattr(migration, build)(engine)
        nodes, ev = models.TABLES['nodes'], models.TABLES['node_events']
        with engine.begin() as conn:
            conn.execute(nodes.insert().values(
                uuid=str(uuid.uuid4()), driver='fake-hardware'))
            assert [r.field for r in conn.execute(sa.select(ev))] == [
                'node']
    finally:
        engine.dispose()


def test_json_columns_hold_more_than_64_kb(engine):
    """0012: MariaDB's JSON columns are LONGTEXT (TEXT holds 64 KB; a
    config drive in instance_info, an inventory may be larger), also on
    a database whose columns were TEXT before it."""
    migration.upgrade(engine, '0011')
    mariadb = engine.dialect.name in ('mysql', 'mariadb')
    if mariadb:
        # as 0001-0011 built them before JSONText became LONGTEXT there
        with engine.begin() as conn:
            conn.execute(sa.text('ALTER TABLE nodes MODIFY instance_info '
                                 'TEXT NULL'))
            conn.execute(sa.text('ALTER TABLE node_inventory MODIFY '
                                 'inventory_data TEXT NULL'))
    migration.upgrade(engine)
    if mariadb:
        with engine.connect() as conn:
            types = dict(conn.execute(sa.text(
                "SELECT column_name, column_type FROM "
                "information_schema.columns WHERE table_schema = "
                "database() AND table_name = 'nodes' AND column_name IN "
                "('instance_info', 'driver_info')")).all())
        assert types == {'instance_info': 'longtext',
                         'driver_info': 'longtext'}
    big = {'configdrive': 'H4sI' + 'A' * 200000}
    nodes = models.TABLES['nodes']
    with engine.begin() as conn:
        conn.execute(nodes.insert().values(
            uuid=str(uuid.uuid4()), driver='fake-hardware',
            instance_info=big))
        assert conn.execute(sa.select(nodes.c.instance_info)).scalar() \
            == big
