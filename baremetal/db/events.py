"""The change feed's SQL: node events written with the change, read in
id order, purged by age and count.

Every change of a tracked node field (``TRACKED``), and every node
created or deleted, is written as a ``node_events`` row in the same
statement as the change itself, by triggers on every database
(``SQLITE_TRIGGERS``, ``POSTGRESQL_TRIGGERS``, ``MYSQL_TRIGGERS``): a
change is never stored without its event, nor an event without its
change, whichever code writes the node.

Ordering, and why a reader never skips an event
-----------------------------------------------
A reader asks for the events after the last id it saw.  That is safe
only if an event becomes visible after every event with a smaller id:
otherwise a reader at id N could miss N-1, committed later.  Ids are
therefore not taken from a sequence (handed out at once, committed in
any order) but from the one row of ``node_event_counter``: a writing
transaction increments it (``UPDATE ... SET last_id = last_id + k``),
which locks the row until that transaction commits or rolls back.  The
next writer waits for the lock and then reads the committed value, so
ids are handed out in commit order, and a rolled-back transaction gives
its ids back (no holes).  PostgreSQL and MariaDB make a commit visible
before they release its locks, so when id N is visible, every id below
N is.  The triggers take the counter after the node's row, and a
transaction that changes a tracked field of a node writes nothing after
that statement (db/ keeps it so: two nodes written in one transaction
could deadlock against another writer), so the counter is held only
for the trigger's INSERT and the COMMIT.  SQLite has one writer at a
time anyway (and baremetal serialises its writes in-process too): there
the rowid hands the ids out (the largest plus one, in commit order) and
the counter row is not used.  A purge never deletes the newest event, so
the largest id only grows and no id is handed out twice.
(``AUTOINCREMENT`` would guarantee that too, at the price of a write to
``sqlite_sequence`` with every event: a third of what the change feed
cost a node write.)

Old values are the triggers' OLD row: what was stored, whoever wrote it
before.  Values compare as stored (texts).
"""

import datetime
from typing import Any

import sqlalchemy as sa

from baremetal.db import models

EVENTS = models.TABLES['node_events']
COUNTER = models.TABLES['node_event_counter']
NODES = models.TABLES['nodes']

# node fields whose changes are events
TRACKED = ('provision_state', 'power_state', 'maintenance', 'fault',
           'health', 'clean_step', 'deploy_step', 'service_step')
# what an event also says (filters and policy)
CONTEXT = ('resource_class', 'conductor_group', 'owner', 'lessee')
# a change of these alone is one of its field's event
_WITH = {'target_provision_state': 'provision_state',
         'maintenance_reason': 'maintenance'}
FIELDS = TRACKED + ('node',)

_LAST = sa.select(COUNTER.c.last_id).where(COUNTER.c.id == 1)
_SQLITE_LAST = sa.select(sa.func.max(EVENTS.c.id))


# ------------------------------------------------ SQLite: in the database
#
# On SQLite (the embedded server) the same events are written by
# triggers, inside SQLite, in the statement that changes the node: no
# statement more from Python and no Python work on the write path.  They
# say the same as PostgreSQL's and MySQL's (a unit test reads them on
# every database).  A later migration that rebuilds ``nodes`` on
# SQLite (alembic's batch mode copies the table) must create them again.

_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now') || '000'"
_INTO = ('INSERT INTO node_events (node_uuid, resource_class, '
         'conductor_group, owner, lessee, created_at, field, old, new, '
         'detail) SELECT {r}.uuid, {r}.resource_class, {r}.conductor_group, '
         '{r}.owner, {r}.lessee, ' + _NOW + ", '{field}', {old}, {new}, "
         '{detail}')


def _has_step(x: str) -> str:
    # a step is set: not NULL, nor an empty object or JSON null (the
    # same SQL on every database)
    return "(%s IS NOT NULL AND %s NOT IN ('{}', 'null'))" % (x, x)


def _step_json(x: str) -> str:
    return "json_remove(%s, '$.args')" % x


