"""/v1/nodes/{node}/history (API 1.78): the errors recorded on a node,
oldest first, kept after ``last_error`` is cleared."""

from baremetal.api import collection
from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import history as db_history

_LIST_FIELDS = ('uuid', 'created_at', 'severity', 'event')
_ALL_FIELDS = ('uuid', 'created_at', 'severity', 'event', 'event_type',
               'conductor', 'user', 'project', 'state',
               'target_provision_state', 'duration_seconds')
# detail fields newer than the history itself
_FIELD_VERSIONS = {
    'project': versions.NODE_HISTORY_PROJECT,
    'state': versions.NODE_HISTORY_FIELDS,
    'target_provision_state': versions.NODE_HISTORY_FIELDS,
    'duration_seconds': versions.NODE_HISTORY_FIELDS,
}
# a listed event's text is cut to this many characters (as Ironic)
_SHORT_EVENT = 255


def _detail_fields(req) -> tuple:
    return tuple(f for f in _ALL_FIELDS
                 if req.allows(_FIELD_VERSIONS.get(f, 0)))


def _view(req, node_uuid: str, row: dict, fields) -> dict:
    out = {f: (node_view.iso(row[f]) if f == 'created_at' else row[f])
           for f in fields}
    if fields is _LIST_FIELDS and len(out['event'] or '') > _SHORT_EVENT:
        # the short list cuts long texts (as Ironic); detail has them whole
        out['event'] = out['event'][:_SHORT_EVENT - 4] + '...'
    out['links'] = req.links('nodes', node_uuid, 'history', row['uuid'])
    return out


@route('GET', '/v1/nodes/{node}/history', min_version=versions.NODE_HISTORY)
def list_history(req, node):
    policy.authorize(req, 'baremetal:node:history:get')
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    detail = collection.parse_bool('detail', req.params.get('detail'))
    limit = collection.limit(req)
    marker = None
    if req.params.get('marker'):
        marker = db_history.marker(req.params['marker'])
        if marker is None:
            raise exception.ResourceNotFound(
                'History event %s could not be found'
                % req.params['marker'])
    events = db_history.events_of_node(row['id'], limit, marker)
    fields = _detail_fields(req) if detail else _LIST_FIELDS
    out = {'history': [_view(req, row['uuid'], e, fields) for e in events]}
    out.update(collection.next_link(
        req, 'nodes/%s/history' % row['uuid'], events, limit))
    return out


@route('GET', '/v1/nodes/{node}/history/{event}',
       min_version=versions.NODE_HISTORY)
def get_history_event(req, node, event):
    policy.authorize(req, 'baremetal:node:history:get')
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    found = db_history.event_of_node(row['id'], event)
    if found is None:
        raise exception.ResourceNotFound(
            'History event %s of node %s could not be found'
            % (event, row['uuid']))
    return _view(req, row['uuid'], found, _detail_fields(req))
