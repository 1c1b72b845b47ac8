"""Per-node actions: validate, maintenance, management, VIFs, traits,
BIOS, vendor passthru, clean steps."""


from baremetal.api import collection
from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.api.schemas import traits as trait_schema
from baremetal.common import exception
from baremetal.common import traits
from baremetal.common import states
from baremetal.db import bios as db_bios
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits

_MAX_TRAITS = 50


@route('GET', '/v1/nodes/{node}/validate')
def validate(req, node):
    policy.authorize(req, 'baremetal:node:validate')
    row = nodes.get_row(req, node)
    result = state.RPC.node_call(req.context, row,
                                 'validate_driver_interfaces')
    # as Ironic: every interface but vendor at every version; a reason
    # only where the result is false
    out = {}
    for it, r in sorted(result.items()):
        if it == 'vendor':
            continue
        out[it] = {'result': r['result']}
        if not r['result']:
            out[it]['reason'] = r.get('reason')
    return out


@route('PUT', '/v1/nodes/{node}/maintenance', status=202)
def set_maintenance(req, node):
    policy.authorize(req, 'baremetal:node:set_maintenance')
    body = req.json_object(optional=True)
    reason = body.get('reason')
    if reason is not None and not isinstance(reason, str):
        raise exception.InvalidParameterValue(err='reason must be a string')
    obj = nodes.get_node(req, node)
    obj.maintenance = True
    obj.maintenance_reason = reason
    with notify.crud(req, 'node', 'maintenance_set', obj):
        obj.save_unlocked(state.CONF)
    return None


@route('DELETE', '/v1/nodes/{node}/maintenance', status=202)
def clear_maintenance(req, node):
    policy.authorize(req, 'baremetal:node:clear_maintenance')
    obj = nodes.get_node(req, node)
    obj.maintenance = False
    obj.maintenance_reason = None
    obj.fault = None
    with notify.crud(req, 'node', 'maintenance_set', obj):
        obj.save_unlocked(state.CONF)
    return None


@route('GET', '/v1/nodes/{node}/management/boot_device')
def get_boot_device(req, node):
    policy.authorize(req, 'baremetal:node:get_boot_device')
    row = nodes.get_row(req, node)
    return state.RPC.node_call(req.context, row, 'get_boot_device')


@route('PUT', '/v1/nodes/{node}/management/boot_device', status=204)
def set_boot_device(req, node):
    policy.authorize(req, 'baremetal:node:set_boot_device')
    p = req.params
    body = req.json_object(optional=True)
    device = body.get('boot_device', p.get('boot_device'))
    persistent = collection.parse_bool(
        'persistent', body.get('persistent', p.get('persistent'))) or False
    if device not in states.BOOT_DEVICES:
        raise exception.InvalidParameterValue(
            err='Invalid boot device %r; valid: %s'
            % (device, ', '.join(states.BOOT_DEVICES)))
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'set_boot_device', device=device,
                        persistent=persistent)
    return None


@route('GET', '/v1/nodes/{node}/management/boot_device/supported')
def supported_boot_devices(req, node):
    policy.authorize(req, 'baremetal:node:get_supported_boot_devices')
    row = nodes.get_row(req, node)
    return {'supported_boot_devices': state.RPC.node_call(
        req.context, row, 'get_supported_boot_devices')}


@route('PUT', '/v1/nodes/{node}/management/inject_nmi', status=204,
       min_version=versions.INJECT_NMI)
def inject_nmi(req, node):
    policy.authorize(req, 'baremetal:node:inject_nmi')
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'inject_nmi')
    return None


# ------------------------------------------------------------------ VIFs
@route('GET', '/v1/nodes/{node}/vifs', min_version=versions.VIFS)
def list_vifs(req, node):
    policy.authorize(req, 'baremetal:node:vif:list')
    row = nodes.get_row(req, node)
    return {'vifs': state.RPC.node_call(req.context, row, 'vif_list')}


@route('POST', '/v1/nodes/{node}/vifs', status=204,
       min_version=versions.VIFS)