def _trigger(name: str, columns: tuple[str, ...], when: str,
             body: list[str]) -> str:
    return ('CREATE TRIGGER node_events_on_%s AFTER UPDATE OF %s ON nodes '
            'FOR EACH ROW WHEN %s BEGIN\n%s\nEND'
            % (name, ', '.join(columns), when, '\n'.join(body)))


def _on_update() -> list[str]:
    """One trigger per tracked field: SQLite fires a trigger only for an
    UPDATE whose SET names one of its columns, and runs its statements
    only when its WHEN holds, so a node write pays for the fields it
    changes, not for every tracked one (a single trigger for all of them
    evaluated every statement of its body on every write and made the
    change feed cost 13% of the lifecycle benchmark's instructions)."""
    def ins(field, old, new, detail, where=None):
        return _INTO.format(r='NEW', field=field, old=old, new=new,
                            detail=detail) + (
            ' WHERE ' + where if where else '') + ';'
    triggers = [_trigger(
        'provision_state', ('provision_state', 'target_provision_state'),
        'OLD.provision_state IS NOT NEW.provision_state OR '
        'OLD.target_provision_state IS NOT NEW.target_provision_state',
        [ins('provision_state', 'json_quote(OLD.provision_state)',
             'json_quote(NEW.provision_state)',
             "json_object('old_target_provision_state', "
             "OLD.target_provision_state, 'target_provision_state', "
             'NEW.target_provision_state)')])]
    triggers.append(_trigger(
        'power_state', ('power_state',),
        'OLD.power_state IS NOT NEW.power_state',
        [ins('power_state', 'json_quote(OLD.power_state)',
             'json_quote(NEW.power_state)', 'NULL')]))
    flag = "CASE WHEN coalesce({r}.maintenance, 0) THEN 'true' ELSE " \
        "'false' END"
    triggers.append(_trigger(
        'maintenance', ('maintenance', 'maintenance_reason'),
        'coalesce(OLD.maintenance, 0) != coalesce(NEW.maintenance, 0) OR '
        '(coalesce(NEW.maintenance, 0) AND OLD.maintenance_reason IS NOT '
        'NEW.maintenance_reason)',
        [ins('maintenance', flag.format(r='OLD'), flag.format(r='NEW'),
             "json_object('reason', CASE WHEN NEW.maintenance THEN "
             'NEW.maintenance_reason END)')]))
    for field in ('fault', 'health'):
        triggers.append(_trigger(
            field, (field,), f'OLD.{field} IS NOT NEW.{field}',
            [ins(field, 'json_quote(OLD.%s)' % field,
                 'json_quote(NEW.%s)' % field, 'NULL')]))
    for field in ('clean_step', 'deploy_step', 'service_step'):
        o, n = 'OLD.' + field, 'NEW.' + field
        # a step changes with its stored text; its JSON is read only for
        # the event's value
        triggers.append(_trigger(
            field, (field,), '%s IS NOT %s' % (o, n),
            [ins(field, _step_json(o), 'NULL',
                 "json_object('step', 'end')", _has_step(o)),
             ins(field, 'NULL', _step_json(n),
                 "json_object('step', 'start')", _has_step(n))]))
    # SQLite fires the triggers of one statement newest first: created
    # in reverse, a write's events come in TRACKED's order, as the
    # other databases' triggers write them
    return triggers[::-1]


def _on_lifecycle(what: str, row: str) -> str:
    when = 'INSERT' if what == 'created' else 'DELETE'
    return ('CREATE TRIGGER node_events_on_%s AFTER %s ON nodes FOR EACH '
            'ROW BEGIN %s; END' % (
                when.lower(), when, _INTO.format(
                    r=row, field='node', old='NULL',
                    new="json_quote('%s')" % what,
                    detail="json_object('provision_state', "
                           "%s.provision_state)" % row)))


SQLITE_TRIGGERS = (_on_lifecycle('created', 'NEW'),
                   _on_lifecycle('deleted', 'OLD'), *_on_update())
