"""Allocations: the conditions their list takes, the nodes an allocation
may get, and the claiming of a node (one transaction each)."""

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.common import states
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows

A = models.TABLES['allocations']
N = models.TABLES['nodes']
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


def _with_traits(conn, node_id: int, alloc: dict) -> dict:
    """The node's instance_info with the allocation's traits (an empty
    list when it asked for none), as Ironic records them: deployment
    picks the deploy templates from them."""
    info = conn.execute(sa.select(N.c.instance_info).where(
        N.c.id == node_id)).scalar()
    return dict(info or {}, traits=list(alloc.get('traits') or []))


def claim_node(alloc: dict, node_id: int) -> bool:
    """Give the allocation the node if it is still free (available, no
    instance, no allocation, no lock): in one transaction the node gets
    the allocation, its instance UUID and traits, and the allocation
    the node (state ``active``).  False: another took it first."""
    with engine.writer() as conn:
        values = {'instance_uuid': alloc['uuid'],
                  'allocation_id': alloc['id'],
                  'updated_at': db_rows.utcnow(),
                  'instance_info': _with_traits(conn, node_id, alloc)}
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


def backfill_node(alloc: dict, node: dict) -> bool:
    """Record the allocation on a node that has its workload already
    (its instance UUID is kept; without one it gets the allocation's),
    unless the node has an allocation or a lock by now.  The allocation
    itself is not changed here."""
    with engine.writer() as conn:
        values = {'allocation_id': alloc['id'],
                  'updated_at': db_rows.utcnow(),
                  'instance_info': _with_traits(conn, node['id'], alloc)}
        if not node['instance_uuid']:
            values['instance_uuid'] = alloc['uuid']
        claimed = conn.execute(N.update().where(
            N.c.id == node['id'], N.c.allocation_id.is_(None),
            N.c.reservation.is_(None)).values(**values)).rowcount
    return bool(claimed)


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the allocations with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db_rows.query(
        A, (A.c.id.in_(ids),), columns=('id', 'uuid'))}
