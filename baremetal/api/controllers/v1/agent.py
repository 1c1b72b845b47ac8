"""/v1/lookup and /v1/heartbeat/{node} (1.22): the agent's endpoints."""

from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import states
from baremetal.db import api as db

_LOOKUP_STATES = (states.DEPLOYWAIT, states.CLEANWAIT, states.RESCUEWAIT,
                  states.INSPECTWAIT, states.DEPLOYING, states.CLEANING,
                  states.RESCUING)


@route('GET', '/v1/lookup', min_version=versions.LOOKUP_HEARTBEAT,
       public=True)
def lookup(req):
    addresses = [a.strip().lower() for a in
                 (req.params.get('addresses') or '').split(',')
                 if a.strip()]
    node_uuid = req.params.get('node_uuid')
    if not addresses and not node_uuid:
        raise exception.InvalidParameterValue(
            err='One of "addresses" and "node_uuid" is required')
    row = None
    if node_uuid:
        row = db.get_node(node_uuid)
    else:
        ports = db.query(db.PORTS, (db.PORTS.c.address.in_(addresses),),
                         columns=('node_id',))
        ids = {p['node_id'] for p in ports}
        if len(ids) == 1:
            row = db.get_node(ids.pop())
    if row is None or row['provision_state'] not in _LOOKUP_STATES:
        raise exception.NodeNotFound(node=node_uuid or ','.join(addresses))
    fields = ('uuid', 'properties', 'instance_info',
              'driver_internal_info')
    node = node_view.render(req, row, fields, links=True)
    return {'node': node, 'config': {'heartbeat_timeout':
                                     state.CONF.conductor.heartbeat_timeout}}


@route('POST', '/v1/heartbeat/{node}', status=202,
       min_version=versions.LOOKUP_HEARTBEAT, public=True)
def heartbeat(req, node):
    body = req.json() or {}
    if not isinstance(body, dict):
        raise exception.InvalidParameterValue(
            err='the body must be a JSON object')
    callback_url = body.get('callback_url', req.params.get('callback_url'))
    agent_version = body.get('agent_version',
                             req.params.get('agent_version'))
    for name, value in (('callback_url', callback_url),
                        ('agent_version', agent_version)):
        if value is not None and not isinstance(value, str):
            raise exception.InvalidParameterValue(
                err='%s must be a string, got %r' % (name, value))
    if agent_version is not None and not req.allows(versions.AGENT_VERSION):
        raise exception.NotAcceptable(
            reason='agent_version needs API version 1.36 or later')
    row = db.get_node(node)
    state.RPC.node_call(req.context, row, 'heartbeat',
                        callback_url=callback_url,
                        agent_version=agent_version)
    return None
