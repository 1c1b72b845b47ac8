"""Nodes: the conditions of a node list, the sub-selects other
resources' lists take (a port's or a port group's node in some
conductor groups or shards), small reads of nodes (one node by
``get_node``, those the periodic tasks look at), and the deletion of a
node with everything hanging off it."""

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.common import states
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import rows as db_rows

T = models.TABLES
N = NODES = T['nodes']
_N = N.c


def _equals(field: str):
    col = _N[field]
    return col == sa.bindparam('equals_' + field, type_=col.type,
                               required=False)


def equals(field: str, value) -> db_rows.Bound:
    """Condition: the node's ``field`` is ``value`` (not None); one per
    field, built once with the value a parameter: a page filtered by it
    keeps its statement (rows.Bound)."""
    clause = db_rows.fixed_once(('nodes.equals', field),
                                lambda: _equals(field))
    return db_rows.Bound(clause, {'equals_' + field: value})


# the conditions of a flag (a node list's associated=, maintenance=,
# retired=, sharded=), each built once: a page filtered by them keeps its
# statement as the default list's does (rows.fixed)
_FLAGS = {
    ('associated', True): _N.instance_uuid.is_not(None),
    ('associated', False): _N.instance_uuid.is_(None),
    ('maintenance', True): _N.maintenance.is_(True),
    ('maintenance', False): _N.maintenance.is_(False),
    ('retired', True): _N.retired.is_(True),
    ('retired', False): sa.or_(_N.retired.is_(False),
                               _N.retired.is_(None)),
    ('sharded', True): _N.shard.is_not(None),
    ('sharded', False): _N.shard.is_(None),
}
for _flag in _FLAGS.values():
    db_rows.fixed(_flag)


def associated(flag: bool):
    """Condition: the node has an instance (``flag``) or has none."""
    return _FLAGS['associated', bool(flag)]


def in_maintenance(flag: bool):
    """Condition: the node is in maintenance (``flag``) or is not."""
    return _FLAGS['maintenance', bool(flag)]


def retired(flag: bool):
    """Condition: the node is retired (``flag``), or is not (false or
    never set)."""
    return _FLAGS['retired', bool(flag)]


def in_shards(shards: list[str]):
    """Condition: the node is in one of the shards (one shard, as a
    client of one shard asks for it, is ``equals``: an IN list is
    rendered anew at each execution and never runs prepared)."""
    if len(shards) == 1:
        return equals('shard', shards[0])
    return _N.shard.in_(shards)


def sharded(flag: bool):
    """Condition: the node is in a shard (``flag``) or in none."""
    return _FLAGS['sharded', bool(flag)]


_WITHOUT_PARENT = db_rows.fixed(_N.parent_node.is_(None))


def without_parent():
    """Condition: the node is no other node's child (API 1.83); the
    same object each time (``rows.fixed``: the default list's page
    statement is kept)."""
    return _WITHOUT_PARENT


def description_contains(text: str):
    """Condition: the description contains ``text`` (``%`` and ``_``
    match themselves)."""
    return _N.description.contains(text, autoescape=True)


def ids_in_conductor_groups(groups: list[str]):
    """Sub-select: ids of the nodes in one of the conductor groups."""
    return sa.select(_N.id).where(_N.conductor_group.in_(groups))


def ids_in_shards(shards: list[str]):
    """Sub-select: ids of the nodes in one of the shards."""
    return sa.select(_N.id).where(_N.shard.in_(shards))


# the id of the node of a UUID, as a page's marker: built once, so that
# the statement of a page after a node is kept (rows.Bound); its
# value comes with each page (not required when a statement's values
# are found by its shape, before the page's are added)
_AFTER_UUID = db_rows.fixed(
    sa.select(N.c.id).where(N.c.uuid == sa.bindparam(
        'page_after_uuid', type_=N.c.uuid.type, required=False))
    .scalar_subquery())


