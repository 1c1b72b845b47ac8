"""/v1/allocations (1.52; PATCH 1.57; backfill 1.58; owner 1.60) and
/v1/nodes/{node}/allocation."""

import re

from baremetal.api import collection
from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.api.schemas import allocations as alloc_schema
from baremetal.common import exception
from baremetal.common import traits
from baremetal.db import allocations as db_allocations
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]{1,255}$')
STATES = ('allocating', 'active', 'error')


def _derive(rows):
    by_id = resource.node_uuid_map(rows)
    return lambda r: {'node_uuid': by_id.get(r.get('node_id')),
                      'traits': r.get('traits') or [],
                      'candidate_nodes': r.get('candidate_nodes') or [],
                      'extra': r.get('extra') or {}}


RES = resource.Resource(
    project_scope='owner',
    name='allocations', singular='allocation', rows=db_allocations.ROWS,
    fields=('uuid', 'name', 'node_uuid', 'state', 'last_error',
            'resource_class', 'traits', 'candidate_nodes', 'extra',
            'owner', 'created_at', 'updated_at'),
    # Ironic's allocation list shows every field
    list_fields=('uuid', 'name', 'node_uuid', 'state', 'last_error',
                 'resource_class', 'traits', 'candidate_nodes', 'extra',
                 'owner', 'created_at', 'updated_at'),
    field_versions=versions.ALLOCATION_FIELDS,
    readonly=frozenset(('uuid', 'node_uuid', 'state', 'last_error',
                        'resource_class', 'traits', 'candidate_nodes',
                        'owner', 'created_at', 'updated_at', 'links')),
    sort_keys=frozenset(('id', 'uuid', 'name', 'state', 'resource_class',
                         'created_at', 'updated_at')),
    derive=_derive, body_schema=alloc_schema.BODY)


def _filters(req) -> list:
    p = req.params
    out = []
    if p.get('node'):
        out.append(db_allocations.on_node(nodes.get_row(req, p['node'], (
            'id', 'uuid', 'owner', 'lessee'))['id']))
    if p.get('resource_class'):
        out.append(db_allocations.with_resource_class(p['resource_class']))
    if p.get('state'):
        if p['state'] not in STATES:
            raise exception.InvalidParameterValue(
                err='Invalid allocation state %r; valid: %s'
                % (p['state'], ', '.join(STATES)))
        out.append(db_allocations.in_state(p['state']))
    if 'owner' in p:
        if not req.allows(versions.ALLOCATION_OWNER):
            raise exception.NotAcceptable(
                reason='the owner filter needs API version 1.60')
        out.append(db_allocations.with_owner(p['owner']))
    return out


@route('GET', '/v1/allocations', min_version=versions.ALLOCATIONS)
def list_allocations(req):
    return RES.list(req, _filters(req), detail=collection.detail_flag(req))


@route('GET', '/v1/allocations/{ident}', min_version=versions.ALLOCATIONS)
def get_allocation(req, ident):
    return RES.show(req, ident)


def _check_create(req, body: dict) -> dict:
    allowed = {'uuid', 'name', 'resource_class', 'traits',
               'candidate_nodes', 'extra', 'node', 'owner'}
    RES.check_body(req, body, allowed)
    if 'node' in body and not req.allows(versions.ALLOCATION_BACKFILL):
        raise exception.NotAcceptable(
            reason='"node" (backfilling) needs API version 1.58')
    values = {'state': 'allocating'}
    rc = body.get('resource_class')
    if rc is None and 'node' not in body:
        raise exception.MissingParameterValue(
            err='The resource_class field is mandatory when not '
                'backfilling')
    if rc is not None and (not isinstance(rc, str) or len(rc) > 80):
        raise exception.InvalidParameterValue(
            err='resource_class must be a string of at most 80 characters')
    values['resource_class'] = rc
    wanted = body.get('traits') or []
    if not isinstance(wanted, list):
        raise exception.InvalidParameterValue(
            err='traits must be a list of trait names')
    for t in wanted:
        if not traits.is_valid(t):
            raise exception.InvalidParameterValue(err=traits.describe(t))
    values['traits'] = sorted(set(wanted))
    cands = body.get('candidate_nodes') or []
    if not isinstance(cands, list):
        raise exception.InvalidParameterValue(
            err='candidate_nodes must be a list of node UUIDs or names')
    values['candidate_nodes'] = [db_nodes.get_node(c, ('uuid',))['uuid']
                                 if isinstance(c, str) else c
                                 for c in cands]
    name = body.get('name')
    if name is not None and (not isinstance(name, str) or
                             not _NAME_RE.match(name) or
                             db_rows.is_uuid_like(name)):
        raise exception.InvalidParameterValue(
            err="Cannot create allocation with invalid name '%s'" % name)
    values['name'] = name
    if body.get('uuid') is not None:
        if not db_rows.is_uuid_like(body['uuid']):
            raise exception.InvalidUUID(uuid=body['uuid'])
        values['uuid'] = body['uuid']
    values['extra'] = resource.extra_of(body.get('extra'))
    values['owner'] = body.get('owner')
    return values


