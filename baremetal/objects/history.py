"""A node's history (API 1.78): every error the service records on a
node (its ``last_error``) becomes an event an operator can list later,
after ``last_error`` itself has been cleared by the next action."""

import uuid as uuidlib

from baremetal.common import states
from baremetal.db import api as db

HISTORY = db.T['node_history']

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


def record_error(node_id: int, provision_state: str | None, error: str,
                 conductor: str | None = None,
                 user: str | None = None) -> None:
    now = db.utcnow()
    db.create(HISTORY, {
        'uuid': str(uuidlib.uuid4()), 'node_id': node_id,
        'conductor': conductor, 'event_type': event_type(provision_state),
        'severity': 'ERROR', 'event': error, 'user': user,
        'created_at': now, 'updated_at': now})


def record_event(node_id: int, event_type: str, event: str,
                 conductor: str | None = None) -> None:
    """A note that is no error (e.g. a health change, event type
    'monitoring')."""
    now = db.utcnow()
    db.create(HISTORY, {
        'uuid': str(uuidlib.uuid4()), 'node_id': node_id,
        'conductor': conductor, 'event_type': event_type,
        'severity': 'INFO', 'event': event, 'user': None,
        'created_at': now, 'updated_at': now})


def record_changes(node_data: dict, changes: dict,
                   conductor: str | None = None) -> None:
    """What a save of ``changes`` means for the history: a new error."""
    error = changes.get('last_error')
    if error:
        record_error(node_data['id'], node_data.get('provision_state'),
                     str(error), conductor)
