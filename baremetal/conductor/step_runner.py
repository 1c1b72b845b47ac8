"""Runs a plan of steps for any kind (cleaning, deployment).

A workflow declares a ``StepKind``: the node field showing the current
step, the wait state, and what to do when all steps are done or one
fails.  The plan and the position live in ``driver_internal_info``; the
node is saved before each step starts, so a conductor taking the node
over later knows where it was.
"""

import dataclasses
import time
from collections.abc import Callable

from oslo_log import log

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import states
from baremetal.common import step_timings
from baremetal.conductor import bios
from baremetal.conductor import firmware

LOG = log.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StepKind:
    name: str                       # 'clean' or 'deploy'
    wait_state: str                 # CLEANWAIT / DEPLOYWAIT
    on_done: Callable               # on_done(task)
    on_fail: Callable               # on_fail(task, message, step)
    # replan(task): called when the ramdisk the plan waited for (index
    # -1) is up, to plan with the steps its agent now reports
    replan: Callable | None = None
    # [conductor] option: seconds the node may stay in the wait state
    timeout_option: str | None = None
    # abort_after(task): the step that just finished was flagged
    # ``abort_after`` (an abort came while it could not be stopped)
    abort_after: Callable | None = None
    # on_done does work a lost conductor may leave half done (cleaning's
    # tear down powers the ramdisk off): the end of the steps is saved
    # first (the index one past the last step), so that the conductor
    # taking the node over finishes instead of running the last step
    # again against a ramdisk that is gone
    saves_end: bool = False
    # may_run_again(step): the step the node was at when its conductor was
    # lost may run again with the conductor taking it over
    # (conductor/takeover.py); otherwise the node fails
    may_run_again: Callable = lambda step: False

    @property
    def step_field(self) -> str:
        return '%s_step' % self.name

    @property
    def steps_key(self) -> str:
        return '%s_steps' % self.name

    @property
    def index_key(self) -> str:
        return '%s_step_index' % self.name


def set_plan(task, kind: StepKind, plan: list[dict]) -> None:
    info = task.node.driver_internal_info
    info[kind.steps_key] = plan
    info[kind.index_key] = None
    setattr(task.node, kind.step_field, {})


def clear_plan(task, kind: StepKind) -> None:
    info = task.node.driver_internal_info
    info.pop(kind.steps_key, None)
    info.pop(kind.index_key, None)
    agent_tokens.command_ended(info)
    setattr(task.node, kind.step_field, {})


def run(task, kind: StepKind, start: int = 0) -> None:
    """Run the plan from index ``start``; returns when done, failed or
    waiting.  Called in a worker holding the node's lock."""
    node = task.node
    info = node.driver_internal_info
    plan = info.get(kind.steps_key) or []
    for index in range(start, len(plan)):
        step = plan[index]
        info[kind.index_key] = index
        setattr(node, kind.step_field, step)
        # the step before may have waited on an agent command: over now
        # (a step that sends one records it)
        agent_tokens.command_ended(info)
        step_timings.step_started(info, kind.name, index, step)
        node.save()
        if step['step'] in RESERVED_STEPS:
            if not _run_reserved(task, kind, step):
                return      # failed, held or waiting
            step_timings.step_finished(info, kind.name)
            continue
        iface = task.driver.interfaces.get(step['interface'])
        name = '%s.%s' % (step['interface'], step['step'])
        LOG.debug('Node %s: %s step %s starting', node.uuid, kind.name,
                  name)
        metrics.step_started(node.uuid, kind.name, step)
        try:
            execute = getattr(iface, 'execute_%s_step' % kind.name)
            result = execute(task, step)
        except Exception as e:
            metrics.step_ended(node.uuid, kind.name, step, failed=True)
            if not isinstance(e, exception.BaremetalException):
                LOG.exception('Node %s: %s step %s raised', node.uuid,
                              kind.name, name)
            msg = ('%s step %s failed on node %s: %s'
                   % (kind.name.capitalize(), name, node.uuid, e))
            kind.on_fail(task, msg, step)
            return
        if result == kind.wait_state:
            LOG.info('Node %s: %s step %s continues asynchronously',
                     node.uuid, kind.name, name)
            task.process_event('wait')
            if getattr(iface, 'polls_steps', False):
                # look soon, then less often (conductor/step_polling.py)
                task.conductor.step_poller.watch(node.uuid,
                                                 kind.wait_state, step)
            return
        metrics.step_ended(node.uuid, kind.name, step,
                           failed=result is not None)
        if result is not None:
            msg = ('%s step %s on node %s returned %r; expected None or '
                   '%r' % (kind.name, name, node.uuid, result,
                           kind.wait_state))
            kind.on_fail(task, msg, step)
            return
        step_timings.step_finished(info, kind.name)
        _after_step(task, step)
    if kind.saves_end:
        info[kind.index_key] = len(plan)
        setattr(node, kind.step_field, {})
        node.save()
    finish(task, kind)


def finish(task, kind: StepKind) -> None:
    """Every step of the plan is done: what the kind does at its end."""
    clear_plan(task, kind)
    kind.on_done(task)


