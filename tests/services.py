"""The real peers tests use: PostgreSQL, MariaDB and RabbitMQ on this
machine.

Each helper returns a URL to a fresh, private resource (a database or a
vhost named for this test process) and removes it at exit; a process's
first use of a server removes what test processes killed before their
exit left there.  When a service is unreachable the test is skipped
with the reason, except in CI (``CI=true`` or
``BAREMETAL_REQUIRE_SERVICES=1``), where it fails.
"""

import atexit
import functools
import os
import re
import shutil
import socket
import subprocess
import uuid

import pytest
import sqlalchemy as sa

HOST = '127.0.0.1'
_START = {
    'PostgreSQL': 'pg_ctlcluster --skip-systemctl-redirect '
                  '$(ls /etc/postgresql) main start',
    'MariaDB': 'start-stop-daemon --start --oknodo --background '
               '--exec /usr/sbin/mariadbd',
    'RabbitMQ': 'rabbitmq-server -detached',
}


def required() -> bool:
    return (os.environ.get('CI') == 'true'
            or os.environ.get('BAREMETAL_REQUIRE_SERVICES') == '1')


def unavailable(service: str, why: str):
    msg = ('%s is not reachable on %s (%s); start it with: %s'
           % (service, HOST, why, _START[service]))
    if required():
        pytest.fail(msg)
    pytest.skip(msg)


@functools.cache
def _port_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def _suffix() -> str:
    worker = os.environ.get('PYTEST_XDIST_WORKER', 'main')
    return '%s_%d_%s' % (worker, os.getpid(), uuid.uuid4().hex[:6])


# what _suffix names: the test process's PID is its second part
_OURS = re.compile(r'bmtest_[a-z0-9]+_(\d+)_[0-9a-f]{6}')