def attach_vif(req, node):
    policy.authorize(req, 'baremetal:node:vif:attach')
    body = req.json_object()
    if not isinstance(body.get('id'), str) or not body['id']:
        raise exception.MissingParameterValue(
            err='VIF "id" (a string) is required')
    given = [k for k in ('port_uuid', 'portgroup_uuid') if k in body]
    if given and not req.allows(versions.VIF_PORT_UUID):
        raise exception.NotAcceptable(
            reason='%s needs API version 1.67 or later' % given[0])
    if len(given) > 1:
        raise exception.InvalidParameterValue(
            err='Cannot specify both port_uuid and portgroup_uuid')
    for k in given:
        if not db_rows.is_uuid_like(body[k]):
            raise exception.InvalidUUID(uuid=body[k])
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'vif_attach', vif_info=body)
    return None


@route('DELETE', '/v1/nodes/{node}/vifs/{vif}', status=204,
       min_version=versions.VIFS)
def detach_vif(req, node, vif):
    policy.authorize(req, 'baremetal:node:vif:detach')
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'vif_detach', vif_id=vif)
    return None


# ---------------------------------------------------------------- traits
def _check_trait(trait) -> None:
    if not traits.is_valid(trait):
        raise exception.InvalidParameterValue(err=traits.describe(trait))


@route('GET', '/v1/nodes/{node}/traits', min_version=versions.TRAITS)
def list_traits(req, node):
    policy.authorize(req, 'baremetal:node:traits:list')
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return {'traits': db_traits.traits_for_nodes([row['id']]).get(
        row['id'], [])}


def _locked_check(row) -> None:
    """409 when another task holds the node, after waiting a little
    for it to finish (as every API update does)."""
    if row.get('reservation'):
        nodes.unlocked_row(row['id'])


@route('PUT', '/v1/nodes/{node}/traits', status=204,
       min_version=versions.TRAITS)
def set_traits(req, node):
    policy.authorize(req, 'baremetal:node:traits:set')
    body = req.json_object()
    trait_schema.check_body(body)
    wanted = body.get('traits')
    if not isinstance(wanted, list):
        raise exception.InvalidParameterValue(
            err='"traits" must be a list')
    for t in wanted:
        _check_trait(t)
    if len(set(wanted)) > _MAX_TRAITS:
        raise exception.InvalidParameterValue(
            err='A node may have at most %d traits' % _MAX_TRAITS)
    row = nodes.get_row(req, node)
    _locked_check(row)
    with notify.crud(req, 'node', 'update', row):
        db_traits.set_node_traits(row['id'], wanted)
    return None


@route('PUT', '/v1/nodes/{node}/traits/{trait}', status=204,
       min_version=versions.TRAITS)
def add_trait(req, node, trait):
    policy.authorize(req, 'baremetal:node:traits:set')
    trait_schema.check_trait(trait)
    row = nodes.get_row(req, node)
    _locked_check(row)
    have = db_traits.traits_for_nodes([row['id']]).get(row['id'], [])
    if trait not in have and len(have) >= _MAX_TRAITS:
        raise exception.InvalidParameterValue(
            err='A node may have at most %d traits' % _MAX_TRAITS)
    with notify.crud(req, 'node', 'update', row):
        db_traits.add_node_trait(row['id'], trait)
    req.response_headers['Location'] = req.link('nodes', row['uuid'],
                                                'traits', trait)['href']
    return None


@route('DELETE', '/v1/nodes/{node}/traits', status=204,
       min_version=versions.TRAITS)
def delete_traits(req, node):
    policy.authorize(req, 'baremetal:node:traits:delete')
    row = nodes.get_row(req, node)
    _locked_check(row)
    with notify.crud(req, 'node', 'update', row):
        db_traits.set_node_traits(row['id'], [])
    return None


@route('DELETE', '/v1/nodes/{node}/traits/{trait}', status=204,
       min_version=versions.TRAITS)
def delete_trait(req, node, trait):
    policy.authorize(req, 'baremetal:node:traits:delete')
    row = nodes.get_row(req, node)
    _locked_check(row)
    with notify.crud(req, 'node', 'update', row):
        if not db_traits.delete_node_trait(row['id'], trait):
            raise exception.NodeTraitNotFound(node_id=row['uuid'],
                                              trait=trait)
    return None


# ------------------------------------------------------------------ BIOS
_BIOS_FIELDS = ('name', 'value') + db_bios.BIOS_REGISTRY_FIELDS + (
    'created_at', 'updated_at')


