"""Allocations: the conditions their list takes, the nodes an allocation
may get, the claiming of a node, backfilling (an allocation for a node
already deployed) and releasing (one transaction each).  The API runs
backfill and release itself; the conductor's allocate claims nodes."""

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.common import states
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows

A = models.TABLES['allocations']
N = models.TABLES['nodes']
T = models.TABLES['node_traits']
ROWS = db_rows.Rows(A, exception.AllocationNotFound, 'allocation')


def on_node(node_id: int):
    """Condition: the allocation of the node ``node_id``."""
    return A.c.node_id == node_id


def with_resource_class(resource_class: str):
    """Condition: allocations asking for this resource class."""
    return A.c.resource_class == resource_class


def in_state(state: str):
    """Condition: allocations in this state."""
    return A.c.state == state


def with_owner(owner: str | None):
    """Condition: allocations whose owner is ``owner``."""
    return A.c.owner == owner


def available_nodes(resource_class: str,
                    uuids: list[str] | None = None) -> list[dict]:
    """``id``, ``uuid``, ``name`` and ``reservation`` of the nodes an
    allocation may get: available, not in maintenance, not retired, with
    no instance and no allocation, of ``resource_class``, and among
    ``uuids`` when some are given.  A node locked for a moment is among
    them (its ``reservation`` says by whom): the claim waits for it."""
    filters = [N.c.provision_state == states.AVAILABLE,
               N.c.maintenance.is_(False),
               sa.or_(N.c.retired.is_(False), N.c.retired.is_(None)),
               N.c.instance_uuid.is_(None), N.c.allocation_id.is_(None),
               N.c.resource_class == resource_class]
    if uuids:
        filters.append(N.c.uuid.in_(uuids))
    return db_rows.query(N, filters,
                         columns=('id', 'uuid', 'name', 'reservation'))


def _with_traits(info: dict | None, alloc: dict) -> dict:
    """The node's instance_info with the allocation's traits (an empty
    list when it asked for none), as Ironic records them: deployment
    picks the deploy templates from them."""
    return dict(info or {}, traits=list(alloc.get('traits') or []))


def _instance_info(conn, node_id: int):
    return conn.execute(sa.select(N.c.instance_info).where(
        N.c.id == node_id)).scalar()


def claim_node(alloc: dict, node_id: int) -> bool:
    """Give the allocation the node if it is still free (available, no
    instance, no allocation, no lock): in one transaction the node gets
    the allocation, its instance UUID and traits, and the allocation
    the node (state ``active``).  False: another took it first.
    AllocationNotFound: the allocation was deleted (or is no longer
    allocating) meanwhile; the node stays free.

    The allocation's row is locked first, as ``release`` locks it, so a
    DELETE of an allocation still allocating either comes before the
    claim (which then finds no row) or after it (and frees the node)."""
    with engine.writer() as conn:
        if conn.execute(sa.select(A.c.id).where(
                A.c.id == alloc['id'], A.c.state == 'allocating',
                A.c.node_id.is_(None)).with_for_update()).first() is None:
            raise exception.AllocationNotFound(allocation=alloc['uuid'])
        values = {'instance_uuid': alloc['uuid'],
                  'allocation_id': alloc['id'],
                  'updated_at': db_rows.utcnow(),
                  'instance_info': _with_traits(
                      _instance_info(conn, node_id), alloc)}
        claimed = conn.execute(N.update().where(
            N.c.id == node_id, N.c.instance_uuid.is_(None),
            N.c.allocation_id.is_(None), N.c.reservation.is_(None),
            N.c.provision_state == states.AVAILABLE).values(
                **values)).rowcount
        if claimed:
            conn.execute(A.update().where(A.c.id == alloc['id']).values(
                node_id=node_id, state='active', last_error=None,
                updated_at=db_rows.utcnow()))
    return bool(claimed)


_BACKFILL_COLUMNS = ('id', 'uuid', 'instance_uuid', 'instance_info',
                     'allocation_id', 'provision_state', 'resource_class',
                     'reservation')


def _node_for_update(conn, node_id: int, columns: tuple) -> dict:
    """The node's row, locked until the transaction ends (SELECT ... FOR
    UPDATE; SQLite has one writer at a time anyway); NodeNotFound."""
    row = conn.execute(sa.select(*[N.c[c] for c in columns]).where(
        N.c.id == node_id).with_for_update()).mappings().first()
    if row is None:
        raise exception.NodeNotFound(node=node_id)
    return dict(row)