# the names SQLite's triggers had in earlier schemas (migration 0007)
SQLITE_TRIGGERS_BEFORE_0007 = ('node_events_on_update',)
SQLITE_TRIGGER_NAMES = tuple(
    t.split()[2] for t in SQLITE_TRIGGERS)


# ------------------------------------------------ PostgreSQL: a trigger
#
# On PostgreSQL one trigger function writes the same events, in the
# statement that changes the node: a node write is then one statement
# in autocommit (prepared on the server) instead of a transaction of
# five (the node read under its lock, its UPDATE, the counter, the
# events' INSERT, the COMMIT).  It takes the counter after the node's
# row, so ids are handed out in commit order: every statement that
# changes a tracked field of a node runs alone in its transaction, so
# the counter is its last lock (two nodes written in one transaction
# could deadlock against another writer).
# Old and new values are compared as stored (texts), as SQLite's
# triggers do.

def _pg_value(x: str) -> str:
    return 'to_json(%s)::text' % x


def _pg_step(x: str) -> str:
    # the step without its arguments (which may hold secrets)
    return ("CASE WHEN jsonb_typeof(%s::jsonb) = 'object' THEN "
            "(%s::jsonb - 'args')::text ELSE %s END" % (x, x, x))


def _pg_function() -> str:
    def add(field, old, new, detail):
        return ("f := f || '%s'::text; o := o || (%s); n := n || (%s); "
                'd := d || (%s);' % (field, old, new, detail))
    flag = 'to_json(coalesce(%s.maintenance, false))::text'
    body = [
        'IF OLD.provision_state IS DISTINCT FROM NEW.provision_state OR '
        'OLD.target_provision_state IS DISTINCT FROM '
        'NEW.target_provision_state THEN',
        add('provision_state', _pg_value('OLD.provision_state'),
            _pg_value('NEW.provision_state'),
            "json_build_object('old_target_provision_state', "
            "OLD.target_provision_state, 'target_provision_state', "
            'NEW.target_provision_state)::text'),
        'END IF;',
        'IF OLD.power_state IS DISTINCT FROM NEW.power_state THEN',
        add('power_state', _pg_value('OLD.power_state'),
            _pg_value('NEW.power_state'), 'NULL::text'),
        'END IF;',
        'IF coalesce(OLD.maintenance, false) <> '
        'coalesce(NEW.maintenance, false) OR (coalesce(NEW.maintenance, '
        'false) AND OLD.maintenance_reason IS DISTINCT FROM '
        'NEW.maintenance_reason) THEN',
        add('maintenance', flag % 'OLD', flag % 'NEW',
            "json_build_object('reason', CASE WHEN NEW.maintenance THEN "
            'NEW.maintenance_reason END)::text'),
        'END IF;']
    for field in ('fault', 'health'):
        body += ['IF OLD.%s IS DISTINCT FROM NEW.%s THEN' % (field, field),
                 add(field, _pg_value('OLD.' + field),
                     _pg_value('NEW.' + field), 'NULL::text'),
                 'END IF;']
    for field in ('clean_step', 'deploy_step', 'service_step'):
        o, n = 'OLD.' + field, 'NEW.' + field
        body += ['IF %s IS DISTINCT FROM %s THEN' % (o, n),
                 'IF %s THEN' % _has_step(o),
                 add(field, _pg_step(o), 'NULL::text',
                     "'{\"step\": \"end\"}'::text"),
                 'END IF;',
                 'IF %s THEN' % _has_step(n),
                 add(field, 'NULL::text', _pg_step(n),
                     "'{\"step\": \"start\"}'::text"),
                 'END IF;',
                 'END IF;']
    lifecycle = (
        "f := ARRAY['node']; o := ARRAY[NULL::text]; "
        "n := ARRAY[to_json('{what}'::text)::text]; "
        "d := ARRAY[json_build_object('provision_state', "
        '{r}.provision_state)::text];')
    return '\n'.join([
        'CREATE OR REPLACE FUNCTION %s() RETURNS trigger '
        'LANGUAGE plpgsql AS $$' % PG_FUNCTION,
        'DECLARE',
        "f text[] := '{}'; o text[] := '{}'; n text[] := '{}'; "
        "d text[] := '{}';",
        'r record; k integer; base_id bigint;',
        'BEGIN',
        "IF TG_OP = 'INSERT' THEN r := NEW; " + lifecycle.format(
            what='created', r='NEW'),
        "ELSIF TG_OP = 'DELETE' THEN r := OLD; " + lifecycle.format(
            what='deleted', r='OLD'),
        'ELSE r := NEW;', *body, 'END IF;',
        'k := coalesce(array_length(f, 1), 0);',
        'IF k = 0 THEN RETURN NULL; END IF;',
        'UPDATE node_event_counter SET last_id = last_id + k WHERE id = 1 '
        'RETURNING last_id - k INTO base_id;',
        'INSERT INTO node_events (id, node_uuid, resource_class, '
        'conductor_group, owner, lessee, created_at, field, old, new, '
        'detail) SELECT base_id + i, r.uuid, r.resource_class, '
        'r.conductor_group, r.owner, r.lessee, '
        "timezone('UTC', statement_timestamp()), f[i], o[i], n[i], d[i] "
        'FROM generate_subscripts(f, 1) AS i;',
        'RETURN NULL;',
        'END $$'])


