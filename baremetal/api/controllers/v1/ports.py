"""/v1/ports, and ports under /v1/nodes/{node} and /v1/portgroups/{pg}."""

import re

from baremetal.api import patching
from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.controllers.v1 import port_physnets
from baremetal.api.routing import route
from baremetal.api.schemas import ports as port_schema
from baremetal.common import exception
from baremetal.common import mac_address
from baremetal.db import portgroups as db_portgroups
from baremetal.db import ports as db_ports
from baremetal.db import rows as db_rows


FIELDS = ('uuid', 'address', 'node_uuid', 'portgroup_uuid', 'extra',
          'internal_info', 'local_link_connection', 'pxe_enabled',
          'physical_network', 'is_smartnic', 'name', 'description',
          'vendor', 'category', 'available_for_dynamic_portgroup',
          'created_at', 'updated_at')
CREATE = {'uuid', 'address', 'node_uuid', 'portgroup_uuid', 'extra',
          'local_link_connection', 'pxe_enabled', 'physical_network',
          'is_smartnic', 'name', 'node_ident', 'description', 'vendor',
          'category', 'available_for_dynamic_portgroup'}
# free-text fields (1.97, 1.100, 1.101): null or up to so many characters
_TEXT = {'description': 255, 'vendor': 32, 'category': 80}
# local_link_connection keys: always, and from the version given
_LLC_KEYS = {'switch_id': 1, 'port_id': 1, 'switch_info': 1, 'hostname': 1,
             'network_type': versions.LOCAL_LINK_NETWORK_TYPE,
             'vtep-logical-switch': versions.OVN_VTEP,
             'vtep-physical-switch': versions.OVN_VTEP}
# the OVN VTEP keys exist only in API 1.90 to 1.104
_VTEP = ('vtep-logical-switch', 'vtep-physical-switch')
_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~:]{1,255}$')


def _derive(rows):
    nodes_by_id = resource.node_uuid_map(rows)
    pg_ids = {r['portgroup_id'] for r in rows if r.get('portgroup_id')}
    pgs = db_portgroups.uuids_by_id(pg_ids) if pg_ids else {}

    def extra(r):
        return {'node_uuid': nodes_by_id.get(r.get('node_id')),
                'portgroup_uuid': pgs.get(r.get('portgroup_id')),
                'extra': r.get('extra') or {},
                'internal_info': r.get('internal_info') or {},
                'local_link_connection':
                    r.get('local_link_connection') or {},
                'pxe_enabled': True if r.get('pxe_enabled') is None
                else r['pxe_enabled'],
                'is_smartnic': bool(r.get('is_smartnic')),
                'available_for_dynamic_portgroup':
                    r.get('available_for_dynamic_portgroup') is not False}
    return extra


def _vtep_allowed(version: int) -> bool:
    return versions.OVN_VTEP <= version < versions.NO_OVN_VTEP


def _adjust(version: int, values: dict) -> None:
    # as Ironic: outside 1.90-1.104 a link with VTEP keys shows as empty
    llc = values.get('local_link_connection')
    if llc and not _vtep_allowed(version) and any(k in llc for k in _VTEP):
        values['local_link_connection'] = {}


RES = resource.Resource(
    project_scope='node',
    name='ports', singular='port', rows=db_ports.ROWS, fields=FIELDS,
    list_fields=('uuid', 'address'),
    field_versions=versions.PORT_FIELDS,
    ident_label='port', ident_names=True,
    readonly=frozenset(('uuid', 'created_at', 'updated_at', 'links',
                        'internal_info')),
    sort_keys=frozenset(('id', 'uuid', 'address', 'created_at',
                         'updated_at', 'pxe_enabled', 'physical_network',
                         'description', 'vendor', 'category',
                         'available_for_dynamic_portgroup')),
    derive=_derive, adjust=_adjust, body_schema=port_schema.BODY)


def _check_llc(req, llc: dict, smartnic: bool) -> None:
    """Ironic's local_link_connection rules: known keys (some from a
    version on), string values, and the keys a managed link needs."""
    if any(k in llc for k in _VTEP) and not _vtep_allowed(req.version):
        raise exception.NotAcceptable(
            reason='local_link_connection keys %s are accepted only by API '
                   'versions 1.%d to 1.%d' % (' and '.join(_VTEP),
                                              versions.OVN_VTEP,
                                              versions.NO_OVN_VTEP - 1))
    for k, v in llc.items():
        minv = _LLC_KEYS.get(k)
        if minv is None or not req.allows(minv):
            raise exception.InvalidParameterValue(
                err='local_link_connection has an unknown key %r%s'
                % (k, '' if minv is None else
                   ' (API version 1.%d or later)' % minv))
        if not isinstance(v, str):
            raise exception.InvalidParameterValue(
                err='local_link_connection %s must be a string' % k)
    if not llc:
        return
    net = llc.get('network_type', 'managed')
    if net not in ('managed', 'unmanaged'):
        raise exception.InvalidParameterValue(
            err='local_link_connection network_type must be managed or '
                'unmanaged, got %r' % net)
    if net == 'unmanaged':
        return
    if any(k in llc for k in _VTEP):
        need = ('port_id',) + _VTEP
    elif smartnic:
        need = ('port_id', 'hostname')
    else:
        need = ('port_id', 'switch_id')
    missing = [k for k in need if k not in llc]
    if missing:
        raise exception.InvalidParameterValue(
            err='local_link_connection needs %s (has %s)'
            % (', '.join(need), ', '.join(sorted(llc)) or 'none'))


