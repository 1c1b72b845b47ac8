"""/v1/portgroups (1.23; mode and properties 1.26; physical_network
1.102; category 1.103; dynamic_portgroup 1.111) and
/v1/nodes/{node}/portgroups (1.24)."""

import re

from baremetal.api import patching
from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.controllers.v1 import port_physnets
from baremetal.api.controllers.v1 import ports
from baremetal.api.routing import route
from baremetal.api.schemas import portgroups as pg_schema
from baremetal.common import exception
from baremetal.common import mac_address
from baremetal.db import portgroups as db_portgroups
from baremetal.db import ports as db_ports
from baremetal.db import rows as db_rows

_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]{1,255}$')

FIELDS = ('uuid', 'address', 'name', 'node_uuid', 'extra',
          'internal_info', 'standalone_ports_supported', 'mode',
          'properties', 'physical_network', 'category',
          'dynamic_portgroup', 'created_at', 'updated_at')
# dynamic_portgroup is read only (Ironic's trait based networking, which
# is not here, makes dynamic groups)
CREATE = {'uuid', 'address', 'name', 'node_uuid', 'extra',
          'standalone_ports_supported', 'mode', 'properties',
          'physical_network', 'category'}


def _derive(rows):
    nodes_by_id = resource.node_uuid_map(rows)

    def extra(r):
        return {'node_uuid': nodes_by_id.get(r.get('node_id')),
                'extra': r.get('extra') or {},
                'internal_info': r.get('internal_info') or {},
                'properties': r.get('properties') or {},
                'standalone_ports_supported':
                    r.get('standalone_ports_supported') is not False,
                'dynamic_portgroup': bool(r.get('dynamic_portgroup'))}
    return extra


RES = resource.Resource(
    project_scope='node',
    name='portgroups', singular='portgroup', rows=db_portgroups.ROWS,
    fields=FIELDS, list_fields=('uuid', 'address', 'name'),
    field_versions=versions.PORTGROUP_FIELDS,
    readonly=frozenset(('uuid', 'created_at', 'updated_at', 'links',
                        'internal_info', 'ports', 'dynamic_portgroup')),
    sort_keys=frozenset(('id', 'uuid', 'address', 'name', 'created_at',
                         'updated_at', 'mode', 'physical_network',
                         'category', 'dynamic_portgroup')),
    derive=_derive, sub_links=('ports',), body_schema=pg_schema.BODY)


def _check(req, values: dict, uuid: str | None = None) -> dict:
    """Values to store; ``uuid``: the portgroup a PATCH changes."""
    out = {}
    for k, v in values.items():
        if k == 'address':
            address = mac_address.normalized(v)
            if v is not None and address is None:
                raise exception.InvalidParameterValue(
                    err='Expected a MAC address but received %r.' % (v,))
            out[k] = address
        elif k == 'name':
            if v is not None and (not isinstance(v, str) or
                                  not _NAME_RE.match(v) or
                                  db_rows.is_uuid_like(v)):
                raise exception.InvalidParameterValue(
                    err="Cannot create portgroup with invalid name '%s'"
                    % v if uuid is None else "Portgroup %s: Cannot change "
                    "name to invalid name '%s'" % (uuid, v))
            out[k] = v
        elif k in ('extra', 'properties'):
            if v is not None and not isinstance(v, dict):
                raise exception.InvalidParameterValue(
                    err='%s must be a JSON object' % k)
            out[k] = v or {}
        elif k == 'standalone_ports_supported':
            out[k] = True if v is None else patching.to_bool(k, v)
        elif k == 'physical_network':
            out[k] = port_physnets.check_value(v)
        elif k == 'category':
            out[k] = ports.check_text(k, v)
        elif k == 'mode':
            if v is not None and not isinstance(v, str):
                raise exception.InvalidParameterValue(
                    err='mode must be a string')
            out[k] = v
        elif k == 'node_uuid':
            # a group moved to another node: allowed there too
            out['node_id'] = resource.node_id_for(
                v, req=req, rules=('baremetal:portgroup:update',)
                if uuid else ())
        elif k == 'uuid':
            if not db_rows.is_uuid_like(v):
                raise exception.InvalidUUID(uuid=v)
            out[k] = v
    return out


