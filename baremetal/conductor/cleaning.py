"""Cleaning: automated (provide, tear-down) and manual (verb 'clean')."""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.conductor import step_runner
from baremetal.conductor import steps as steps_mod

LOG = log.getLogger(__name__)


def _done(task) -> None:
    node = task.node
    manual = node.target_provision_state == states.MANAGEABLE
    try:
        if not node.driver_internal_info.get(NO_RAMDISK):
            task.driver.deploy.tear_down_cleaning(task)
    except Exception as e:
        _fail(task, 'Failed to tear down cleaning on node %s: %s'
              % (node.uuid, e), {})
        return
    node.driver_internal_info.pop(NO_RAMDISK, None)
    node.driver_internal_info.pop('cleaning_manual', None)
    node.driver_internal_info.pop(REQUESTED, None)
    if manual or node.retired:
        # a retired node never becomes schedulable again by itself
        task.process_event('manage')
    else:
        task.process_event('done')
    LOG.info('Node %s: cleaning finished, now %s', node.uuid,
             node.provision_state)


def _fail(task, message: str, step: dict) -> None:
    """Node -> CLEANFAIL, maintenance on with the reason; power is left
    as it is so the operator can look at the node."""
    node = task.node
    LOG.error('Node %s: %s', node.uuid, message)
    node.last_error = message
    node.maintenance = True
    node.maintenance_reason = message
    node.fault = 'clean failure'
    if step:
        node.clean_step = step
    try:
        if not node.driver_internal_info.pop(NO_RAMDISK, None):
            task.driver.deploy.tear_down_cleaning(task)
    except Exception:
        LOG.exception('Node %s: tear_down_cleaning failed after a '
                      'cleaning failure', node.uuid)
    if node.provision_state in (states.CLEANING, states.CLEANWAIT):
        task.process_event('fail')


def _replan(task) -> None:
    """The ramdisk is up and its agent reported its steps: plan the
    cleaning with them (manual: the steps asked for, checked again)."""
    requested = task.node.driver_internal_info.get(REQUESTED)
    if requested is not None:
        plan = steps_mod.resolve_requested(task, 'clean', requested)
    else:
        plan = steps_mod.enabled_steps(task, 'clean')
    step_runner.set_plan(task, KIND, plan)
    task.node.driver_internal_info[KIND.index_key] = -1


# the steps a manual cleaning asked for, kept until the agent is up
REQUESTED = 'clean_steps_requested'
# manual cleaning with disable_ramdisk (API 1.70): out-of-band steps
# only, no ramdisk booted
NO_RAMDISK = 'cleaning_disable_ramdisk'

def _may_run_again(step: dict) -> bool:
    """Every clean step is idempotent by contract, but one whose plan
    entry says ``idempotent: false``."""
    return step.get('idempotent', True)


KIND = step_runner.StepKind(name='clean', wait_state=states.CLEANWAIT,
                            on_done=_done, on_fail=_fail, replan=_replan,
                            timeout_option='clean_callback_timeout',
                            saves_end=True,
                            may_run_again=_may_run_again)


def automated_clean_enabled(task) -> bool:
    """The node's own automated_clean when it is set (true or false);
    [conductor]automated_clean for a node that leaves it unset."""
    own = task.node.automated_clean
    if own is None:
        return bool(task.conductor.conf.conductor.automated_clean)
    return bool(own)


def start(task, manual_steps: list[dict] | None = None,
          disable_ramdisk: bool = False) -> None:
    """Worker: plan the steps and run them (node already CLEANING)."""
    node = task.node
    node.last_error = None
    if disable_ramdisk:
        _start_without_ramdisk(task, manual_steps or [])
        return
    if manual_steps is None and not automated_clean_enabled(task):
        LOG.info('Node %s: automated cleaning is disabled (%s), '
                 'skipping', node.uuid,
                 'the node\'s automated_clean is false'
                 if node.automated_clean is not None
                 else '[conductor]automated_clean is false')
        step_runner.clear_plan(task, KIND)
        _done(task)
        return
    try:
        # steps asked for are checked before anything boots; the plan of
        # an automated cleaning is made once, after preparing (an agent
        # already running, fast track, may report its steps meanwhile)
        plan = _plan(task, manual_steps) if manual_steps is not None \
            else None
        task.driver.power.validate(task)
        task.driver.deploy.validate(task)
        prep = task.driver.deploy.prepare_cleaning(task)
        if prep != states.CLEANWAIT or plan is None:
            plan = _plan(task, manual_steps)
    except Exception as e:
        _fail(task, 'Failed to prepare cleaning of node %s: %s'
              % (node.uuid, e), {})
        return
    if plan is None and prep != states.CLEANWAIT:
        _fail(task, 'Failed to prepare cleaning of node %s: its deploy '
              'interface cannot list its clean steps and boots no agent '
              'that could' % node.uuid, {})
        return
    step_runner.set_plan(task, KIND, plan or [])
    if manual_steps is not None:
        node.driver_internal_info['cleaning_manual'] = True
        node.driver_internal_info[REQUESTED] = manual_steps
    if prep == states.CLEANWAIT:
        # the ramdisk boots; its first heartbeat resumes at step 0
        node.driver_internal_info[KIND.index_key] = -1
        task.process_event('wait')
        return
    step_runner.run(task, KIND)


def _plan(task, manual_steps: list[dict] | None) -> list[dict] | None:
    """The steps to run (the manual ones asked for, checked), None while
    an agent has yet to report its own."""
    try:
        if manual_steps is not None:
            return steps_mod.resolve_requested(task, 'clean', manual_steps)
        return steps_mod.enabled_steps(task, 'clean')
    except exception.StepsNotReady:
        return None     # an agent reports them once its ramdisk is up


def _start_without_ramdisk(task, manual_steps: list[dict]) -> None:
    """Manual cleaning with the steps the BMC can run: nothing boots."""
    node = task.node
    try:
        plan = steps_mod.resolve_requested(task, 'clean', manual_steps)
        task.driver.power.validate(task)
    except Exception as e:
        _fail(task, 'Failed to prepare cleaning of node %s: %s'
              % (node.uuid, e), {})
        return
    node.driver_internal_info[NO_RAMDISK] = True
    node.driver_internal_info['cleaning_manual'] = True
    step_runner.set_plan(task, KIND, plan)
    step_runner.run(task, KIND)


def abort(task) -> None:
    """Verb 'abort' on a node in CLEANWAIT."""
    node = task.node
    step = step_runner.current_step(task, KIND) or node.clean_step or {}
    if step and not step.get('abortable'):
        raise exception.InvalidState(
            reason='Clean step %s.%s of node %s is not abortable; wait for '
                   'it to finish' % (step.get('interface'),
                                     step.get('step'), node.uuid))
    msg = ('Clean operation aborted for node %s on step %s.%s'
           % (node.uuid, step.get('interface'), step.get('step'))
           if step else 'Clean operation aborted for node %s' % node.uuid)
    node.last_error = msg
    node.maintenance = True
    node.maintenance_reason = msg
    node.fault = 'clean failure'
    task.process_event('abort')
    task.spawn_after(_teardown_after_abort)


def _teardown_after_abort(task) -> None:
    try:
        task.driver.deploy.tear_down_cleaning(task)
    except Exception:
        LOG.exception('Node %s: tear_down_cleaning failed after abort',
                      task.node.uuid)
    step_runner.clear_plan(task, KIND)
    task.node.driver_internal_info.pop(REQUESTED, None)
