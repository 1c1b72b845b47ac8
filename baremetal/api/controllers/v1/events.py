"""/v1/events (1.54): notifications from the network service."""

from oslo_log import log

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.common import exception

LOG = log.getLogger(__name__)

_NETWORK_EVENTS = ('network.bind_port', 'network.unbind_port',
                   'network.delete_port')
_FIELDS = {'event', 'port_id', 'mac_address', 'status', 'device_id',
           'binding:host_id', 'binding:vnic_type'}


def _check(i: int, ev) -> None:
    if not isinstance(ev, dict):
        raise exception.InvalidParameterValue(
            err='events[%d] must be an object' % i)
    if ev.get('event') not in _NETWORK_EVENTS:
        raise exception.InvalidParameterValue(
            err='events[%d]: unknown event %r; valid: %s'
            % (i, ev.get('event'), ', '.join(_NETWORK_EVENTS)))
    bad = set(ev) - _FIELDS
    if bad:
        raise exception.InvalidParameterValue(
            err='events[%d]: unknown field(s) %s'
            % (i, ', '.join(sorted(bad))))
    for key in ('port_id', 'mac_address', 'status'):
        if not isinstance(ev.get(key), str) or not ev[key]:
            raise exception.InvalidParameterValue(
                err='events[%d]: "%s" must be a non-empty string'
                % (i, key))


@route('POST', '/v1/events', status=204, min_version=versions.EVENTS)
def post_events(req):
    policy.authorize(req, 'baremetal:events:create')
    body = req.json_object()
    events = body.get('events')
    if set(body) != {'events'} or not isinstance(events, list) or \
            not events:
        raise exception.InvalidParameterValue(
            err='The body must be {"events": [...]} with at least one '
                'event')
    for i, ev in enumerate(events):
        _check(i, ev)
    for ev in events:
        LOG.info('Network event %s for port %s (%s): %s', ev['event'],
                 ev['port_id'], ev['mac_address'], ev['status'])
    return None
