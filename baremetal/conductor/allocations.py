"""Allocations: find an available node matching a request and reserve it
(Ironic's allocation API, 1.52).

A matching node is available, not in maintenance, not retired, has no
instance and no allocation, has the requested resource class, every
requested trait, and is one of the candidate nodes if any are named.
Claiming it is one conditional UPDATE, so two allocations never get one
node; a lost race moves on to the next candidate.  Backfilling and
releasing are one transaction each, which the API runs itself
(db.allocations.create_backfilled and release).
"""

import random

from oslo_log import log

from baremetal.common import exception
from baremetal.common import node_locks
from baremetal.db import allocations as db_allocations
from baremetal.db import traits as db_traits

LOG = log.getLogger(__name__)


def _candidates(alloc: dict) -> list[dict]:
    rows = db_allocations.available_nodes(
        alloc['resource_class'], alloc.get('candidate_nodes') or [])
    wanted = set(alloc.get('traits') or [])
    if wanted:
        traits = db_traits.traits_for_nodes([r['id'] for r in rows])
        rows = [r for r in rows if wanted <= set(traits.get(r['id'], []))]
    random.shuffle(rows)
    if alloc.get('name'):
        # a node named like the allocation is tried first (API 1.79)
        rows.sort(key=lambda r: r['name'] != alloc['name'])
    return rows


def _claim(alloc: dict) -> dict | None:
    """The node the allocation got, None if no node matches; NodeLocked
    when the only matching nodes are locked (by a task finishing, a
    periodic check) and none of them could be claimed."""
    locked = None
    for node in _candidates(alloc):
        if node['reservation']:
            locked = locked or node
            continue
        if db_allocations.claim_node(alloc, node['id']):
            return node
    if locked is not None:
        raise exception.NodeLocked(node=locked['uuid'],
                                   host=locked['reservation'])
    return None


def allocate(allocation_uuid: str, conf=None) -> dict | None:
    """Give the allocation a node (state active) or an error.  A
    matching node that is locked for a moment is waited for as a request
    waits for a node (``[conductor]node_locked_retry_*`` of ``conf``),
    as Ironic's allocation does.  None: the allocation was deleted
    meanwhile (before it got a node, none is taken)."""
    alloc = db_allocations.ROWS.get(allocation_uuid)
    try:
        return _allocate(alloc, conf)
    except exception.AllocationNotFound:
        LOG.info('Allocation %s was deleted while it was allocating',
                 alloc['uuid'])
        return None


def _allocate(alloc: dict, conf) -> dict:
    try:
        node = node_locks.retrying(conf, _claim, alloc)
    except exception.NodeLocked:
        node = None
    if node is not None:
        LOG.info('Allocation %s got node %s', alloc['uuid'], node['uuid'])
        return db_allocations.ROWS.get(alloc['id'], shown_as=alloc['uuid'])
    error = ('No available nodes match the resource class %s%s%s'
             % (alloc['resource_class'],
                ' and traits %s' % ', '.join(alloc['traits'])
                if alloc.get('traits') else '',
                ' among the candidate nodes'
                if alloc.get('candidate_nodes') else ''))
    db_allocations.ROWS.update(alloc['id'], {'state': 'error',
                                             'last_error': error})
    LOG.warning('Allocation %s: %s', alloc['uuid'], error)
    return db_allocations.ROWS.get(alloc['id'], shown_as=alloc['uuid'])
