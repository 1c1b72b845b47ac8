"""The change feed's SQL: node events written with the change, read in
id order, purged by age and count.

Every change of a tracked node field (``TRACKED``), and every node
created or deleted, is written as a ``node_events`` row in the same
transaction as the change itself: a change is never stored without its
event, nor an event without its change.  On MariaDB and MySQL db/
(``rows``, ``reservations``, ``nodes``) calls ``before``, ``changes``
and ``write`` in the transaction of the node's UPDATE, INSERT or DELETE;
on SQLite and PostgreSQL triggers write the same events in the
statement itself (``SQLITE_TRIGGERS``, ``POSTGRESQL_TRIGGERS``).

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
N is.  The counter is taken last in the transaction, after the node's
own statements, so it is held only for the INSERT of the events and the
COMMIT (PostgreSQL's trigger takes it after the node's row too, in a
statement that is a transaction of its own).  SQLite has one writer at a
time anyway (and baremetal
serialises its writes in-process too): there the rowid hands the ids out
(the largest plus one, in commit order) and the counter row is not used.
A purge never deletes the newest event, so the largest id only grows and
no id is handed out twice.  (``AUTOINCREMENT`` would guarantee that too,
at the price of a write to ``sqlite_sequence`` with every event: a third
of what the change feed cost a node write.)

Old values are read in the transaction, under the node's row lock
(``SELECT ... FOR UPDATE``; the triggers see them as OLD), so
``old`` is what was stored, whoever wrote it before.  Writes that change
no tracked field are untouched: no extra statement.
"""

import datetime
from typing import Any

import sqlalchemy as sa

from baremetal.db import models
from baremetal.db import prepared

EVENTS = models.TABLES['node_events']
COUNTER = models.TABLES['node_event_counter']
NODES = models.TABLES['nodes']

# node fields whose changes are events
TRACKED = ('provision_state', 'power_state', 'maintenance', 'fault',
           'health', 'clean_step', 'deploy_step', 'service_step')
STEP_FIELDS = frozenset(('clean_step', 'deploy_step', 'service_step'))
# what an event also says (filters and policy)
CONTEXT = ('resource_class', 'conductor_group', 'owner', 'lessee')
# a change of these alone is one of its field's event
_WITH = {'target_provision_state': 'provision_state',
         'maintenance_reason': 'maintenance'}
_WATCHED = frozenset(TRACKED) | frozenset(_WITH)
FIELDS = TRACKED + ('node',)

_BEFORE = sa.select(
    *[NODES.c[c] for c in ('uuid',) + TRACKED + tuple(_WITH) + CONTEXT]
).where(NODES.c.id == sa.bindparam('_node')).with_for_update()

_TAKE = (COUNTER.update().where(COUNTER.c.id == 1)
         .values(last_id=COUNTER.c.last_id + sa.bindparam('_n')))
_TAKE_RETURNING = _TAKE.returning(COUNTER.c.last_id)
_LAST = sa.select(COUNTER.c.last_id).where(COUNTER.c.id == 1)
# one row's INSERT, run with all the rows of a write (``changes`` and
# ``lifecycle`` give them the same keys) as an executemany, which
# SQLAlchemy sends as one statement and compiles once; an INSERT built
# with the rows' VALUES (a multi-row ``values()``) has no cache key and
# was compiled at every write
_INSERT = EVENTS.insert()


_SQLITE_LAST = sa.select(sa.func.max(EVENTS.c.id))


# ------------------------------------------------ SQLite: in the database
#
# On SQLite (the embedded server) the same events are written by
# triggers, inside SQLite, in the statement that changes the node: no
# statement more from Python and no Python work on the write path.  They
# say the same as ``changes`` and ``lifecycle`` (a unit test runs both
# on every database).  A later migration that rebuilds ``nodes`` on
# SQLite (alembic's batch mode copies the table) must create them again.

_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now') || '000'"
_INTO = ('INSERT INTO node_events (node_uuid, resource_class, '
         'conductor_group, owner, lessee, created_at, field, old, new, '
         'detail) SELECT {r}.uuid, {r}.resource_class, {r}.conductor_group, '
         '{r}.owner, {r}.lessee, ' + _NOW + ", '{field}', {old}, {new}, "
         '{detail}')


def _has_step(x: str) -> str:
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
        # a step changes with its stored text (as ``changes`` compares
        # the values); its JSON is read only for the event's value
        triggers.append(_trigger(
            field, (field,), '%s IS NOT %s' % (o, n),
            [ins(field, _step_json(o), 'NULL',
                 "json_object('step', 'end')", _has_step(o)),
             ins(field, 'NULL', _step_json(n),
                 "json_object('step', 'start')", _has_step(n))]))
    # SQLite fires the triggers of one statement newest first: created
    # in reverse, a write's events come in TRACKED's order, as the
    # Python path writes them
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
# events' INSERT, the COMMIT).  It takes the counter as the Python path
# does, after the node's row, so ids are still handed out in commit
# order: every statement that changes a tracked field of a node runs
# alone in its transaction, so the counter is its last lock (two nodes
# written in one transaction could deadlock against another writer).
# Old and new values are compared as stored (texts), as SQLite's
# triggers do.

