"""/v1/lookup and /v1/heartbeat/{node} (1.22): the agent's endpoints.

An agent (ironic-python-agent) looks its node up by MAC address at boot;
from 1.62 the lookup hands it a secret token, issued once per boot, that
every heartbeat must carry (doc/source/admin/agent.rst).  A node is
looked up while a ramdisk boot is expected; with fast track
(common/fast_track.py) also between operations.
"""

import urllib.parse

from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.routing import route
from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import fast_track
from baremetal.common import inventory as ipa_inventory
from baremetal.common import metrics
from baremetal.common import states
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports

_LOOKUP_STATES = (states.DEPLOYWAIT, states.CLEANWAIT, states.RESCUEWAIT,
                  states.INSPECTWAIT, states.DEPLOYING, states.CLEANING,
                  states.RESCUING, states.SERVICEWAIT)

AGENT_STATUSES = ('start', 'end', 'error')

_NODE_FIELDS = ('uuid', 'properties', 'instance_info',
                'driver_internal_info')


def _may_look_up(row) -> bool:
    """A ramdisk boot's states; with fast track also those in which the
    agent stays up between operations.  A node's fast_track that is not
    a boolean is a 400 whatever its state, as in Ironic."""
    fast = fast_track.enabled_for(row['driver_info'], state.CONF,
                                  strict=True)
    st = row['provision_state']
    return st in _LOOKUP_STATES or (
        fast and st in fast_track.EXTRA_LOOKUP_STATES)


def _config(token: str | None) -> dict:
    conf = state.CONF
    out = {'heartbeat_timeout': conf.api.ramdisk_heartbeat_timeout,
           'agent_md5_checksum_enable': conf.agent.allow_md5_checksum}
    if token is not None:
        out['agent_token'] = token
        out['agent_token_required'] = True
    return out


@route('GET', '/v1/lookup', min_version=versions.LOOKUP_HEARTBEAT,
       public=True)
def lookup(req):
    with metrics.agent_lookup():
        return _lookup(req)


def _lookup(req):
    addresses = [a.strip().lower() for a in
                 (req.params.get('addresses') or '').split(',')
                 if a.strip()]
    node_uuid = req.params.get('node_uuid')
    if not addresses and not node_uuid:
        raise exception.InvalidParameterValue(
            err='One of "addresses" and "node_uuid" is required')
    row = None
    if node_uuid:
        row = db_nodes.get_node(node_uuid)
    else:
        ids = db_ports.node_ids_with_addresses(addresses)
        if len(ids) == 1:
            row = db_nodes.get_node(ids.pop())
    if row is None or not _may_look_up(row):
        # one answer whether the node is unknown or in the wrong state
        raise exception.NodeNotFound(node=node_uuid or ','.join(addresses))
    token = None
    if req.allows(versions.AGENT_TOKEN):
        info = row['driver_internal_info']
        timeout = state.CONF.rpc_response_timeout_api
        if agent_tokens.in_transit(info, timeout):
            # handed out, and no heartbeat yet: this may be the agent
            # again, its first answer lost (409: it looks up again)
            raise exception.AgentTokenInTransit(node=row['uuid'])
        if agent_tokens.issued(info) and not agent_tokens.lost_in_transit(
                info, timeout):
            # on the boot medium, or handed out already: answered from
            # the row, without the node's conductor or its lock, however
            # many hosts ask
            token = agent_tokens.MASK
        else:
            # network boot: the node's conductor issues it to the first
            # lookup of the boot (without waiting for a busy node's
            # lock), or again if no heartbeat ever carried the first
            token = state.RPC.node_call(req.context, row,
                                        'get_node_with_token')
            row = db_nodes.get_node(row['uuid'])
    node = node_view.render(req, row, _NODE_FIELDS, links=True)
    return {'node': node, 'config': _config(token)}


