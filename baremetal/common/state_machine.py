"""The provision state machine, built with automaton from one table.

Every row is ``(source, event, target)``.  Stable states and the target
each transient state leads to are declared once below; everything else
(which verbs a state accepts, which states are "wait" states, ...) is
derived from the table.
"""


from automaton import machines

from baremetal.common import states as s

# state -> the stable state it aims at (None for stable states)
STATES = {
    s.ENROLL: None,
    s.VERIFYING: s.MANAGEABLE,
    s.MANAGEABLE: None,
    s.INSPECTING: s.MANAGEABLE,
    s.INSPECTWAIT: s.MANAGEABLE,
    s.INSPECTFAIL: s.MANAGEABLE,
    s.CLEANING: s.AVAILABLE,
    s.CLEANWAIT: s.AVAILABLE,
    s.CLEANFAIL: s.AVAILABLE,
    s.AVAILABLE: None,
    s.DEPLOYING: s.ACTIVE,
    s.DEPLOYWAIT: s.ACTIVE,
    s.DEPLOYFAIL: s.ACTIVE,
    s.ACTIVE: None,
    s.DELETING: s.AVAILABLE,
    s.ERROR: None,
    s.RESCUING: s.RESCUE,
    s.RESCUEWAIT: s.RESCUE,
    s.RESCUEFAIL: s.RESCUE,
    s.RESCUE: None,
    s.UNRESCUING: s.ACTIVE,
    s.UNRESCUEFAIL: s.ACTIVE,
    s.ADOPTING: s.ACTIVE,
    s.ADOPTFAIL: s.ACTIVE,
    s.CLEANHOLD: s.AVAILABLE,
    s.DEPLOYHOLD: s.ACTIVE,
    s.SERVICING: s.ACTIVE,
    s.SERVICEWAIT: s.ACTIVE,
    s.SERVICEFAIL: s.ACTIVE,
    s.SERVICEHOLD: s.ACTIVE,
}

# States where a node is at rest (not being worked on).  Failure states
# are at rest too: nothing runs until an operator acts.
STABLE_STATES = frozenset(k for k, v in STATES.items() if v is None)