@route('POST', '/v1/allocations', status=201,
       min_version=versions.ALLOCATIONS)
def create_allocation(req):
    policy.authorize(req, 'baremetal:allocation:create')
    body = req.json_object()
    values = _check_create(req, body)
    if policy.project_scoped(req) and not policy.allows(
            req, 'baremetal:allocation:create_restricted'):
        # a project's allocation is the project's own
        project = req.context.project_id
        if values['owner'] not in (None, project):
            raise exception.NotAuthorized(
                'Access was denied to the following resource: '
                'baremetal:allocation:create_restricted')
        values['owner'] = project
    node_id = None
    if body.get('node'):
        node = nodes.get_row(req, body['node'])
        node_id = node['id']
        if values['resource_class'] is None:
            values['resource_class'] = node['resource_class']
    with notify.crud(req, 'allocation', 'create', values, _derive) as n:
        row = n.done(_create(req, values, node_id))
    return RES.created(req, row)


def _create(req, values: dict, node_id: int | None) -> dict:
    if node_id is not None:
        # the allocation and the node's claim: one transaction
        row = db_allocations.create_backfilled(values, node_id)
        return db_allocations.ROWS.get(row['id'], shown_as=row['uuid'])
    row = db_allocations.ROWS.create(values)
    try:
        state.RPC.any_call(req.context, 'create_allocation',
                           allocation_uuid=row['uuid'])
    except Exception:
        # no conductor took it (503): leave nothing half-made behind
        db_allocations.ROWS.delete(row['id'])
        raise
    # answered as created, state "allocating" (as Ironic does), even when
    # the worker was quicker than this response
    return row


@route('PATCH', '/v1/allocations/{ident}',
       min_version=versions.ALLOCATION_UPDATE)
def patch_allocation(req, ident):
    policy.authorize(req, 'baremetal:allocation:update')
    row = RES.get_row(req, ident)
    changes = RES.patched(req, row)
    values = {}
    if 'name' in changes:
        name = changes['name']
        if name is not None and (not isinstance(name, str) or
                                 not _NAME_RE.match(name)):
            raise exception.InvalidParameterValue(
                err="Cannot update allocation with invalid name '%s'"
                % name)
        values['name'] = name
    if 'extra' in changes:
        values['extra'] = resource.extra_of(changes['extra'])
    if values:
        with notify.crud(req, 'allocation', 'update', dict(row, **values),
                         _derive) as n:
            db_allocations.ROWS.update(row['id'], values)
            row = n.done(RES.get_row(req, row['uuid']))
    return RES.view(req, row)


@route('DELETE', '/v1/allocations/{ident}', status=204,
       min_version=versions.ALLOCATIONS)
def delete_allocation(req, ident):
    policy.authorize(req, 'baremetal:allocation:delete')
    _release(req, RES.get_row(req, ident))


def _release(req, row: dict) -> None:
    with notify.crud(req, 'allocation', 'delete', row, _derive):
        db_allocations.release(row)


def _node_allocation(req, node) -> dict:
    row = nodes.get_row(req, node, ('id', 'uuid', 'allocation_id',
                                    'owner', 'lessee'))
    if not row['allocation_id']:
        raise exception.AllocationNotFound(
            allocation='of node %s' % row['uuid'])
    alloc = db_allocations.ROWS.get(row['allocation_id'])
    policy.check_row(req, 'baremetal:allocation:get', RES.target(alloc),
                     exception.AllocationNotFound(
                         allocation=alloc['uuid']))
    return alloc


@route('GET', '/v1/nodes/{node}/allocation',
       min_version=versions.ALLOCATIONS)
def get_node_allocation(req, node):
    try:
        alloc = _node_allocation(req, node)
    except exception.NodeNotFound as e:
        # as Ironic: here an unknown node is the request's fault (400)
        raise exception.InvalidParameterValue(err=e.message) from None
    return RES.render(req, [alloc], RES.visible(req.version))[0]


@route('DELETE', '/v1/nodes/{node}/allocation', status=204,
       min_version=versions.ALLOCATIONS)
def delete_node_allocation(req, node):
    policy.authorize(req, 'baremetal:allocation:delete')
    _release(req, _node_allocation(req, node))
