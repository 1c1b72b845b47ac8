"""The conductor's node notifications (Ironic's ironic-conductor ones).

``baremetal.node.provision_set.*`` for every provision state
transition, ``power_set.*`` for a requested power change,
``power_state_corrected.success`` when the power sync finds the machine
in another state than recorded, ``console_set.*`` when a console starts
or stops.

A notification about a change the task is about to save waits on the
task (``task._notes``) until the change is stored, so that a consumer
reading the node on receipt sees it: ``flush`` runs where the task
writes the node (task_manager.py).  A task that ends without saving
drops them.  Callers check ``notifications.ON`` first: with
notifications off nothing here runs.
"""

from typing import Any

from oslo_log import log

from baremetal.common import notifications
from baremetal.common import states
from baremetal.db import traits as db_traits
from baremetal.objects import payloads

LOG = log.getLogger(__name__)

# Ironic's "unstable" states: work runs in them without a request
UNSTABLE_STATES = frozenset((
    states.DEPLOYING, states.DEPLOYWAIT, states.CLEANING, states.CLEANWAIT,
    states.VERIFYING, states.DELETING, states.INSPECTING,
    states.INSPECTWAIT, states.ADOPTING, states.RESCUING,
    states.RESCUEWAIT, states.UNRESCUING, states.SERVICING,
    states.SERVICEWAIT))

_ERROR_EVENTS = frozenset(('fail', 'error'))


def provision_status(event: str, before: str | None, after: str
                     ) -> tuple[str, str]:
    """(status, level) of a provision_set notification, Ironic's rule:
    error for a fail/error event, start when work begins (a stable state
    to an unstable one), end when it ends, success otherwise."""
    if event in _ERROR_EVENTS:
        return 'error', 'error'
    was, now = before in UNSTABLE_STATES, after in UNSTABLE_STATES
    if now and not was:
        return 'start', 'info'
    if was and not now:
        return 'end', 'info'
    return 'success', 'info'


def send(task, payload_name: str, action: str, status: str, level: str,
         row: dict | None = None, **extra: Any) -> None:
    """Build and queue one node notification now; never raises."""
    if not notifications.wanted(level):
        return
    try:
        if row is None:
            row = task.node.as_dict()
        traits = db_traits.traits_for_nodes([row['id']]).get(row['id'], [])
        payload = payloads.node(payload_name, row, traits, **extra)
        notifications.emit(notifications.CONDUCTOR,
                           payloads.event_type('node', action, status),
                           level, payload, task.context)
    except Exception:
        LOG.exception('Node %s: could not build notification '
                      'baremetal.node.%s.%s', task.node.uuid, action,
                      status)


def _defer(task, *note: Any, state_before: dict | None = None,
           **extra: Any) -> None:
    """Keep a notification until the task saves the node.  Notes still
    waiting take the node as it is now (before this change, for a
    provision change: ``state_before`` put back)."""
    notes = task._notes
    if notes is None:
        notes = task._notes = []
    if notes:
        before = dict(task.node.as_dict(), **(state_before or {}))
        for n in notes:
            if n[4] is None:
                n[4] = before
    notes.append([*note, None, extra])


def provision_changed(task, event: str) -> None:
    """After ``task.process_event``: a provision_set notification, sent
    once the transition is saved."""
    before = task.state_before or {}
    prev = before.get('provision_state')
    status, level = provision_status(event, prev,
                                     task.node.provision_state)
    if not notifications.wanted(level):
        return
    _defer(task, 'NodeSetProvisionStatePayload', 'provision_set', status,
           level, state_before=before, event=event,
           previous_provision_state=prev,
           previous_target_provision_state=before.get(
               'target_provision_state'))


def power_set(task, status: str, to_power: str) -> None:
    """power_set.start now (the change begins); end or error once the
    result is saved."""
    level = 'error' if status == 'error' else 'info'
    if status == 'start':
        send(task, 'NodeSetPowerStatePayload', 'power_set', status, level,
             to_power=to_power)
    elif notifications.wanted(level):
        _defer(task, 'NodeSetPowerStatePayload', 'power_set', status,
               level, to_power=to_power)


def power_corrected(task, from_power: str | None) -> None:
    """The power sync recorded another power state than the node had."""
    if notifications.wanted('info'):
        _defer(task, 'NodeCorrectedPowerStatePayload',
               'power_state_corrected', 'success', 'info',
               from_power=from_power)


class console_set:   # noqa: N801 (used as a statement: with ...)
    """``with notify.console_set(task):`` around starting or stopping a
    console: start on entry, error if it raises, end once saved."""

    def __init__(self, task) -> None:
        self.task = task

    def __enter__(self) -> None:
        send(self.task, 'NodePayload', 'console_set', 'start', 'info')

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            send(self.task, 'NodePayload', 'console_set', 'error',
                 'error')
        elif notifications.wanted('info'):
            _defer(self.task, 'NodePayload', 'console_set', 'end', 'info')


def flush(task, saved: bool = True) -> None:
    """The task stored the node (or, ``saved`` False, gave its changes
    up): send what waited for it, in order."""
    notes, task._notes = task._notes, None
    if not saved or not notes:
        return
    for name, action, status, level, row, extra in notes:
        send(task, name, action, status, level, row, **extra)
