"""GET /events: the change feed of nodes, as JSON pages or as a stream of
Server-Sent Events.

At the root, outside /v1: no microversion applies, and /v1/events stays
Ironic's (notifications from the network service, POST only).
"""

import urllib.parse

from baremetal.api import event_feed
from baremetal.api import policy
from baremetal.api import state as api_state
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import events as db_events
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

_FILTERS = {'node': 36, 'resource_class': 80, 'conductor_group': 255,
            'owner': 255}
_PARAMS = frozenset(_FILTERS) | {'since', 'limit'}


def _int(name: str, value: str, minimum: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = None
    if n is None or n < minimum or not value.strip().isdigit():
        raise exception.InvalidParameterValue(
            err='%s must be an integer of at least %d, not "%s"'
            % (name, minimum, value))
    return n


def _since(req) -> int:
    """Where to start: the Last-Event-ID a reconnecting stream sends
    (it wins over the URL's ``since``, which an EventSource repeats)."""
    header = req.raw.headers.get('Last-Event-ID')
    if header is not None and header.strip():
        since = _int('Last-Event-ID', header.strip(), 0)
    elif 'since' in req.params:
        since = _int('since', req.params['since'], 0)
    else:
        return db_events.last_id() if _wants_stream(req) else 0
    newest = db_events.last_id()
    if since > newest:
        raise exception.InvalidParameterValue(
            err='event %d does not exist yet: the newest event id is %d'
            % (since, newest))
    return since


def _filters(req) -> dict:
    params = req.params
    unknown = sorted(set(params) - _PARAMS)
    if unknown:
        raise exception.InvalidParameterValue(
            err='unknown parameter(s) %s; GET /events takes %s'
            % (', '.join(unknown), ', '.join(sorted(_PARAMS))))
    out = {}
    for name, longest in _FILTERS.items():
        values = params.getall(name)
        if not values:
            continue
        if len(values) > 1:
            raise exception.InvalidParameterValue(
                err='%s may be given once' % name)
        value = values[0]
        if not value or len(value) > longest or \
                not value.isprintable():
            raise exception.InvalidParameterValue(
                err='%s must be 1 to %d printable characters, not "%s"'
                % (name, longest, value[:300]))
        out[name] = value
    node = out.pop('node', None)
    if node is not None:
        if db_rows.is_uuid_like(node):
            out['node_uuid'] = node.lower()
        else:
            try:
                out['node_uuid'] = db_nodes.get_node(node, ('uuid',))['uuid']
            except exception.NodeNotFound:
                raise exception.InvalidParameterValue(
                    err='node "%s" is neither a UUID nor the name of a '
                        'node' % node) from None
    if 'conductor_group' in out:
        out['conductor_group'] = out['conductor_group'].lower()
    project = policy.events_project(req)
    if project is not None:
        out['project'] = project
    return out


def _wants_stream(req) -> bool:
    accept = req.raw.environ.get('baremetal.accept') or ''
    return 'text/event-stream' in accept


@route('GET', '/events')
def get_events(req):
    """The change feed of nodes (JSON pages, or Server-Sent Events)."""
    policy.authorize(req, 'baremetal:events:get')
    conf = api_state.CONF
    filters = _filters(req)
    stream = _wants_stream(req)
    limit = conf.events.default_limit
    if 'limit' in req.params:
        # (a stream has no pages: checked all the same)
        limit = _int('limit', req.params['limit'], 1)
    limit = min(limit, conf.api.max_limit)
    since = _since(req)
    if stream:
        req.status = 200
        req.response_headers.update({'Cache-Control': 'no-cache',
                                     'X-Accel-Buffering': 'no'})
        return event_feed.Stream(
            event_feed.feed(conf), event_feed.streams(conf), since,
            filters, conf.events.keepalive_interval)
    rows = db_events.after(since, limit, **filters)
    last = rows[-1]['id'] if rows else since
    query = [(k, v) for k, v in req.params.items()
             if k not in ('since', 'limit')]
    query += [('since', str(last)), ('limit', str(limit))]
    return {'events': [event_feed.render(r) for r in rows],
            'next': '%s/events?%s' % (req.host_url,
                                      urllib.parse.urlencode(query))}