PG_FUNCTION = 'baremetal_node_events'
_PG_WATCHED = TRACKED + tuple(_WITH)
POSTGRESQL_TRIGGERS = (
    _pg_function(),
    'CREATE TRIGGER node_events_on_insert AFTER INSERT ON nodes FOR EACH '
    'ROW EXECUTE FUNCTION %s()' % PG_FUNCTION,
    'CREATE TRIGGER node_events_on_delete AFTER DELETE ON nodes FOR EACH '
    'ROW EXECUTE FUNCTION %s()' % PG_FUNCTION,
    'CREATE TRIGGER node_events_on_update AFTER UPDATE OF %s ON nodes '
    'FOR EACH ROW WHEN (%s) EXECUTE FUNCTION %s()' % (
        ', '.join(_PG_WATCHED),
        ' OR '.join('OLD.%s IS DISTINCT FROM NEW.%s' % (c, c)
                    for c in _PG_WATCHED), PG_FUNCTION))
POSTGRESQL_DROP = (
    'DROP TRIGGER IF EXISTS node_events_on_insert ON nodes',
    'DROP TRIGGER IF EXISTS node_events_on_delete ON nodes',
    'DROP TRIGGER IF EXISTS node_events_on_update ON nodes',
    'DROP FUNCTION IF EXISTS %s()' % PG_FUNCTION)


# ------------------------------------------ MariaDB and MySQL: triggers
#
# On MariaDB and MySQL triggers write the same events too, in the
# statement that changes the node: a node write is the statement and its
# commit, as any other write (no read of the node under its lock, no
# counter or events' statements from Python).  MySQL has no UPDATE OF
# nor a trigger's WHEN: the UPDATE trigger runs at every node UPDATE and
# compares the fields first (a lock's UPDATE pays for eleven
# comparisons).  Texts compare as bytes, as the other databases compare
# them (a TEXT column's collation would take "Erase" for "erase").  Ids
# come from the counter, taken after the node's row as on PostgreSQL: a
# transaction that writes a tracked field of a node writes nothing after
# it but its commit (db/ keeps it so), so the counter is its last lock.

def _my_changed(field: str) -> str:
    return f'NOT (CAST(OLD.{field} AS BINARY) <=> CAST(NEW.{field} AS BINARY))'


_MY_COLUMNS = ('id, node_uuid, resource_class, conductor_group, owner, '
               'lessee, created_at, field, old, new, detail')


def _my_insert(r: str, field: str, old: str, new: str, detail: str) -> str:
    return ('INSERT INTO node_events (%s) VALUES (i, %s.uuid, '
            '%s.resource_class, %s.conductor_group, %s.owner, %s.lessee, '
            "UTC_TIMESTAMP(), '%s', %s, %s, %s);" % (
                _MY_COLUMNS, r, r, r, r, r, field, old, new, detail))