def _bios_view(req, node_uuid: str, s: dict, fields) -> dict:
    out = {f: (node_view.iso(s[f]) if f.endswith('_at') else s[f])
           for f in fields}
    out['links'] = req.links('nodes', node_uuid, 'bios', s['name'])
    return out


def _bios_fields(req, detail: bool) -> tuple:
    """From 1.74 a list shows name and value unless ?detail=True or
    ?fields= asks for the registry too; one setting shows everything."""
    if not req.allows(versions.BIOS_REGISTRY):
        if 'detail' in req.params or 'fields' in req.params:
            raise exception.NotAcceptable(
                reason='detail and fields on BIOS settings need API '
                       'version 1.74 or later')
        return ('name', 'value', 'created_at', 'updated_at')
    if req.params.get('fields'):
        if detail:
            raise exception.InvalidParameterValue(
                err=collection.DETAIL_AND_FIELDS)
        wanted = [f for f in req.params['fields'].split(',') if f]
        bad = [f for f in wanted if f not in _BIOS_FIELDS]
        if bad:
            raise exception.InvalidParameterValue(
                err='Field(s) %s are not valid for BIOS settings'
                % ', '.join(bad))
        return tuple(wanted)
    return _BIOS_FIELDS if detail else ('name', 'value')


@route('GET', '/v1/nodes/{node}/bios', min_version=versions.BIOS)
def list_bios(req, node):
    policy.authorize(req, 'baremetal:node:bios:get')
    detail = collection.parse_bool('detail', req.params.get('detail'))
    fields = _bios_fields(req, bool(detail))
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return {'bios': [_bios_view(req, row['uuid'], s, fields)
                     for s in db_bios.bios_settings(row['id'])]}


@route('GET', '/v1/nodes/{node}/bios/{name}', min_version=versions.BIOS)
def get_bios(req, node, name):
    policy.authorize(req, 'baremetal:node:bios:get')
    fields = (_BIOS_FIELDS if req.allows(versions.BIOS_REGISTRY)
              else ('name', 'value', 'created_at', 'updated_at'))
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    for s in db_bios.bios_settings(row['id']):
        if s['name'] == name:
            return {name: _bios_view(req, row['uuid'], s, fields)}
    raise exception.ResourceNotFound(
        'BIOS setting %s of node %s could not be found' % (name,
                                                          row['uuid']))


# -------------------------------------------------------- vendor passthru
@route('GET', '/v1/nodes/{node}/vendor_passthru/methods')
def vendor_methods(req, node):
    policy.authorize(req, 'baremetal:node:vendor_passthru')
    row = nodes.get_row(req, node)
    return state.RPC.node_call(req.context, row,
                               'get_vendor_passthru_methods')


def _passthru(req, node, method=None):
    """``vendor_passthru?method=M`` or ``vendor_passthru/M`` (both are
    Ironic's: python-ironicclient uses the second)."""
    policy.authorize(req, 'baremetal:node:vendor_passthru')
    method = method or req.params.get('method')
    if not method:
        raise exception.MissingParameterValue(
            err='Method not specified')
    row = nodes.get_row(req, node)
    # the method's keyword arguments: an object, or no body at all
    info = req.json_object(optional=True)
    return state.RPC.node_call(req.context, row, 'vendor_passthru',
                               vendor_method=method, http_method=req.method,
                               info=info)


for _m in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE'):
    route(_m, '/v1/nodes/{node}/vendor_passthru')(_passthru)
    route(_m, '/v1/nodes/{node}/vendor_passthru/{method}')(_passthru)


# ------------------------------------------------------------ clean steps
@route('GET', '/v1/nodes/{node}/cleaning/steps',
       min_version=versions.MANUAL_CLEAN)
def clean_steps(req, node):
    policy.authorize(req, 'baremetal:node:clean_steps:get')
    minp = collection.parse_int('min_priority',
                                req.params.get('min_priority'), 0)
    row = nodes.get_row(req, node)
    try:
        steps = state.RPC.node_call(req.context, row, 'get_clean_steps',
                                    min_priority=minp)
    except exception.StepsNotReady as e:
        # Ironic's cleaning spec: 202 and when to ask again (-1: unknown)
        req.status = 202
        retry = e.kwargs.get('retry_after', -1)
        req.response_headers['Retry-Request-After'] = str(retry)
        return {'message': e.message}
    return {'steps': steps}
