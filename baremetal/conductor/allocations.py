"""Allocations: find an available node matching a request and reserve it
(Ironic's allocation API, 1.52).

A matching node is available, not in maintenance, not retired, has no
instance and no allocation, has the requested resource class, every
requested trait, and is one of the candidate nodes if any are named.
Claiming it is one conditional UPDATE, so two allocations never get one
node; a lost race moves on to the next candidate.
"""

import random

from oslo_log import log

from baremetal.common import exception
from baremetal.common import node_locks
from baremetal.common import states
from baremetal.db import allocations as db_allocations
from baremetal.db import nodes as db_nodes
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


def allocate(allocation_uuid: str, conf=None) -> dict:
    """Give the allocation a node (state active) or an error.  A
    matching node that is locked for a moment is waited for as a request
    waits for a node (``[conductor]node_locked_retry_*`` of ``conf``),
    as Ironic's allocation does."""
    alloc = db_allocations.ROWS.get(allocation_uuid)
    try:
        node = node_locks.retrying(conf, _claim, alloc)
    except exception.NodeLocked:
        node = None
    if node is not None:
        LOG.info('Allocation %s got node %s', alloc['uuid'], node['uuid'])
        return db_allocations.ROWS.get(alloc['id'], shown_as=allocation_uuid)
    error = ('No available nodes match the resource class %s%s%s'
             % (alloc['resource_class'],
                ' and traits %s' % ', '.join(alloc['traits'])
                if alloc.get('traits') else '',
                ' among the candidate nodes'
                if alloc.get('candidate_nodes') else ''))
    db_allocations.ROWS.update(alloc['id'], {'state': 'error',
                                             'last_error': error})
    LOG.warning('Allocation %s: %s', alloc['uuid'], error)
    return db_allocations.ROWS.get(alloc['id'], shown_as=allocation_uuid)


def backfill(alloc: dict, node_id: int) -> None:
    """Record an allocation for a node that already has its workload
    (API 1.58): as in Ironic, only an active node whose resource class,
    traits and candidate list match what the allocation asks for."""
    node = db_nodes.get_node(node_id, ('id', 'uuid', 'instance_uuid',
                                       'allocation_id', 'provision_state',
                                       'resource_class'))
    if node['allocation_id']:
        raise exception.InvalidState(
            reason='Node %s already has an allocation' % node['uuid'])
    errors = []
    if node['provision_state'] != states.ACTIVE:
        errors.append('Node must be in the "active" state, but the '
                      'current state is "%s"' % node['provision_state'])
    if alloc.get('resource_class') and \
            node['resource_class'] != alloc['resource_class']:
        errors.append('Resource class %s does not match the requested '
                      'resource class %s' % (node['resource_class'],
                                             alloc['resource_class']))
    missing = sorted(set(alloc.get('traits') or ()) - set(
        db_traits.traits_for_nodes([node['id']]).get(node['id'], [])))
    if missing:
        errors.append('The node lacks the requested traits %s'
                      % ', '.join(missing))
    if alloc.get('candidate_nodes') and \
            node['uuid'] not in alloc['candidate_nodes']:
        errors.append('Candidate nodes must be empty or contain the '
                      'target node, but got %s'
                      % ', '.join(alloc['candidate_nodes']))
    if errors:
        raise exception.InvalidState(
            reason='Cannot backfill an allocation for node %s: %s'
                   % (node['uuid'], '; '.join(errors)))
    if not db_allocations.backfill_node(alloc, node):
        raise exception.NodeLocked(node=node['uuid'], host='another task')
    db_allocations.ROWS.update(alloc['id'], {'node_id': node['id'],
                                             'state': 'active'})


def release(alloc: dict) -> None:
    """Deleting an allocation frees its node."""
    if alloc.get('node_id'):
        node = db_nodes.get_node(alloc['node_id'], (
            'id', 'uuid', 'instance_uuid', 'provision_state', 'maintenance',
            'reservation'))
        if node['provision_state'] in (states.ACTIVE, states.DEPLOYING,
                                       states.DEPLOYWAIT) and \
                not node['maintenance']:
            raise exception.InvalidState(
                reason='Cannot remove the allocation of node %s in state '
                       '"%s"; undeploy it first or set maintenance'
                       % (node['uuid'], node['provision_state']))
        if node['reservation']:
            raise exception.NodeLocked(node=node['uuid'],
                                       host=node['reservation'])
        values = {'allocation_id': None}
        if node['instance_uuid'] == alloc['uuid']:
            values['instance_uuid'] = None
        db_nodes.ROWS.update(node['id'], values)
    db_allocations.ROWS.delete(alloc['id'])