def _my_take() -> list[str]:
    # ``k`` ids: the counter row, locked until the node's transaction
    # ends; ``i`` the id before this write's first
    return ['UPDATE node_event_counter SET last_id = last_id + k '
            'WHERE id = 1;',
            'SELECT last_id - k INTO i FROM node_event_counter '
            'WHERE id = 1;']


def _my_on_update() -> str:
    flag = "IF(COALESCE({r}.maintenance, 0), 'true', 'false')"
    # (flag variable, condition, the event's field, old, new, detail)
    events = [
        ('e_ps', '%s OR %s' % (_my_changed('provision_state'),
                               _my_changed('target_provision_state')),
         'provision_state', 'JSON_QUOTE(OLD.provision_state)',
         'JSON_QUOTE(NEW.provision_state)',
         "JSON_OBJECT('old_target_provision_state', "
         "OLD.target_provision_state, 'target_provision_state', "
         'NEW.target_provision_state)'),
        ('e_pw', _my_changed('power_state'), 'power_state',
         'JSON_QUOTE(OLD.power_state)', 'JSON_QUOTE(NEW.power_state)',
         'NULL'),
        ('e_mt', 'COALESCE(OLD.maintenance, 0) <> COALESCE(NEW.maintenance, '
         '0) OR (COALESCE(NEW.maintenance, 0) AND %s)'
         % _my_changed('maintenance_reason'), 'maintenance',
         flag.format(r='OLD'), flag.format(r='NEW'),
         "JSON_OBJECT('reason', IF(NEW.maintenance, "
         'NEW.maintenance_reason, NULL))')]
    for field in ('fault', 'health'):
        events.append(('e_' + field, _my_changed(field), field,
                       'JSON_QUOTE(OLD.%s)' % field,
                       'JSON_QUOTE(NEW.%s)' % field, 'NULL'))
    for field in ('clean_step', 'deploy_step', 'service_step'):
        o, n = 'OLD.' + field, 'NEW.' + field
        events += [
            ('e_%s_end' % field, '%s AND %s' % (_my_changed(field),
                                                _has_step(o)),
             field, "JSON_REMOVE(%s, '$.args')" % o, 'NULL',
             '\'{"step": "end"}\''),
            ('e_%s_start' % field, '%s AND %s' % (_my_changed(field),
                                                  _has_step(n)),
             field, 'NULL', "JSON_REMOVE(%s, '$.args')" % n,
             '\'{"step": "start"}\'')]
    flags = [e[0] for e in events]
    body = ['DECLARE %s BOOLEAN;' % ', '.join(flags),
            'DECLARE k INT;', 'DECLARE i BIGINT;']
    body += ['SET %s = COALESCE(%s, FALSE);' % (v, cond)
             for v, cond, *_ in events]
    body.append('SET k = %s;' % ' + '.join(flags))
    body.append('IF k > 0 THEN')
    body += _my_take()
    for v, _, field, old, new, detail in events:
        body.append('IF %s THEN SET i = i + 1; %s END IF;' % (
            v, _my_insert('NEW', field, old, new, detail)))
    body.append('END IF;')
    return ('CREATE TRIGGER node_events_on_update AFTER UPDATE ON nodes '
            'FOR EACH ROW BEGIN\n%s\nEND' % '\n'.join(body))


def _my_on_lifecycle(what: str, r: str) -> str:
    when = 'INSERT' if what == 'created' else 'DELETE'
    return ('CREATE TRIGGER node_events_on_%s AFTER %s ON nodes FOR EACH '
            'ROW BEGIN\nDECLARE k INT DEFAULT 1;\nDECLARE i BIGINT;\n%s\n'
            'SET i = i + 1;\n%s\nEND' % (
                when.lower(), when, '\n'.join(_my_take()),
                _my_insert(r, 'node', 'NULL', "JSON_QUOTE('%s')" % what,
                           "JSON_OBJECT('provision_state', "
                           '%s.provision_state)' % r)))


