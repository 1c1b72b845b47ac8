"""/v1/drivers: hardware types the live conductors offer."""

from baremetal.api import collection
from baremetal.api import hardware
from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.common import exception


def _view(req, name: str, detail: bool) -> dict:
    out = {'name': name, 'hosts': hardware.hosts(name),
           'links': req.links('drivers', name)}
    if req.allows(versions.STATES_LINKS):
        out['properties'] = req.links('drivers', name, 'properties')
    if req.allows(versions.DYNAMIC_DRIVERS):
        out['type'] = 'dynamic'
        if detail:
            ifaces = hardware.hardware_types()[name]
            for it in hardware.INTERFACE_TYPES:
                if not req.allows(versions.INTERFACE_VERSIONS.get(
                        it, versions.MIN)):
                    continue
                names, default = ifaces.get(it, ([], None))
                out['default_%s_interface' % it] = default
                out['enabled_%s_interfaces' % it] = list(names)
    return out


def _select(req, views: list[dict]) -> list[dict]:
    """?fields= (API 1.77): only the fields asked for."""
    wanted = req.params.get('fields')
    if wanted is None:
        return views
    if not req.allows(versions.DRIVER_FIELDS):
        raise exception.NotAcceptable(
            reason='fields on drivers needs API version 1.77 or later')
    names = [f for f in wanted.split(',') if f]
    known = set().union(*(v.keys() for v in views)) if views else set()
    known |= {'name', 'hosts', 'type', 'links', 'properties'}
    bad = [f for f in names if f not in known]
    if bad:
        raise exception.InvalidParameterValue(
            err='Field(s) %s are not valid for drivers' % ', '.join(bad))
    # links come whatever the fields, as in Ironic
    return [{k: v[k] for k in names + ['links'] if k in v} for v in views]


@route('GET', '/v1/drivers')
def list_drivers(req):
    policy.authorize(req, 'baremetal:driver:get')
    dtype = req.params.get('type')
    if dtype is not None and dtype not in ('classic', 'dynamic'):
        raise exception.InvalidParameterValue(
            err='type must be "classic" or "dynamic", got %r' % dtype)
    detail = bool(collection.parse_bool('detail',
                                        req.params.get('detail')))
    names = [] if dtype == 'classic' else sorted(hardware.hardware_types())
    if detail and req.params.get('fields'):
        raise exception.InvalidParameterValue(
            err=collection.DETAIL_AND_FIELDS)
    return {'drivers': _select(req, [_view(req, n, detail or bool(
        req.params.get('fields'))) for n in names])}


def _known(name: str) -> None:
    if name not in hardware.hardware_types():
        raise exception.DriverNotFound(driver_name=name)


@route('GET', '/v1/drivers/{name}')
def get_driver(req, name):
    policy.authorize(req, 'baremetal:driver:get')
    _known(name)
    return _select(req, [_view(req, name, True)])[0]


@route('GET', '/v1/drivers/{name}/properties')
def properties(req, name):
    policy.authorize(req, 'baremetal:driver:get_properties')
    _known(name)
    return state.RPC.driver_call(req.context, name,
                                 'get_driver_properties')


@route('GET', '/v1/drivers/{name}/raid/logical_disk_properties',
       min_version=versions.RAID)
def raid_properties(req, name):
    policy.authorize(req, 'baremetal:driver:get_properties')
    _known(name)
    return state.RPC.driver_call(req.context, name,
                                 'get_raid_logical_disk_properties')


@route('GET', '/v1/drivers/{name}/vendor_passthru/methods')
def driver_vendor_methods(req, name):
    policy.authorize(req, 'baremetal:driver:vendor_passthru')
    _known(name)
    return {}


def _driver_passthru(req, name, method=None):
    """No in-tree hardware type has driver-level vendor methods."""
    policy.authorize(req, 'baremetal:driver:vendor_passthru')
    _known(name)
    method = method or req.params.get('method')
    if not method:
        raise exception.MissingParameterValue(err='Method not specified')
    raise exception.InvalidParameterValue(
        err='No handler for method %s' % method)


for _m in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE'):
    route(_m, '/v1/drivers/{name}/vendor_passthru')(_driver_passthru)
    route(_m, '/v1/drivers/{name}/vendor_passthru/{method}')(
        _driver_passthru)