def _pg_value(x: str) -> str:
    return 'to_json(%s)::text' % x


def _pg_step(x: str) -> str:
    # the step without its arguments (which may hold secrets)
    return ("CASE WHEN jsonb_typeof(%s::jsonb) = 'object' THEN "
            "(%s::jsonb - 'args')::text ELSE %s END" % (x, x, x))


def _pg_has_step(x: str) -> str:
    return "(%s IS NOT NULL AND %s NOT IN ('{}', 'null'))" % (x, x)


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
                 'IF %s THEN' % _pg_has_step(o),
                 add(field, _pg_step(o), 'NULL::text',
                     "'{\"step\": \"end\"}'::text"),
                 'END IF;',
                 'IF %s THEN' % _pg_has_step(n),
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


def in_python(dialect_name: str) -> bool:
    """Whether db/ writes the events (else triggers do: SQLite's and
    PostgreSQL's)."""
    return dialect_name not in ('sqlite', 'postgresql')


def touches(values: dict) -> bool:
    """Whether writing ``values`` to a node may change a tracked field
    (the writer then reads the node first, in its transaction)."""
    return not _WATCHED.isdisjoint(values)


def before(conn: sa.engine.Connection, node_id: int,
           cache: prepared.Cache | None = None) -> dict | None:
    """The node's tracked fields and context, locked until the end of
    the transaction (on SQLite the write lock is held already)."""
    rows, _ = prepared.run(cache, conn, _BEFORE, {'_node': node_id})
    return rows[0] if rows else None


def _step(value: Any) -> Any:
    """What an event says of a step: which one, not its arguments
    (which may hold settings or secrets)."""
    if not value:
        return None
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if k != 'args'}


def changes(old: dict, values: dict, now: datetime.datetime) -> list[dict]:
    """The event rows for writing ``values`` over ``old`` (as ``before``
    read it): one per tracked field that changes; a step replaced by
    another is two (the end of the old one, the start of the new)."""
    new = dict(old)
    new.update((k, v) for k, v in values.items() if k in old)
    ctx = {c: new[c] for c in CONTEXT}
    ctx['node_uuid'] = old['uuid']
    ctx['created_at'] = now
    rows = []

    def add(field: str, was: Any, now_: Any, detail: dict | None = None):
        rows.append(dict(ctx, field=field, old=was, new=now_,
                         detail=detail))

    for field in TRACKED:
        was, is_ = old.get(field), new.get(field)
        if field in STEP_FIELDS:
            # another step, or the same again with other arguments: the
            # end of one and the start of the next
            if was == is_ or not (was or is_):
                continue
            if was:
                add(field, _step(was), None, {'step': 'end'})
            if is_:
                add(field, None, _step(is_), {'step': 'start'})
            continue
        if field == 'provision_state':
            tw, tn = old['target_provision_state'], \
                new['target_provision_state']
            if was != is_ or tw != tn:
                add(field, was, is_, {'old_target_provision_state': tw,
                                      'target_provision_state': tn})
            continue
        if field == 'maintenance':
            rw, rn = old['maintenance_reason'], new['maintenance_reason']
            if bool(was) != bool(is_) or (is_ and rw != rn):
                add(field, bool(was), bool(is_),
                    {'reason': rn if is_ else None})
            continue
        if was != is_:
            add(field, was, is_)
    return rows


def lifecycle(node: dict, what: str, now: datetime.datetime) -> list[dict]:
    """The event of a node created (``what='created'``) or deleted."""
    return [dict({c: node.get(c) for c in CONTEXT},
                 node_uuid=node['uuid'], field='node', old=None, new=what,
                 detail={'provision_state': node.get('provision_state')},
                 created_at=now)]


def write(conn: sa.engine.Connection, rows: list[dict],
          cache: prepared.Cache | None = None) -> None:
    """Give ``rows`` the next ids and insert them, in the caller's
    transaction (the counter stays locked until it ends).  Statements
    built once, run prepared where ``cache`` allows (this is the node
    write path)."""
    if not rows:
        return
    if conn.dialect.name == 'sqlite':
        for row in rows:
            row['id'] = None
    else:
        n = len(rows)
        if conn.dialect.update_returning:
            last = prepared.run(cache, conn, _TAKE_RETURNING,
                                {'_n': n})[0][0]['last_id']
        else:
            prepared.run(cache, conn, _TAKE, {'_n': n})
            last = prepared.run(cache, conn, _LAST, {})[0][0]['last_id']
        for i, row in enumerate(rows):
            row['id'] = last - n + 1 + i
    conn.execute(_INSERT, rows)


# ---------------------------------------------------------------- reading

def _db():
    # db/engine.py imports this module (configure asks ``in_python``)
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