def after_uuid(uuid: str) -> dict:
    """A page marker for ``rows.query`` sorted by id: the node of ``uuid``
    found by the page's own statement (a subquery), not by a statement
    of its own before it; a marker that names no node gives an empty
    page."""
    return {'id': db_rows.Bound(_AFTER_UUID,
                                {'page_after_uuid': str(uuid).lower()})}


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the nodes with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db_rows.query(
        N, (_N.id.in_(ids),), columns=('id', 'uuid'))}


def children(parent_uuid: str) -> list[dict]:
    """``id`` and ``uuid`` of the nodes whose parent is this one."""
    return db_rows.query(N, (_N.parent_node == parent_uuid,), ('id', 'uuid'))


def count_in_chassis(chassis_id: int) -> int:
    """How many nodes the chassis holds."""
    return db_rows.count(N, (_N.chassis_id == chassis_id,))


def shard_counts() -> list:
    """``(shard, nodes)`` for each shard (None: nodes in no shard), in
    no particular order (one query)."""
    with engine.reader() as conn:
        return conn.execute(sa.select(_N.shard, sa.func.count())
                            .group_by(_N.shard)).all()


def unreserved():
    """Condition: no conductor holds the node's lock."""
    return _N.reservation.is_(None)


def unchanged_since(updated_at):
    """Condition: the node is as it was when its ``updated_at`` was
    read."""
    if updated_at is None:
        return _N.updated_at.is_(None)
    return _N.updated_at == updated_at


def get_node(ident: Any, columns: Iterable[str] | None = None) -> dict:
    """The node of this id, UUID or name; NodeNotFound."""
    return db_rows.get(NODES, ident, exception.NodeNotFound, columns,
                       node=ident)


# a node's row for callers outside db/ (objects.Node, the conductor's
# writes of a few fields): the node events of a tracked field's change
# are written with it, as by any UPDATE of a node here
ROWS = db_rows.Rows(NODES, exception.NodeNotFound, 'node')


def list_page(filters: Iterable = (), columns: Iterable[str] | None = None,
              limit: int | None = None, marker: dict | None = None,
              sort_key: str = 'id', sort_dir: str = 'asc',
              json_as_text: Iterable[str] = (), select: list | None = None,
              tuples: bool = False, read_ahead: bool = False) -> list:
    """One page of nodes matching ``filters`` (this module's
    conditions): see ``rows.query``; ``select``: the columns of a page
    whose JSON the database writes (db/node_json.py), the node's UUID
    second.  ``read_ahead``: the client walks the list (sorted by id,
    ``marker`` from ``after_uuid``): the page after this one is read
    ahead, as its request will ask for it (db/read_ahead.py)."""
    ahead = None
    if read_ahead and sort_key == 'id' and select is not None and tuples:
        def ahead(rows):
            return after_uuid(rows[-1][1])
    return db_rows.query(NODES, filters, columns, limit, marker, sort_key,
                         sort_dir, json_as_text=json_as_text,
                         select=select, tuples=tuples, ahead=ahead)


# ------------------------------------------------------------- periodics

# what a periodic task reads of the nodes it looks at
PERIODIC_COLUMNS = ('id', 'uuid', 'driver', 'conductor_group',
                    'provision_state', 'provision_updated_at',
                    'reservation', 'maintenance')
STEP_COLUMNS = ('clean_step', 'deploy_step', 'service_step')


def nodes_in_states(provision_states: Iterable[str],
                    columns: Iterable[str] = PERIODIC_COLUMNS,
                    extra: Iterable = ()) -> list[dict]:
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(*[NODES.c[c] for c in columns]).where(
                NODES.c.provision_state.in_(list(provision_states)),
                *extra)).mappings()]


def unreserved_with_steps(provision_states: Iterable[str]) -> list[dict]:
    """Nodes in ``provision_states`` no task holds, with the steps they
    run (``STEP_COLUMNS``) besides ``PERIODIC_COLUMNS``."""
    return nodes_in_states(provision_states,
                           PERIODIC_COLUMNS + STEP_COLUMNS,
                           extra=(unreserved(),))


