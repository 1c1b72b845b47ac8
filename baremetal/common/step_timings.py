"""When a node's last cleaning, deployment and servicing, and each of
their steps, started and ended.

Kept in the node's ``driver_internal_info['step_timings']``, one record
per kind of work, replaced when that kind starts again::

    {"deploy": {"start": 1764085801.12, "end": 1764085809.5,
                "outcome": "done",
                "steps": [{"index": 0, "interface": "deploy",
                           "step": "deploy", "start": ..., "end": ...,
                           "outcome": "done"}, ...]}}

Times are seconds since the epoch (UTC), to the millisecond.  A record
begins when the node enters the kind's states (``cleaning``, ``clean
wait``, ``clean hold``, ...) and ends when it leaves them
(``on_transition``, from ``task.process_event``); a step's entry begins
and ends where the step runner starts and finishes it.  Nothing here
saves the node: the changes ride on the saves the workflows already make
(the step runner saves the node before each step, leaving a task saves
what changed).  A record holds at most ``MAX_STEPS`` step entries (the
oldest go first), so it stays small in the node's row.
"""

import time

from baremetal.common import states

KEY = 'step_timings'
MAX_STEPS = 30
KINDS = ('clean', 'deploy', 'service')

# the states a node is in while doing each kind of work
WORKING = {
    states.CLEANING: 'clean', states.CLEANWAIT: 'clean',
    states.CLEANHOLD: 'clean',
    states.DEPLOYING: 'deploy', states.DEPLOYWAIT: 'deploy',
    states.DEPLOYHOLD: 'deploy',
    states.SERVICING: 'service', states.SERVICEWAIT: 'service',
    states.SERVICEHOLD: 'service',
}
# the state each kind of work fails into
FAILED = {states.CLEANFAIL: 'clean', states.DEPLOYFAIL: 'deploy',
          states.SERVICEFAIL: 'service'}
HOLD_STATES = frozenset((states.CLEANHOLD, states.DEPLOYHOLD,
                         states.SERVICEHOLD))
WAIT_STATES = frozenset(states.STEP_WAIT_STATES.values())


def _now() -> float:
    return round(time.time(), 3)


def on_transition(info: dict, old: str | None, new: str | None,
                  event: str) -> None:
    """The node moves from ``old`` to ``new`` on ``event``: a kind of
    work it leaves ends (``aborted`` on abort, ``failed`` into its
    failure state, ``done`` otherwise); a kind it enters begins, with
    no plan yet (a plan left by an earlier, failed run is dropped)."""
    was = WORKING.get(old)
    kind = WORKING.get(new)
    if was == kind:
        return
    if was is not None:
        if event == 'abort':
            outcome = 'aborted'
        elif FAILED.get(new) == was:
            outcome = 'failed'
        else:
            outcome = 'done'
        finish(info, was, outcome)
    if kind is not None:
        info.pop('%s_steps' % kind, None)
        info.pop('%s_step_index' % kind, None)
        begin(info, kind)


def begin(info: dict, kind: str) -> dict:
    record = {'start': _now(), 'end': None, 'outcome': 'running',
              'steps': []}
    timings = info.get(KEY)
    if not isinstance(timings, dict):
        timings = info[KEY] = {}
    timings[kind] = record
    return record


def _record(info: dict, kind: str) -> dict | None:
    timings = info.get(KEY)
    if not isinstance(timings, dict):
        return None
    record = timings.get(kind)
    return record if isinstance(record, dict) else None


def step_started(info: dict, kind: str, index: int, step: dict) -> None:
    """Step ``index`` of the plan starts.  A step still shown running
    ends here: ``done`` (a held step the operator released), or
    ``interrupted`` when this is the same step started again (a
    conductor took the node over)."""
    record = _record(info, kind)
    if record is None or record.get('outcome') != 'running':
        # a node taken over mid-run from a release that kept no record
        record = begin(info, kind)
    now = _now()
    steps = record['steps']
    for entry in steps:
        if entry.get('outcome') == 'running':
            entry['end'] = now
            entry['outcome'] = ('interrupted' if entry.get('index') == index
                                else 'done')
    steps.append({'index': index, 'interface': step.get('interface'),
                  'step': step.get('step'), 'start': now, 'end': None,
                  'outcome': 'running'})
    if len(steps) > MAX_STEPS:
        del steps[:len(steps) - MAX_STEPS]


def step_finished(info: dict, kind: str) -> None:
    """The running step ended well."""
    record = _record(info, kind)
    if record is None:
        return
    for entry in record.get('steps') or ():
        if entry.get('outcome') == 'running':
            entry['end'] = _now()
            entry['outcome'] = 'done'


def finish(info: dict, kind: str, outcome: str) -> None:
    """The kind of work ended with ``outcome``; a step still running
    ends with it."""
    record = _record(info, kind)
    if record is None or record.get('outcome') != 'running':
        return
    now = _now()
    record['end'] = now
    record['outcome'] = outcome
    for entry in record.get('steps') or ():
        if entry.get('outcome') == 'running':
            entry['end'] = now
            entry['outcome'] = outcome


def records(info: dict) -> dict:
    """The records kept, by kind (empty ones left out)."""
    timings = info.get(KEY)
    if not isinstance(timings, dict):
        return {}
    return {k: timings[k] for k in KINDS
            if isinstance(timings.get(k), dict)}