def _filters(req) -> list:
    p = req.params
    out = []
    if 'shard' in p and not req.allows(versions.PORTGROUP_SHARD):
        raise exception.NotAcceptable(
            reason='the shard filter needs API version 1.%d or later'
            % versions.PORTGROUP_SHARD)
    shards = [s for s in p.get('shard', '').split(',') if s]
    groups = ports.conductor_groups(req)
    # as Ironic: one of these filters at a time
    if sum(1 for f in (p.get('node'), p.get('address'), shards, groups)
           if f) > 1:
        raise exception.InvalidParameterValue(
            err='Filtering by node, address, shard or conductor_groups '
                'simultaneously is not supported.')
    if shards:
        out.append(db_portgroups.on_nodes_in_shards(shards))
    if groups:
        out.append(db_portgroups.on_nodes_in_groups(groups))
    if p.get('node'):
        out.append(db_portgroups.on_node(nodes.get_row(
            req, p['node'], ('id', 'uuid', 'owner', 'lessee'))['id']))
    if p.get('address'):
        out.append(db_portgroups.with_address(p['address'].lower()))
    return out


@route('GET', '/v1/portgroups', min_version=versions.PORTGROUPS)
def list_portgroups(req):
    return RES.list(req, _filters(req))


@route('GET', '/v1/portgroups/detail', min_version=versions.PORTGROUPS)
def list_portgroups_detail(req):
    return RES.list(req, _filters(req), detail=True,
                    path='portgroups/detail')


@route('GET', '/v1/nodes/{node}/portgroups',
       min_version=versions.PORTGROUP_SUBCONTROLLERS)
def node_portgroups(req, node):
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return RES.list(req, [db_portgroups.on_node(row['id'])],
                    path='nodes/%s/portgroups' % node)


@route('GET', '/v1/nodes/{node}/portgroups/detail',
       min_version=versions.PORTGROUP_SUBCONTROLLERS)
def node_portgroups_detail(req, node):
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return RES.list(req, [db_portgroups.on_node(row['id'])], detail=True,
                    path='nodes/%s/portgroups/detail' % node)


@route('GET', '/v1/portgroups/{pg}', min_version=versions.PORTGROUPS)
def get_portgroup(req, pg):
    return RES.show(req, pg)


@route('POST', '/v1/portgroups', status=201,
       min_version=versions.PORTGROUPS)
def create_portgroup(req):
    policy.authorize(req, 'baremetal:portgroup:create')
    body = req.json_object()
    RES.check_body(req, body, CREATE)
    if 'node_uuid' not in body:
        raise exception.MissingParameterValue(err='"node_uuid" is required')
    values = _check(req, body)
    with notify.crud(req, 'portgroup', 'create', values, _derive) as n:
        row = n.done(db_portgroups.ROWS.create(values))
    return RES.created(req, row)


@route('PATCH', '/v1/portgroups/{pg}', min_version=versions.PORTGROUPS)
def patch_portgroup(req, pg):
    policy.authorize(req, 'baremetal:portgroup:update')
    row = RES.get_row(req, pg)
    changes = RES.patched(req, row, mandatory=('node_uuid',))
    if changes:
        values = _check(req, changes, row['uuid'])
        with notify.crud(req, 'portgroup', 'update', dict(row, **values),
                         _derive) as n:
            db_portgroups.ROWS.update(row['id'], values)
            if 'physical_network' in values:
                port_physnets.set_for_group(row['id'],
                                            values['physical_network'])
            row = n.done(RES.get_row(req, row['uuid']))
    return RES.view(req, row)


@route('DELETE', '/v1/portgroups/{pg}', status=204,
       min_version=versions.PORTGROUPS)
def delete_portgroup(req, pg):
    policy.authorize(req, 'baremetal:portgroup:delete')
    row = RES.get_row(req, pg)
    if db_ports.count_in_portgroup(row['id']):
        raise exception.InvalidState(
            reason='Port group %s still has ports; remove them from it '
                   'first' % row['uuid'])
    with notify.crud(req, 'portgroup', 'delete', row, _derive):
        db_portgroups.ROWS.delete(row['id'])
