"""The API's notifications (Ironic's ironic-api ones): create, update
and delete of nodes, ports, port groups, chassis, allocations, deploy
templates, volume connectors and targets (and a node's traits: a node
update, as Ironic), and a node's maintenance_set.

``with notify.crud(req, 'port', 'update', row) as n:`` around the write
sends ``baremetal.port.update.start`` with ``row`` on entry,
``.error`` (at ERROR) if the block raises, and ``.end`` when it ends:
with the row given to ``n.done(row)``, else ``row`` again (a node
record saved in place shows its saved state).  A delete ends with what
it started with.  With notifications off ``crud`` returns one shared
do-nothing object.
"""

import uuid
from typing import Any

from oslo_log import log

from baremetal.common import notifications
from baremetal.db import chassis as db_chassis
from baremetal.db import traits as db_traits
from baremetal.objects import payloads

LOG = log.getLogger(__name__)


class _Off:
    __slots__ = ()

    def __enter__(self) -> '_Off':
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        return None

    @staticmethod
    def done(row: Any) -> Any:
        return row


_OFF = _Off()


def _node_payload(name: str, row: dict) -> dict:
    node_id = row.get('id')
    traits = (db_traits.traits_for_nodes([node_id]).get(node_id, [])
              if node_id else [])
    if name != 'NodeCRUDPayload':
        return payloads.node(name, row, traits)
    chassis_uuid = None
    if row.get('chassis_id'):
        chassis_uuid = db_chassis.ROWS.get(row['chassis_id'],
                                           ('uuid',))['uuid']
    return payloads.node(name, row, traits, chassis_uuid=chassis_uuid)


class _Crud:
    __slots__ = ('req', 'resource', 'action', 'derive', 'row', 'after',
                 'payload')

    def __init__(self, req, resource: str, action: str, row, derive
                 ) -> None:
        self.req = req
        self.resource = resource
        self.action = action
        self.derive = derive
        self.row = row
        self.after = None
        self.payload = None

    def _build(self, row) -> dict | None:
        try:
            if hasattr(row, 'as_dict'):
                row = row.as_dict()
            if self.resource == 'node':
                return _node_payload(
                    'NodePayload' if self.action == 'maintenance_set'
                    else 'NodeCRUDPayload', row)
            if self.derive is not None:
                row = dict(row, **self.derive([row])(row))
            return payloads.crud(self.resource, row)
        except Exception:
            LOG.exception('Could not build the payload of %s notification',
                          payloads.event_type(self.resource, self.action,
                                              '*'))
            return None

    def _send(self, status: str, level: str, payload) -> None:
        if payload is not None:
            notifications.emit(
                notifications.API,
                payloads.event_type(self.resource, self.action, status),
                level, payload, self.req.context)

    def __enter__(self) -> '_Crud':
        self.payload = self._build(self.row)
        self._send('start', 'info', self.payload)
        return self

    def done(self, row: Any) -> Any:
        """The row as written (what ``.end`` shows); returns it."""
        self.after = row
        return row

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            if notifications.wanted('error'):
                self._send('error', 'error', self.payload)
        elif notifications.wanted('info'):
            payload = self.payload if self.action == 'delete' else \
                self._build(self.row if self.after is None else self.after)
            self._send('end', 'info', payload)


def crud(req, resource: str, action: str, row, derive=None):
    """See the module's docstring.  ``row``: the row (or record) before
    the write, for a create the values to insert (given a UUID here if
    they have none, so that start and end name the same object);
    ``derive``: the resource's function adding its derived API fields
    (node_uuid, steps, ...)."""
    if not notifications.ON:
        return _OFF
    if action == 'create' and isinstance(row, dict) and not row.get('uuid'):
        row['uuid'] = str(uuid.uuid4())
    return _Crud(req, resource, action, row, derive)