def _backfill_errors(conn, alloc: dict, node: dict) -> list[str]:
    """Why the node cannot take the allocation (API 1.58), as Ironic
    says it: only an active node whose resource class, traits and
    candidate list match what the allocation asks for."""
    errors = []
    if node['provision_state'] != states.ACTIVE:
        errors.append('Node must be in the "active" state, but the '
                      'current state is "%s"' % node['provision_state'])
    if alloc.get('resource_class') and \
            node['resource_class'] != alloc['resource_class']:
        errors.append('Resource class %s does not match the requested '
                      'resource class %s' % (node['resource_class'],
                                             alloc['resource_class']))
    has = set(conn.execute(sa.select(T.c.trait).where(
        T.c.node_id == node['id'])).scalars())
    missing = sorted(set(alloc.get('traits') or ()) - has)
    if missing:
        errors.append('The node lacks the requested traits %s'
                      % ', '.join(missing))
    if alloc.get('candidate_nodes') and \
            node['uuid'] not in alloc['candidate_nodes']:
        errors.append('Candidate nodes must be empty or contain the '
                      'target node, but got %s'
                      % ', '.join(alloc['candidate_nodes']))
    return errors


@engine.retry_on_deadlock
def create_backfilled(values: dict, node_id: int) -> dict:
    """Create an allocation for a node that has its workload already
    (API 1.58) in one transaction: the allocation is stored with the node
    (state ``active``) and the node gets the allocation (its instance
    UUID is kept; without one it gets the allocation's), or nothing is
    stored at all.  The allocation as stored.

    InvalidState: the node has an allocation, or does not match what
    the allocation asks for; NodeLocked: a task holds the node;
    NodeNotFound; Conflict errors on a name taken."""
    values = dict(values, state='active', node_id=node_id)
    with engine.writer() as conn:
        # stored first, as Ironic does: a name taken is the answer even
        # when the node does not fit either
        alloc = db_rows.insert(conn, A, values)
        node = _node_for_update(conn, node_id, _BACKFILL_COLUMNS)
        if node['allocation_id']:
            raise exception.InvalidState(
                reason='Node %s already has an allocation' % node['uuid'])
        errors = _backfill_errors(conn, alloc, node)
        if errors:
            raise exception.InvalidState(
                reason='Cannot backfill an allocation for node %s: %s'
                       % (node['uuid'], '; '.join(errors)))
        claim = {'allocation_id': alloc['id'],
                 'updated_at': db_rows.utcnow(),
                 'instance_info': _with_traits(node['instance_info'],
                                               alloc)}
        if not node['instance_uuid']:
            claim['instance_uuid'] = alloc['uuid']
        # raising anywhere here rolls the allocation's INSERT back
        if not conn.execute(N.update().where(
                N.c.id == node_id, N.c.allocation_id.is_(None),
                N.c.reservation.is_(None)).values(**claim)).rowcount:
            raise exception.NodeLocked(node=node['uuid'],
                                       host='another task')
    return alloc


_RELEASE_COLUMNS = ('id', 'uuid', 'instance_uuid', 'provision_state',
                    'maintenance', 'reservation')
# a node busy with its workload keeps its allocation (unless in
# maintenance)
_IN_USE = (states.ACTIVE, states.DEPLOYING, states.DEPLOYWAIT)


@engine.retry_on_deadlock
def release(alloc: dict) -> None:
    """Delete the allocation and free its node (no allocation; no
    instance UUID if it was the allocation's), in one transaction.
    InvalidState: the node is deployed or deploying and not in
    maintenance; NodeLocked: a task holds the node; AllocationNotFound:
    it is gone already.  Its row is read again, locked, so a node the
    conductor claimed after ``alloc`` was read is freed too."""
    with engine.writer() as conn:
        node_id = conn.execute(sa.select(A.c.node_id).where(
            A.c.id == alloc['id']).with_for_update()).first()
        if node_id is None:
            raise exception.AllocationNotFound(allocation=alloc['uuid'])
        node_id = node_id[0]
        if node_id:
            node = _node_for_update(conn, node_id,
                                    _RELEASE_COLUMNS)
            if node['provision_state'] in _IN_USE and \
                    not node['maintenance']:
                raise exception.InvalidState(
                    reason='Cannot remove the allocation of node %s in '
                           'state "%s"; undeploy it first or set '
                           'maintenance'
                           % (node['uuid'], node['provision_state']))
            if node['reservation']:
                raise exception.NodeLocked(node=node['uuid'],
                                           host=node['reservation'])
            values = {'allocation_id': None,
                      'updated_at': db_rows.utcnow()}
            if node['instance_uuid'] == alloc['uuid']:
                values['instance_uuid'] = None
            conn.execute(N.update().where(N.c.id == node['id']).values(
                **values))
        conn.execute(A.delete().where(A.c.id == alloc['id']))


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the allocations with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db_rows.query(
        A, (A.c.id.in_(ids),), columns=('id', 'uuid'))}
