"""/v1/nodes/{node}/management/indicators (API 1.63): the LEDs and
other indicators of a node's components, as ``<name>@<component>``."""

from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.common import exception

STATES = ('OFF', 'ON', 'BLINKING', 'UNKNOWN')
BASE = '/v1/nodes/{node}/management/indicators'


def _split(ident: str) -> tuple[str, str]:
    """``led@system`` -> ('system', 'led')."""
    name, sep, component = ident.rpartition('@')
    if not sep or not name or not component:
        raise exception.InvalidParameterValue(
            err='Malformed indicator name "%s": expected '
                '<indicator>@<component>' % ident)
    return component, name


@route('GET', BASE, min_version=versions.INDICATORS)
def list_indicators(req, node):
    policy.authorize(req, 'baremetal:node:get_indicator_state')
    row = nodes.get_row(req, node)
    found = state.RPC.node_call(req.context, row, 'get_supported_indicators')
    out = []
    for component, names in sorted(found.items()):
        for name, info in sorted(names.items()):
            ident = '%s@%s' % (name, component)
            out.append({
                'name': ident, 'component': component,
                'readonly': info.get('readonly', True),
                'states': info.get('states', []),
                'links': req.links('nodes', row['uuid'], 'management',
                                   'indicators', ident)})
    return {'indicators': out}


@route('GET', BASE + '/{indicator}', min_version=versions.INDICATORS)
def get_indicator(req, node, indicator):
    policy.authorize(req, 'baremetal:node:get_indicator_state')
    component, name = _split(indicator)
    row = nodes.get_row(req, node)
    return {'state': state.RPC.node_call(
        req.context, row, 'get_indicator_state', component=component,
        indicator=name)}


@route('PUT', BASE + '/{indicator}', status=204,
       min_version=versions.INDICATORS)
def set_indicator(req, node, indicator):
    policy.authorize(req, 'baremetal:node:set_indicator_state')
    component, name = _split(indicator)
    body = req.json_object(optional=True)
    value = body.get('state', req.params.get('state'))
    if value not in STATES[:3]:
        raise exception.InvalidParameterValue(
            err='Invalid indicator state %r; valid: %s'
            % (value, ', '.join(STATES[:3])))
    row = nodes.get_row(req, node)
    state.RPC.node_call(req.context, row, 'set_indicator_state',
                        component=component, indicator=name, state=value)
    return None