def _string(body: dict, name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise exception.InvalidParameterValue(
            err='%s must be a string, got %r' % (name, value))
    return value


def _gate(req, body: dict, names: tuple, minor: int) -> None:
    given = [n for n in names if body.get(n) is not None]
    if given and not req.allows(minor):
        raise exception.InvalidParameterValue(
            err='Field(s) %s not recognised in API version 1.%d; they '
                'need 1.%d or later' % (', '.join(given), req.version,
                                        minor))


@route('POST', '/v1/heartbeat', status=202,
       min_version=versions.LOOKUP_HEARTBEAT)
def heartbeat_by_body(req):
    """The node named in the body (``node_ident``), as Ironic takes it
    when the path does not name one (with credentials there: its public
    route is the one with the node in the path)."""
    node = _string(req.json_object(optional=True), 'node_ident')
    if not node:
        raise exception.MissingParameterValue(
            err='Missing mandatory parameter: node_ident')
    return heartbeat(req, node)


@route('POST', '/v1/heartbeat/{node}', status=202,
       min_version=versions.LOOKUP_HEARTBEAT, public=True)
def heartbeat(req, node):
    body = dict(req.json_object(optional=True))
    body.pop('node_ident', None)
    for name in ('callback_url', 'agent_version'):
        if name not in body and name in req.params:
            body[name] = req.params[name]
    fields = {n: _string(body, n) for n in (
        'callback_url', 'agent_version', 'agent_token', 'agent_verify_ca',
        'agent_status', 'agent_status_message')}
    if fields['agent_version'] is not None and \
            not req.allows(versions.AGENT_VERSION):
        raise exception.InvalidParameterValue(
            err='Field "agent_version" not recognised (API 1.36 or '
                'later)')
    _gate(req, fields, ('agent_verify_ca',), versions.AGENT_VERIFY_CA)
    _gate(req, fields, ('agent_status', 'agent_status_message'),
          versions.AGENT_STATUS)
    # the node first, as Ironic: an unknown node is 404 whatever the body
    row = db_nodes.get_node(node)
    url = fields['callback_url']
    if url:
        try:
            scheme = urllib.parse.urlsplit(url).scheme
        except ValueError:
            scheme = ''
        if scheme not in ('http', 'https'):
            raise exception.InvalidParameterValue(
                err='callback_url must be an http(s) URL, got %r' % url)
    status = fields['agent_status']
    if status is not None and status not in AGENT_STATUSES:
        raise exception.InvalidParameterValue(
            err='agent_status must be one of %s, got %r'
            % (', '.join(AGENT_STATUSES), status))
    if fields['agent_token'] is None:
        raise exception.AgentTokenInvalid(
            node=node, reason='a heartbeat must carry the agent_token '
                              'the agent got at lookup (API 1.62 or '
                              'later)')
    # a token that is not this boot's is refused from the row just read,
    # without a call to the conductor (which checks again under the
    # node's lock): an agent's last heartbeat often arrives after the
    # conductor tore its ramdisk down and wiped the token
    agent_tokens.check(row['uuid'], row['driver_internal_info'],
                       fields['agent_token'])
    state.RPC.node_call(req.context, row, 'heartbeat', **fields)
    metrics.agent_heartbeat(row['driver_internal_info'])
    return None


# ironic-python-agent posts the inventory without a version header, so
# at 1.1, which Ironic accepts here as ironic-inspector's API did; the
# versions between are 404 as for any resource newer than asked for
@route('POST', '/v1/continue_inspection', status=202, public=True)
def continue_inspection(req):
    """The agent's inventory, posted by in-band inspection (1.84): the
    node is found by its NICs' MAC addresses, or by ``node_uuid``.

    No credential and no agent token: the agent sends neither (nor does
    Ironic ask).  Only a node in ``inspect wait`` takes it, and the
    answer never carries a token."""
    node_uuid = req.params.get('node_uuid')
    if not req.allows(versions.CONTINUE_INSPECTION) and (
            req.version != versions.MIN or node_uuid):
        raise exception.ResourceNotFound(
            'The resource could not be found.')
    inventory, plugin_data = ipa_inventory.check_inventory(req.json())
    macs = ipa_inventory.macs_of(inventory)
    if not macs and not node_uuid:
        raise exception.InvalidParameterValue(
            err='No lookup information provided: the inventory lists no '
                'MAC address')
    row = None
    if node_uuid:
        row = db_nodes.get_node(node_uuid)
    else:
        ids = db_ports.node_ids_with_addresses(macs)
        if len(ids) == 1:
            row = db_nodes.get_node(ids.pop())
    if row is None or row['provision_state'] != states.INSPECTWAIT:
        # one answer whether the node is unknown or not being inspected
        raise exception.NodeNotFound(node=node_uuid or ','.join(macs))
    state.RPC.node_call(req.context, row, 'continue_inspection',
                        inventory=inventory, plugin_data=plugin_data)
    return {'uuid': row['uuid']}