TRANSITIONS = (
    # enrollment and verification
    (s.ENROLL, 'manage', s.VERIFYING),
    (s.VERIFYING, 'done', s.MANAGEABLE),
    (s.VERIFYING, 'fail', s.ENROLL),
    # inspection
    (s.MANAGEABLE, 'inspect', s.INSPECTING),
    (s.INSPECTING, 'done', s.MANAGEABLE),
    (s.INSPECTING, 'wait', s.INSPECTWAIT),
    (s.INSPECTING, 'fail', s.INSPECTFAIL),
    (s.INSPECTWAIT, 'done', s.MANAGEABLE),
    (s.INSPECTWAIT, 'fail', s.INSPECTFAIL),
    (s.INSPECTWAIT, 'abort', s.INSPECTFAIL),
    (s.INSPECTFAIL, 'manage', s.MANAGEABLE),
    (s.INSPECTFAIL, 'inspect', s.INSPECTING),
    # cleaning
    (s.MANAGEABLE, 'provide', s.CLEANING),
    (s.MANAGEABLE, 'clean', s.CLEANING),
    (s.CLEANING, 'done', s.AVAILABLE),
    (s.CLEANING, 'manage', s.MANAGEABLE),
    (s.CLEANING, 'wait', s.CLEANWAIT),
    (s.CLEANING, 'fail', s.CLEANFAIL),
    (s.CLEANWAIT, 'resume', s.CLEANING),
    (s.CLEANWAIT, 'fail', s.CLEANFAIL),
    (s.CLEANWAIT, 'abort', s.CLEANFAIL),
    (s.CLEANFAIL, 'manage', s.MANAGEABLE),
    (s.AVAILABLE, 'manage', s.MANAGEABLE),
    # deployment
    (s.AVAILABLE, 'deploy', s.DEPLOYING),
    (s.DEPLOYING, 'wait', s.DEPLOYWAIT),
    (s.DEPLOYING, 'done', s.ACTIVE),
    (s.DEPLOYING, 'fail', s.DEPLOYFAIL),
    (s.DEPLOYWAIT, 'resume', s.DEPLOYING),
    (s.DEPLOYWAIT, 'fail', s.DEPLOYFAIL),
    (s.DEPLOYWAIT, 'deleted', s.DELETING),
    (s.DEPLOYWAIT, 'abort', s.DEPLOYFAIL),      # API 1.110
    (s.DEPLOYFAIL, 'rebuild', s.DEPLOYING),
    (s.DEPLOYFAIL, 'deploy', s.DEPLOYING),
    (s.DEPLOYFAIL, 'deleted', s.DELETING),
    (s.ACTIVE, 'rebuild', s.DEPLOYING),
    (s.ACTIVE, 'deleted', s.DELETING),
    # tear down
    (s.DELETING, 'clean', s.CLEANING),
    (s.DELETING, 'error', s.ERROR),
    (s.ERROR, 'rebuild', s.DEPLOYING),
    (s.ERROR, 'deleted', s.DELETING),
    # adoption
    (s.MANAGEABLE, 'adopt', s.ADOPTING),
    (s.ADOPTING, 'done', s.ACTIVE),
    (s.ADOPTING, 'fail', s.ADOPTFAIL),
    (s.ADOPTFAIL, 'adopt', s.ADOPTING),
    (s.ADOPTFAIL, 'manage', s.MANAGEABLE),
    # rescue
    (s.ACTIVE, 'rescue', s.RESCUING),
    (s.RESCUING, 'wait', s.RESCUEWAIT),
    (s.RESCUING, 'done', s.RESCUE),
    (s.RESCUING, 'fail', s.RESCUEFAIL),
    (s.RESCUEWAIT, 'resume', s.RESCUING),
    (s.RESCUEWAIT, 'fail', s.RESCUEFAIL),
    (s.RESCUEWAIT, 'abort', s.RESCUEFAIL),
    (s.RESCUEWAIT, 'deleted', s.DELETING),
    (s.RESCUEFAIL, 'rescue', s.RESCUING),
    (s.RESCUEFAIL, 'unrescue', s.UNRESCUING),
    (s.RESCUEFAIL, 'deleted', s.DELETING),
    (s.RESCUE, 'rescue', s.RESCUING),
    (s.RESCUE, 'unrescue', s.UNRESCUING),
    (s.RESCUE, 'deleted', s.DELETING),
    (s.UNRESCUING, 'done', s.ACTIVE),
    (s.UNRESCUING, 'fail', s.UNRESCUEFAIL),
    (s.UNRESCUEFAIL, 'rescue', s.RESCUING),
    (s.UNRESCUEFAIL, 'unrescue', s.UNRESCUING),
    (s.UNRESCUEFAIL, 'deleted', s.DELETING),
    # holds: a 'hold' step parks the node until an operator says unhold
    # (API 1.85); unhold goes back to the wait state and on from there
    (s.CLEANING, 'hold', s.CLEANHOLD),
    (s.CLEANWAIT, 'hold', s.CLEANHOLD),
    (s.CLEANHOLD, 'unhold', s.CLEANWAIT),
    (s.CLEANHOLD, 'abort', s.CLEANFAIL),
    (s.DEPLOYING, 'hold', s.DEPLOYHOLD),
    (s.DEPLOYWAIT, 'hold', s.DEPLOYHOLD),
    (s.DEPLOYHOLD, 'unhold', s.DEPLOYWAIT),
    (s.DEPLOYHOLD, 'abort', s.DEPLOYFAIL),
    # servicing an active node with steps (API 1.87)
    (s.ACTIVE, 'service', s.SERVICING),
    (s.SERVICING, 'done', s.ACTIVE),
    (s.SERVICING, 'fail', s.SERVICEFAIL),
    (s.SERVICING, 'wait', s.SERVICEWAIT),
    (s.SERVICING, 'hold', s.SERVICEHOLD),
    (s.SERVICEWAIT, 'resume', s.SERVICING),
    (s.SERVICEWAIT, 'fail', s.SERVICEFAIL),
    (s.SERVICEWAIT, 'abort', s.SERVICEFAIL),
    (s.SERVICEWAIT, 'hold', s.SERVICEHOLD),
    (s.SERVICEHOLD, 'unhold', s.SERVICEWAIT),
    (s.SERVICEHOLD, 'service', s.SERVICING),
    (s.SERVICEHOLD, 'fail', s.SERVICEFAIL),
    (s.SERVICEHOLD, 'abort', s.SERVICEFAIL),
    (s.SERVICEFAIL, 'service', s.SERVICING),
    (s.SERVICEFAIL, 'rescue', s.RESCUING),
    (s.SERVICEFAIL, 'abort', s.ACTIVE),
)