MYSQL_TRIGGERS = (_my_on_lifecycle('created', 'NEW'),
                  _my_on_lifecycle('deleted', 'OLD'), _my_on_update())
MYSQL_DROP = tuple('DROP TRIGGER IF EXISTS node_events_on_%s' % w
                   for w in ('insert', 'delete', 'update'))

# what creates the events' triggers on each database (models.py, when it
# creates the tables), by SQLAlchemy's dialect name (a ``mariadb://``
# URL's is ``mariadb``)
TRIGGERS = {'sqlite': SQLITE_TRIGGERS, 'postgresql': POSTGRESQL_TRIGGERS,
            'mysql': MYSQL_TRIGGERS, 'mariadb': MYSQL_TRIGGERS}


# ---------------------------------------------------------------- reading

def _db():
    # imported when first used: db/engine.py is above this module
    from baremetal.db import engine
    return engine


def _filters(since: int, node_uuid: str | None = None,
             resource_class: str | None = None,
             conductor_group: str | None = None,
             owner: str | None = None,
             project: str | None = None,
             until: int | None = None) -> list:
    c = EVENTS.c
    out = [c.id > since]
    if until is not None:
        out.append(c.id <= until)
    if node_uuid is not None:
        out.append(c.node_uuid == node_uuid)
    if resource_class is not None:
        out.append(c.resource_class == resource_class)
    if conductor_group is not None:
        out.append(c.conductor_group == conductor_group)
    if owner is not None:
        out.append(c.owner == owner)
    if project is not None:
        out.append(sa.or_(c.owner == project, c.lessee == project))
    return out


def matches(row: dict, node_uuid: str | None = None,
            resource_class: str | None = None,
            conductor_group: str | None = None, owner: str | None = None,
            project: str | None = None) -> bool:
    """Whether an event passes the filters ``after`` takes (for events
    already read)."""
    return ((node_uuid is None or row['node_uuid'] == node_uuid) and
            (resource_class is None or
             row['resource_class'] == resource_class) and
            (conductor_group is None or
             row['conductor_group'] == conductor_group) and
            (owner is None or row['owner'] == owner) and
            (project is None or project in (row['owner'], row['lessee'])))


def after(since: int, limit: int, **filters: Any) -> list[dict]:
    """Up to ``limit`` events with ids above ``since``, in id order (a
    range scan of the primary key).  ``filters``: ``node_uuid``,
    ``resource_class``, ``conductor_group``, ``owner``, ``project``
    (events of nodes it owns or leases) and ``until`` (ids up to it)."""
    stmt = (sa.select(EVENTS).where(*_filters(since, **filters))
            .order_by(EVENTS.c.id).limit(limit))
    with _db().reader() as conn:
        return [dict(r) for r in conn.execute(stmt).mappings()]


def _last(conn: sa.engine.Connection) -> int:
    if conn.dialect.name == 'sqlite':
        return conn.execute(_SQLITE_LAST).scalar() or 0
    return conn.execute(_LAST).scalar_one()


def last_id() -> int:
    """The last id handed out (0 before the first event)."""
    with _db().reader() as conn:
        return _last(conn)


def purge(older_than: datetime.datetime | None, keep: int | None) -> int:
    """Delete the events written before ``older_than`` and all but the
    newest ``keep``; returns how many.  Only the oldest go, so a reader
    never sees a hole behind an id it can see; the newest always stays
    (on SQLite the next id is counted from it)."""
    gone = 0
    with _db().writer() as conn:
        last = _last(conn)
        cuts = []
        if keep is not None:
            cuts.append(last - keep)
        if older_than is not None:
            # ids grow with time: the newest id written before the
            # cut-off, then a range delete on the primary key
            cuts.append(conn.execute(
                sa.select(sa.func.max(EVENTS.c.id))
                .where(EVENTS.c.created_at < older_than)).scalar() or 0)
        cut = min(max(cuts, default=0), last - 1)
        if cut > 0:
            gone = conn.execute(EVENTS.delete().where(
                EVENTS.c.id <= cut)).rowcount
    return gone