def _check_newer(k: str, v):
    """description, vendor, category (1.97, 1.100, 1.101) and
    available_for_dynamic_portgroup (1.111)."""
    if k == 'available_for_dynamic_portgroup':
        # JSON true or false (null: removed, back to the default)
        if v is not None and not isinstance(v, bool):
            raise exception.InvalidParameterValue(
                err='available_for_dynamic_portgroup must be true or '
                    'false, got %r' % (v,))
        return v is not False
    return check_text(k, v)


def check_text(k: str, v):
    """A free-text field of ports and port groups: null, or a string
    of at most ``_TEXT[k]`` characters."""
    if v is not None and (not isinstance(v, str) or len(v) > _TEXT[k]):
        raise exception.InvalidParameterValue(
            err='%s must be a string of at most %d characters'
            % (k, _TEXT[k]))
    return v


def _check_values(req, values: dict, smartnic: bool = False,
                  move_rules=()) -> dict:
    out = {}
    for k, v in values.items():
        if k == 'address':
            address = mac_address.normalized(v)
            if address is None:
                raise exception.InvalidParameterValue(
                    err='Expected a MAC address but received %r.' % (v,))
            out[k] = address
        elif k == 'extra':
            out[k] = resource.extra_of(v)
        elif k == 'local_link_connection':
            if v is not None and not isinstance(v, dict):
                raise exception.InvalidParameterValue(
                    err='local_link_connection must be a JSON object')
            _check_llc(req, v or {}, smartnic)
            out[k] = v or {}
        elif k in ('pxe_enabled', 'is_smartnic'):
            if v is not None:
                v = patching.to_bool(k, v)
            out[k] = bool(v) if k == 'is_smartnic' else (
                True if v is None else v)
        elif k == 'node_uuid':
            out['node_id'] = resource.node_id_for(v, req=req,
                                                  rules=move_rules)
        elif k == 'node_ident':
            # a node's UUID or name (API 1.94)
            out['node_id'] = nodes.get_row(
                req, v if isinstance(v, str) else '', ('id', 'uuid', 'owner',
                                                       'lessee'))['id']
        elif k == 'name':
            if v is not None and (not isinstance(v, str) or
                                  not _NAME_RE.match(v) or
                                  db_rows.is_uuid_like(v)):
                raise exception.InvalidParameterValue(
                    err='Invalid port name %r: up to 255 letters, digits '
                        'and -._~: (and not a UUID)' % (v,))
            out[k] = v
        elif k == 'portgroup_uuid':
            if v is None:
                out['portgroup_id'] = None
            else:
                out['portgroup_id'] = db_portgroups.ROWS.get(v)['id']
        elif k == 'physical_network':
            out[k] = port_physnets.check_value(v)
        elif k in _TEXT or k == 'available_for_dynamic_portgroup':
            out[k] = _check_newer(k, v)
        elif k == 'uuid':
            if not db_rows.is_uuid_like(v):
                raise exception.InvalidUUID(uuid=v)
            out[k] = v
    return out


def conductor_groups(req) -> list[str]:
    """``?conductor_groups=a,b`` (repeatable; API 1.99): the groups of
    the nodes whose ports or port groups to list."""
    raw = req.params.getall('conductor_groups')
    if raw and not req.allows(versions.PORT_CONDUCTOR_GROUP):
        raise exception.NotAcceptable(
            reason='the conductor_groups filter needs API version 1.%d or '
                   'later' % versions.PORT_CONDUCTOR_GROUP)
    return [g.strip() for v in raw for g in v.split(',') if g.strip()]


def _filters(req) -> list:
    p = req.params
    out = []
    groups = conductor_groups(req)
    if groups:
        if any(p.get(k) for k in ('node', 'node_uuid', 'portgroup',
                                  'address')):
            raise exception.InvalidParameterValue(
                err='Filtering by conductor_groups cannot be combined with '
                    'the node, portgroup or address filters')
        out.append(db_ports.on_nodes_in_groups(groups))
    if 'description_contains' in p:
        if not req.allows(versions.PORT_DESCRIPTION):
            raise exception.NotAcceptable(
                reason='the description_contains filter needs API version '
                       '1.%d or later' % versions.PORT_DESCRIPTION)
        if p['description_contains']:
            out.append(db_ports.description_contains(
                p['description_contains']))
    node = p.get('node') or p.get('node_uuid')
    if node:
        out.append(db_ports.on_node(nodes.get_row(
            req, node, ('id', 'uuid', 'owner', 'lessee'))['id']))
    if p.get('address'):
        out.append(db_ports.with_address(p['address'].lower()))
    if 'shard' in p:
        if not req.allows(versions.SHARDS):
            raise exception.NotAcceptable(
                reason='shard filter needs API version 1.82 or later')
        shards = [s for s in p['shard'].split(',') if s]
        out.append(db_ports.on_nodes_in_shards(shards))
    if p.get('portgroup'):
        if not req.allows(versions.PORTGROUP_SUBCONTROLLERS):
            raise exception.NotAcceptable(
                reason='portgroup filter needs API version 1.24')
        out.append(db_ports.in_portgroup(
            db_portgroups.ROWS.get(p['portgroup'])['id']))
    return out