# Internal events: the conductor raises them, API callers cannot.
INTERNAL_EVENTS = frozenset(('done', 'fail', 'wait', 'resume', 'error',
                             'hold'))
# Events that keep the node's target (manual cleaning aims at manageable)
KEEP_TARGET_EVENTS = INTERNAL_EVENTS | {'unhold'}

_EDGES: dict[str, dict[str, str]] = {}
for _src, _event, _dst in TRANSITIONS:
    _EDGES.setdefault(_src, {})[_event] = _dst

# Failure states: what a 'fail' event leads to.
FAIL_STATES = frozenset(
    dst for src, ev, dst in TRANSITIONS if ev == 'fail') - {s.ENROLL}
FAIL_STATES = FAIL_STATES | {s.ERROR}
# Wait states: what a 'wait' event leads to.
WAIT_STATES = frozenset(dst for src, ev, dst in TRANSITIONS if ev == 'wait')
# Hold states: what a 'hold' step leads to; nothing runs until unhold.
HOLD_STATES = frozenset(dst for src, ev, dst in TRANSITIONS if ev == 'hold')
# States where the conductor is actively working.
ACTIVE_STATES = frozenset(
    st for st, tgt in STATES.items()
    if tgt is not None and st not in FAIL_STATES and st not in WAIT_STATES
    and st not in HOLD_STATES)
# Node deletion is allowed only from these states.
DELETE_ALLOWED_STATES = frozenset(
    (s.MANAGEABLE, s.ENROLL, s.ADOPTFAIL, s.AVAILABLE))
# Updating a node (PATCH) during a state transition is allowed only in
# these states (Ironic's list); at rest it always is.
UPDATE_ALLOWED_STATES = frozenset(
    (s.DEPLOYFAIL, s.INSPECTING, s.INSPECTFAIL, s.INSPECTWAIT, s.CLEANFAIL,
     s.ERROR, s.VERIFYING, s.ADOPTFAIL, s.RESCUEFAIL, s.UNRESCUEFAIL,
     s.SERVICEHOLD, s.SERVICEFAIL))
# Power actions are refused while the conductor works on the node.
POWER_REFUSED_STATES = frozenset((s.CLEANING, s.CLEANWAIT))


def _build() -> machines.FiniteMachine:
    m = machines.FiniteMachine()
    for state in STATES:
        m.add_state(state)
    for src, event, dst in TRANSITIONS:
        m.add_transition(src, dst, event)
    m.freeze()
    return m


_MACHINE = _build()


def target_of(state: str) -> str | None:
    """The stable state a transient state is heading for."""
    return STATES.get(state)


def events_from(state: str) -> dict[str, str]:
    """Events (and where they lead) that ``state`` accepts."""
    return dict(_EDGES.get(state, {}))


def next_state(state: str, event: str) -> str | None:
    """Where ``event`` takes a node in ``state``; None if not allowed."""
    return _EDGES.get(state, {}).get(event)


def machine(initial: str) -> machines.FiniteMachine:
    """A private copy of the machine, positioned at ``initial``."""
    m = _MACHINE.copy(shallow=True)
    m.initialize(initial)
    return m
