"""A node's history (API 1.78): every error the service records on a
node (its ``last_error``) becomes an event an operator can list later,
after ``last_error`` itself has been cleared by the next action."""

import uuid as uuidlib

from oslo_context import context as oslo_context

from baremetal.common import states
from baremetal.db import history as db_history
from baremetal.db import rows as db_rows

# the kind of work a node in this state was doing (Ironic's event types)
_EVENT_TYPES = {
    states.VERIFYING: 'verification', states.ENROLL: 'verification',
    states.INSPECTING: 'inspection', states.INSPECTWAIT: 'inspection',
    states.INSPECTFAIL: 'inspection',
    states.CLEANING: 'cleaning', states.CLEANWAIT: 'cleaning',
    states.CLEANFAIL: 'cleaning',
    states.DEPLOYING: 'deployment', states.DEPLOYWAIT: 'deployment',
    states.DEPLOYFAIL: 'deployment',
    states.DELETING: 'undeploy', states.ERROR: 'undeploy',
    states.RESCUING: 'rescue', states.RESCUEWAIT: 'rescue',
    states.RESCUEFAIL: 'rescue', states.UNRESCUING: 'unrescue',
    states.UNRESCUEFAIL: 'unrescue', states.ADOPTING: 'adoption',
    states.ADOPTFAIL: 'adoption',
}


def event_type(provision_state: str | None) -> str:
    return _EVENT_TYPES.get(provision_state, 'provisioning')


def _who() -> dict:
    """The user and project of the request being served, when this
    thread serves one (oslo.context's current context)."""
    ctx = oslo_context.get_current()
    return {'user': getattr(ctx, 'user_id', None),
            'project': getattr(ctx, 'project_id', None)}


def _where(node_data: dict) -> dict:
    """The node's provision state and target when the event happened,
    and the seconds since the state last changed (API 1.115)."""
    since = node_data.get('provision_updated_at')
    duration = None
    if since is not None:
        duration = max(0, int((db_rows.utcnow() - since).total_seconds()))
    return {'state': node_data.get('provision_state'),
            'target_provision_state': node_data.get(
                'target_provision_state'),
            'duration_seconds': duration}


def _record(node_data: dict, event_type: str, severity: str, event: str,
            conductor: str | None, user: str | None = None) -> None:
    now = db_rows.utcnow()
    row = {'uuid': str(uuidlib.uuid4()), 'node_id': node_data['id'],
           'conductor': conductor, 'event_type': event_type,
           'severity': severity, 'event': event,
           'created_at': now, 'updated_at': now}
    row.update(_who())
    if user is not None:
        row['user'] = user
    row.update(_where(node_data))
    db_history.add(row)


def record_error(node_data: dict, error: str, conductor: str | None = None,
                 user: str | None = None) -> None:
    """An error on the node (what became its ``last_error``)."""
    _record(node_data, event_type(node_data.get('provision_state')),
            'ERROR', error, conductor, user)


def record_event(node_data: dict, event_type: str, event: str,
                 conductor: str | None = None) -> None:
    """A note that is no error (e.g. a health change, event type
    'monitoring')."""
    _record(node_data, event_type, 'INFO', event, conductor)


def record_changes(node_data: dict, changes: dict,
                   conductor: str | None = None) -> None:
    """What a save of ``changes`` means for the history: a new error."""
    error = changes.get('last_error')
    if error:
        record_error(node_data, str(error), conductor)