def orphans(names) -> list[str]:
    """Those of ``names`` (databases, vhosts) that a test process of
    this machine made and that process is gone: killed before its exit
    handlers dropped them (a timeout, a kill).  Each left a database
    behind on the machine's servers (8 MB each on PostgreSQL)."""
    out = []
    for name in names:
        m = _OURS.fullmatch(name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            out.append(name)
        except PermissionError:
            pass            # alive, someone else's
    return out


def _pg_admin() -> sa.engine.Engine:
    # no pool: the connection closes once used (a pooled one would stay
    # open, idle, until the process exits: one per database a test
    # process makes, which filled max_connections)
    return sa.create_engine('postgresql+psycopg2://postgres@%s/postgres'
                            % HOST, isolation_level='AUTOCOMMIT',
                            poolclass=sa.pool.NullPool)


@functools.cache
def _pg_drop_orphans() -> None:
    with _pg_admin().connect() as c:
        names = [r[0] for r in c.execute(sa.text(
            "SELECT datname FROM pg_database WHERE datname LIKE "
            "'bmtest%'"))]
        for name in orphans(names):
            c.execute(sa.text('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                              % name))


def _pg_create(template: str | None = None) -> str:
    """A new database (copied from ``template``), dropped at process
    exit; its URL.  The first call of a process drops what killed test
    processes left behind."""
    if not _port_open(5432):
        unavailable('PostgreSQL', 'port 5432 closed')
    admin = _pg_admin()
    try:
        _pg_drop_orphans()
    except sa.exc.SQLAlchemyError:
        pass        # the CREATE below reports a server that fails
    name = 'bmtest_' + _suffix()
    try:
        with admin.connect() as c:
            c.execute(sa.text('CREATE DATABASE "%s"%s' % (
                name, ' TEMPLATE "%s"' % template if template else '')))
    except sa.exc.OperationalError as e:
        unavailable('PostgreSQL', str(e).splitlines()[0])

    def drop():
        with admin.connect() as c:
            c.execute(sa.text('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                              % name))
    atexit.register(drop)
    return 'postgresql+psycopg2://postgres@%s/%s' % (HOST, name)


@functools.cache
def _pg_schema_template() -> str:
    """This process's database with baremetal's schema, never connected
    to again once built: a copy of it is a fresh database with the
    schema in a third of the time of building the schema again."""
    from baremetal.db import migration
    url = _pg_create()
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        assert migration.create_schema(engine)
    finally:
        engine.dispose()
    return url.rsplit('/', 1)[1]


def postgresql_url(schema: bool = False) -> str:
    """A fresh PostgreSQL database, empty or (``schema``) with
    baremetal's schema at HEAD; dropped at process exit."""
    return _pg_create(_pg_schema_template() if schema else None)


def _mysql_admin() -> sa.engine.Engine:
    return sa.create_engine('mysql+pymysql://root@%s/' % HOST,
                            poolclass=sa.pool.NullPool)


@functools.cache
def _mysql_drop_orphans() -> None:
    with _mysql_admin().begin() as c:
        names = [r[0] for r in c.execute(sa.text(
            "SHOW DATABASES LIKE 'bmtest%'"))]
        for name in orphans(names):
            c.execute(sa.text('DROP DATABASE IF EXISTS `%s`' % name))


def mysql_url() -> str:
    """A fresh MariaDB database; dropped at process exit."""
    if not _port_open(3306):
        unavailable('MariaDB', 'port 3306 closed')
    admin = _mysql_admin()
    try:
        _mysql_drop_orphans()
    except sa.exc.SQLAlchemyError:
        pass        # the CREATE below reports a server that fails
    name = 'bmtest_' + _suffix()
    try:
        with admin.begin() as c:
            c.execute(sa.text('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                              % name))
    except sa.exc.OperationalError as e:
        unavailable('MariaDB', str(e).splitlines()[0])

    def drop():
        with admin.begin() as c:
            c.execute(sa.text('DROP DATABASE IF EXISTS `%s`' % name))
    atexit.register(drop)
    return 'mysql+pymysql://root@%s/%s?charset=utf8mb4' % (HOST, name)


@functools.cache
def _rabbit_drop_orphans(ctl: str) -> None:
    try:
        out = subprocess.run([ctl, '-q', 'list_vhosts'], check=True,
                             capture_output=True, text=True, timeout=60)
    except (subprocess.SubprocessError, OSError):
        return      # add_vhost below reports a broker that fails
    for vhost in orphans(out.stdout.split()):
        subprocess.run([ctl, '-q', 'delete_vhost', vhost],
                       capture_output=True, timeout=60)


def rabbit_url() -> str:
    """A RabbitMQ vhost of our own (when rabbitmqctl is usable)."""
    if not _port_open(5672):
        unavailable('RabbitMQ', 'port 5672 closed')
    ctl = shutil.which('rabbitmqctl')
    if not ctl:
        return 'rabbit://guest:guest@%s:5672/' % HOST
    _rabbit_drop_orphans(ctl)
    vhost = 'bmtest_' + _suffix()
    try:
        subprocess.run([ctl, '-q', 'add_vhost', vhost], check=True,
                       capture_output=True, timeout=60)
        subprocess.run([ctl, '-q', 'set_permissions', '-p', vhost, 'guest',
                        '.*', '.*', '.*'], check=True, capture_output=True,
                       timeout=60)
    except (subprocess.SubprocessError, OSError) as e:
        unavailable('RabbitMQ', 'rabbitmqctl failed: %s' % e)

    def drop():
        subprocess.run([ctl, '-q', 'delete_vhost', vhost],
                       capture_output=True, timeout=60)
    atexit.register(drop)
    return 'rabbit://guest:guest@%s:5672/%s' % (HOST, vhost)


# Databases asked for with the schema, and those of them a closed
# harness gave back emptied (give_back), for the next test of this
# process: a new one takes 0.15-0.3 s on PostgreSQL and 0.8 s on MariaDB
# (its schema built), emptying one 40 and 110 ms.
_WITH_SCHEMA: set[str] = set()
_SPARE: dict[str, list[str]] = {'postgresql': [], 'mysql': []}


def db_url(kind: str, schema: bool = False) -> str | None:
    """A database of ``kind`` with no rows (None for SQLite: the harness
    makes its own file).  ``schema``: PostgreSQL's comes with the
    schema (copied from a template, or one given back); MariaDB's is
    empty, and the harness builds it, unless it was given back."""
    if schema and _SPARE.get(kind):
        return _SPARE[kind].pop()
    if kind == 'postgresql':
        url = postgresql_url(schema)
    else:
        url = {'sqlite': lambda: None, 'mysql': mysql_url}[kind]()
    if schema and url:
        _WITH_SCHEMA.add(url)
    return url


def give_back(url: str) -> None:
    """Empty ``url``, a database db_url gave with the schema, of its
    rows (the schema and alembic's version stay; sequences start
    again) and keep it for db_url's next caller.  Called once nothing
    of the test uses it: connections still open to it are closed.  A
    database that cannot be emptied is not given out again (dropped at
    exit, as every database)."""
    if url not in _WITH_SCHEMA:
        return
    from baremetal.db import models
    kind = 'postgresql' if url.startswith('postgresql') else 'mysql'
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as c:
            if kind == 'postgresql':
                _pg_empty(c)
            else:
                _mysql_empty(c)
            for table, rows in _seed_rows().items():
                c.execute(models.TABLES[table].insert(), rows)
    except sa.exc.SQLAlchemyError:
        return
    finally:
        engine.dispose()
    _SPARE[kind].append(url)


@functools.cache
def _seed_rows() -> dict[str, list[dict]]:
    """The rows a new schema has (the node event counter's), as the
    models' create writes them: read from a new SQLite database."""
    from baremetal.db import models
    engine = sa.create_engine('sqlite://')
    models.Base.metadata.create_all(engine)
    with engine.connect() as c:
        seeds = {t.name: [dict(r._mapping) for r in c.execute(t.select())]
                 for t in models.Base.metadata.sorted_tables}
    engine.dispose()
    return {table: rows for table, rows in seeds.items() if rows}


def _pg_empty(c) -> None:
    c.execute(sa.text(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE '
        'datname = current_database() AND pid <> pg_backend_pid()'))
    c.execute(sa.text("SET LOCAL lock_timeout = '5s'"))
    # no foreign key checks: any order (TRUNCATE takes 0.3 s: new files)
    c.execute(sa.text('SET LOCAL session_replication_role = replica'))
    for (table,) in c.execute(sa.text(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'alembic_version'")).fetchall():
        c.execute(sa.text('DELETE FROM "%s"' % table))
    for (seq,) in c.execute(sa.text(
            "SELECT sequencename FROM pg_sequences "
            "WHERE schemaname = 'public'")).fetchall():
        c.execute(sa.text('ALTER SEQUENCE "%s" RESTART' % seq))


def _mysql_empty(c) -> None:
    for (pid,) in c.execute(sa.text(
            'SELECT id FROM information_schema.processlist '
            'WHERE db = DATABASE() AND id <> CONNECTION_ID()')).fetchall():
        try:
            with c.begin_nested():
                c.execute(sa.text('KILL %d' % pid))
        except sa.exc.DBAPIError:
            pass        # gone meanwhile
    c.execute(sa.text('SET SESSION lock_wait_timeout = 5, '
                      'innodb_lock_wait_timeout = 5, '
                      'FOREIGN_KEY_CHECKS = 0'))
    tables = [t for (t,) in c.execute(sa.text('SHOW TABLES')).fetchall()
              if t != 'alembic_version']
    # the nodes first: their DELETE trigger writes an event with an id
    # from the counter row, which must still be there (db/events.py);
    # those events go with the rest
    tables.sort(key=lambda t: t != 'nodes')
    for table in tables:
        c.execute(sa.text('DELETE FROM `%s`' % table))
    for table in tables:
        c.execute(sa.text('ALTER TABLE `%s` AUTO_INCREMENT = 1' % table))
    c.execute(sa.text('SET SESSION FOREIGN_KEY_CHECKS = 1'))


class PortReservation:
    """A free loopback port, held (bound, not listening) until
    ``release()``: a peer that writes its own address into its set-up
    (Keystone's catalog, Glance's config) before it listens picks its
    port long before it binds it, and meanwhile another test's
    free-port pick could take it.  Release just before the peer starts.
    """

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind((HOST, 0))
        self.port = self._sock.getsockname()[1]

    def release(self) -> None:
        self._sock.close()