def ended(task, kind: StepKind) -> bool:
    """Whether the node's saved plan ran to its end (``saves_end``)."""
    info = task.node.driver_internal_info
    index = info.get(kind.index_key)
    return kind.steps_key in info and isinstance(index, int) and \
        index >= len(info[kind.steps_key] or [])


def resume(task, kind: StepKind, error: str | None = None) -> None:
    """The async step the node waited on finished: go on with the next
    one in a worker (``error``: it failed)."""
    node = task.node
    info = node.driver_internal_info
    index = info.get(kind.index_key)
    plan = info.get(kind.steps_key) or []
    step = plan[index] if index is not None and 0 <= index < len(plan) \
        else {}
    if step and not error:
        step_timings.step_finished(info, kind.name)
    task.process_event('resume')
    metrics.step_ended(node.uuid, kind.name, step, failed=bool(error))
    if error:
        if not step:
            kind.on_fail(task, 'Preparing %s of node %s failed: %s'
                         % (kind.name, node.uuid, error), {})
            return
        name = '%s.%s' % (step.get('interface'), step.get('step'))
        kind.on_fail(task, '%s step %s failed on node %s: %s'
                     % (kind.name.capitalize(), name, node.uuid, error),
                     step)
        return
    if index == -1 and kind.replan is not None:
        try:
            kind.replan(task)
        except Exception as e:
            kind.on_fail(task, 'Failed to plan the %s steps of node %s: '
                         '%s' % (kind.name, node.uuid, e), {})
            return
    _after_step(task, step)
    current = getattr(node, kind.step_field) or {}
    if kind.abort_after is not None and current.get('abort_after'):
        kind.abort_after(task)
        return
    task.spawn_after(run, kind, (index or 0) + 1)


def run_again(task, kind: StepKind) -> None:
    """The async step the node waits on is to run again from its start,
    in a worker."""
    task.process_event('resume')
    task.spawn_after(run, kind, task.node.driver_internal_info[
        kind.index_key])


# Steps the conductor runs itself, whatever interface they name (as
# Ironic's): power actions, 'hold' (park the node until unhold, API 1.85)
# and 'wait' (pause 'seconds', or until the agent's next heartbeat).
RESERVED_STEPS = ('power_on', 'power_off', 'reboot', 'hold', 'wait')


def _run_reserved(task, kind: StepKind, step: dict) -> bool:
    """True: go on with the next step."""
    node = task.node
    name = step['step']
    args = step.get('args') or {}
    try:
        if name == 'power_off' and node.disable_power_off:
            raise exception.PowerOffDisabled(pstate=states.POWER_OFF,
                                             node=node.uuid)
        if name in ('power_on', 'power_off', 'reboot'):
            task.power_action({'power_on': states.POWER_ON,
                               'power_off': states.POWER_OFF,
                               'reboot': states.REBOOT}[name])
    except Exception as e:
        kind.on_fail(task, '%s step %s.%s failed on node %s: %s'
                     % (kind.name.capitalize(), step['interface'], name,
                        node.uuid, e), step)
        return False
    if name == 'hold':
        LOG.info('Node %s: held by a %s step until unhold', node.uuid,
                 kind.name)
        task.process_event('hold')
        return False
    if name == 'wait':
        if 'seconds' not in args:
            task.process_event('wait')
            return False
        limit = task.conductor.conf.conductor.max_conductor_wait_step_seconds
        seconds = min(int(args['seconds']), limit)
        if seconds < int(args['seconds']):
            LOG.warning('Node %s: a wait step asked for %s seconds; '
                        '[conductor]max_conductor_wait_step_seconds allows '
                        '%d', node.uuid, args['seconds'], limit)
        time.sleep(seconds)
    return True


def check_reserved(kind: str, st: dict) -> dict:
    """A plan entry for a reserved step asked for by a user (400 on
    arguments it does not take)."""
    args = st.get('args') or {}
    allowed = {'seconds'} if st['step'] == 'wait' else set()
    bad = sorted(set(args) - allowed)
    if bad:
        raise exception.InvalidStepArgs(
            reason='%s step %s.%s takes %s; got %s'
            % (kind, st['interface'], st['step'],
               'only "seconds"' if allowed else 'no arguments',
               ', '.join(bad)))
    if 'seconds' in args and (not isinstance(args['seconds'], int) or
                              isinstance(args['seconds'], bool) or
                              args['seconds'] < 0):
        raise exception.InvalidStepArgs(
            reason='%s step %s.wait: "seconds" must be an integer >= 0'
            % (kind, st['interface']))
    return {'interface': st['interface'], 'step': st['step'],
            'priority': st.get('priority', 0), 'args': dict(args),
            'abortable': True}


def _after_step(task, step: dict) -> None:
    if step.get('interface') == 'bios':
        # a BIOS step changed the settings: store what the BMC now says
        bios.cache(task)
    elif step.get('interface') == 'firmware':
        firmware.cache(task)


def current_step(task, kind: StepKind) -> dict:
    info = task.node.driver_internal_info
    index = info.get(kind.index_key)
    plan = info.get(kind.steps_key) or []
    if index is None or not 0 <= index < len(plan):
        # -1: waiting for the agent before the steps are planned
        return {}
    return plan[index]