def nodes_for_sensors(only_active: bool) -> list[dict]:
    """Nodes whose sensors a conductor may read: not in maintenance, not
    held by a task (it may be talking to the same BMC), in ``active``
    unless ``only_active`` is False."""
    where = [NODES.c.maintenance.is_(False), NODES.c.reservation.is_(None)]
    if only_active:
        where.append(NODES.c.provision_state == states.ACTIVE)
    cols = ('id', 'uuid', 'name', 'driver', 'conductor_group',
            'instance_uuid', 'provision_state')
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(*[NODES.c[c] for c in cols]).where(*where)
        ).mappings()]


# ---------------------------------------------------------------- destroy

_DESTROY_STMTS: list = []
_DESTROY_ONE: dict = {}


def _destroy_stmts() -> list:
    """DELETE the node (any / only if unreserved), DELETE what hangs off
    it, unlink its allocations: built once."""
    if not _DESTROY_STMTS:
        nid = sa.bindparam('_node')
        _DESTROY_STMTS.append(NODES.delete().where(NODES.c.id == nid))
        _DESTROY_STMTS.append(NODES.delete().where(
            NODES.c.id == nid, NODES.c.reservation.is_(None)))
        for t in _node_children():
            _DESTROY_STMTS.append(t.delete().where(t.c.node_id == nid))
        allocs = T['allocations']
        _DESTROY_STMTS.append(allocs.update()
                              .where(allocs.c.node_id == nid)
                              .values(node_id=None))
    return _DESTROY_STMTS


def _node_children() -> tuple:
    return (T['ports'], T['portgroups'], T['node_traits'],
            T['bios_settings'], T['volume_connectors'], T['volume_targets'],
            T['node_history'], T['node_inventory'],
            T['firmware_information'])


def _destroy_one(only_unreserved: bool):
    """PostgreSQL: the whole destroy as one statement (one round trip):
    the node's DELETE ... RETURNING feeds the DELETEs of what hangs off
    it and the unlinking of its allocations, all data-modifying WITH
    queries of one statement; the foreign keys are checked at its end."""
    stmt = _DESTROY_ONE.get(only_unreserved)
    if stmt is None:
        cond = [NODES.c.id == sa.bindparam('_node')]
        if only_unreserved:
            cond.append(NODES.c.reservation.is_(None))
        gone = (NODES.delete().where(*cond).returning(NODES.c.id)
                .cte('gone'))
        ids = sa.select(gone.c.id).scalar_subquery()
        stmt = sa.select(gone.c.id)
        for t in _node_children():
            stmt = stmt.add_cte(t.delete().where(t.c.node_id == ids)
                                .cte('del_' + t.name))
        allocs = T['allocations']
        stmt = stmt.add_cte(allocs.update().where(allocs.c.node_id == ids)
                            .values(node_id=None).cte('unlink_allocations'))
        _DESTROY_ONE[only_unreserved] = stmt
    return stmt


@engine.retry_on_deadlock
def destroy_node(node_id: int, only_unreserved: bool = False) -> int:
    """Delete a node and everything hanging off it at once (``only_
    unreserved``: not while someone holds its lock)."""
    params = {'_node': node_id}
    if engine.engine().dialect.name == 'postgresql':   # one statement
        with engine.single() as conn:
            return len(prepared.run(engine.prepared_cache, conn,
                                    _destroy_one(only_unreserved),
                                    params)[0])
    any_, unreserved, *rest = _destroy_stmts()
    try:
        with engine.writer() as conn:
            # what references the node first (foreign keys are checked
            # per statement), then the node; undone if it is locked
            for stmt in rest:
                prepared.run(engine.prepared_cache, conn, stmt, params)
            if not prepared.run(engine.prepared_cache, conn,
                                unreserved if only_unreserved else any_,
                                params)[1]:
                raise _NothingDeleted()
    except _NothingDeleted:
        return 0
    return 1


class _NothingDeleted(Exception):
    """Rolls a destroy back: the node was gone or locked."""