@route('GET', '/v1/ports')
def list_ports(req):
    return RES.list(req, _filters(req))


@route('GET', '/v1/ports/detail')
def list_ports_detail(req):
    return RES.list(req, _filters(req), detail=True, path='ports/detail')


@route('GET', '/v1/nodes/{node}/ports')
def node_ports(req, node):
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return RES.list(req, [db_ports.on_node(row['id'])],
                    path='nodes/%s/ports' % node)


@route('GET', '/v1/nodes/{node}/ports/detail')
def node_ports_detail(req, node):
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return RES.list(req, [db_ports.on_node(row['id'])], detail=True,
                    path='nodes/%s/ports/detail' % node)


@route('GET', '/v1/portgroups/{pg}/ports',
       min_version=versions.PORTGROUP_SUBCONTROLLERS)
def portgroup_ports(req, pg):
    row = db_portgroups.ROWS.get(pg)
    return RES.list(req, [db_ports.in_portgroup(row['id'])],
                    path='portgroups/%s/ports' % pg)


@route('GET', '/v1/portgroups/{pg}/ports/detail',
       min_version=versions.PORTGROUP_SUBCONTROLLERS)
def portgroup_ports_detail(req, pg):
    row = db_portgroups.ROWS.get(pg)
    return RES.list(req, [db_ports.in_portgroup(row['id'])], detail=True,
                    path='portgroups/%s/ports/detail' % pg)


@route('GET', '/v1/ports/{port}')
def get_port(req, port):
    return RES.show(req, port)


@route('POST', '/v1/ports', status=201)
def create_port(req):
    policy.authorize(req, 'baremetal:port:create')
    body = req.json_object()
    if 'node_ident' in body and not req.allows(versions.PORT_NODE_NAME):
        raise exception.NotAcceptable(
            reason='node_ident needs API version 1.94 or later')
    RES.check_body(req, body, CREATE)
    if 'node_uuid' in body and 'node_ident' in body:
        raise exception.InvalidParameterValue(
            err='Give the node as node_uuid or node_ident, not both')
    if 'address' not in body or ('node_uuid' not in body and
                                 'node_ident' not in body):
        raise exception.MissingParameterValue(
            err='"address" and "node_uuid" (or, from API 1.94, '
                '"node_ident") are required')
    values = _check_values(req, body, bool(body.get('is_smartnic')))
    if values.get('portgroup_id'):
        port_physnets.check_member(values['portgroup_id'],
                                   values.get('physical_network'))
    with notify.crud(req, 'port', 'create', values, _derive) as n:
        row = n.done(db_ports.ROWS.create(values))
    return RES.created(req, row)


@route('PATCH', '/v1/ports/{port}')
def patch_port(req, port):
    policy.authorize(req, 'baremetal:port:update')
    row = RES.get_row(req, port)
    changes = RES.patched(req, row, mandatory=('address', 'node_uuid'))
    if changes:
        smartnic = changes.get('is_smartnic', row.get('is_smartnic'))
        values = _check_values(req, changes, bool(smartnic),
                               move_rules=('baremetal:port:update',))
        _check_physnet_change(req, row, values)
        with notify.crud(req, 'port', 'update',
                         dict(row, **values), _derive) as n:
            db_ports.ROWS.update(row['id'], values)
            row = n.done(db_ports.ROWS.get(row['id'], shown_as=port))
    return RES.view(req, row)


def _check_physnet_change(req, row: dict, values: dict) -> None:
    """A member port keeps its group's physical network; from API 1.102
    only the group changes it."""
    group = values.get('portgroup_id', row.get('portgroup_id'))
    if not group or not {'portgroup_id', 'physical_network'} & set(values):
        return
    if 'physical_network' in values and \
            req.allows(versions.PORTGROUP_PHYSICAL_NETWORK):
        raise exception.InvalidParameterValue(
            err='physical_network cannot be changed while the port belongs '
                'to a portgroup; change the portgroup\'s physical_network '
                'instead')
    port_physnets.check_member(
        group, values.get('physical_network', row.get('physical_network')),
        row['id'])


@route('DELETE', '/v1/ports/{port}', status=204)
def delete_port(req, port):
    RES.delete(req, port)

