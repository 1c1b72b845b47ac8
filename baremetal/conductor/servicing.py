"""Servicing an active node with steps (API 1.87, verb ``service``).

The same step engine as cleaning: the steps asked for (or a runbook's)
run in order; ``service wait`` while one runs asynchronously; ``service
failed`` with the reason when one fails; ``active`` again when all are
done.  Steps come from the interfaces' ``@service_step`` methods, the
reserved steps (power_on, power_off, reboot, hold, wait) and, for the
agent deploy interfaces, the agent's service steps: the node then boots
the agent ramdisk (``prepare_service``), the agent reports its steps at
its first heartbeat, they run in band, and the instance boots again
(``tear_down_service``).  Out-of-band steps alone boot nothing.
"""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.conductor import step_runner
from baremetal.conductor import steps as steps_mod

LOG = log.getLogger(__name__)

# the steps asked for, kept until the agent is up
REQUESTED = 'service_steps_requested'
# the ramdisk was booted for this servicing
RAMDISK = 'servicing_ramdisk'
# servicing with disable_ramdisk (API 1.108): out-of-band steps only
NO_RAMDISK = 'service_disable_ramdisk'


def _tear_down(task) -> None:
    info = task.node.driver_internal_info
    if info.pop(RAMDISK, None):
        task.driver.deploy.tear_down_service(task)
    info.pop(REQUESTED, None)
    info.pop(NO_RAMDISK, None)


def _done(task) -> None:
    node = task.node
    try:
        _tear_down(task)
    except Exception as e:
        _fail(task, 'Failed to tear down servicing of node %s: %s'
              % (node.uuid, e), {})
        return
    node.service_step = {}
    task.process_event('done')
    LOG.info('Node %s: servicing finished', node.uuid)


def _fail(task, message: str, step: dict) -> None:
    """service failed with the reason; a ramdisk booted for it stays up
    for the operator to look at (abort returns the node to active)."""
    node = task.node
    LOG.error('Node %s: %s', node.uuid, message)
    node.last_error = message
    if step:
        node.service_step = step
    if node.provision_state in (states.SERVICING, states.SERVICEWAIT,
                                states.SERVICEHOLD):
        task.process_event('fail')


def _replan(task) -> None:
    requested = task.node.driver_internal_info.get(REQUESTED) or []
    plan = steps_mod.resolve_requested(task, 'service', requested)
    step_runner.set_plan(task, KIND, plan)
    task.node.driver_internal_info[KIND.index_key] = -1


KIND = step_runner.StepKind(name='service', wait_state=states.SERVICEWAIT,
                            on_done=_done, on_fail=_fail, replan=_replan,
                            timeout_option='service_callback_timeout')


def needs_ramdisk(task, requested: list[dict]) -> bool:
    """Does a requested step run in band, or is it none the interfaces
    know now (the agent reports its steps once its ramdisk is up)?"""
    known = {(s['interface'], s['step']): s for s in
             steps_mod.driver_steps(task, 'service', known_only=True)}
    for st in requested:
        if st['step'] in step_runner.RESERVED_STEPS:
            continue
        found = known.get((st['interface'], st['step']))
        if found is None or found.get('in_band'):
            return True
    return False


def check_without_ramdisk(task, requested: list[dict]) -> None:
    """disable_ramdisk (API 1.108): 400 unless every step asked for
    runs out of band (the manual cleaning rule of API 1.70)."""
    if needs_ramdisk(task, requested):
        raise exception.InvalidParameterValue(
            err='disable_ramdisk: servicing node %s without the ramdisk '
                'can only run steps the BMC or the conductor runs; a step '
                'asked for runs in the agent ramdisk or is not known yet'
            % task.node.uuid)


def start(task, requested: list[dict], disable_ramdisk: bool = False
          ) -> None:
    """Worker: node already SERVICING; plan and run the steps (with
    ``disable_ramdisk``: out of band, no ramdisk booted)."""
    node = task.node
    node.last_error = None
    info = node.driver_internal_info
    try:
        task.driver.power.validate(task)
        if disable_ramdisk:
            check_without_ramdisk(task, requested)
            info[NO_RAMDISK] = True
        ramdisk = not disable_ramdisk and needs_ramdisk(task, requested)
        plan = None if ramdisk else steps_mod.resolve_requested(
            task, 'service', requested)
        if ramdisk:
            prep = task.driver.deploy.prepare_service(task)
            info[RAMDISK] = True
    except Exception as e:
        _fail(task, 'Failed to prepare servicing of node %s: %s'
              % (node.uuid, e), {})
        return
    if ramdisk:
        # the agent's first heartbeat plans with the steps it reports
        info[REQUESTED] = requested
        step_runner.set_plan(task, KIND, [])
        info[KIND.index_key] = -1
        if prep == states.SERVICEWAIT:
            task.process_event('wait')
            return
        _replan(task)
        info[KIND.index_key] = None
    else:
        step_runner.set_plan(task, KIND, plan)
    step_runner.run(task, KIND)


def abort(task) -> None:
    """Verb 'abort' in service wait or service hold: service failed."""
    node = task.node
    step = step_runner.current_step(task, KIND) or node.service_step or {}
    if step and node.provision_state == states.SERVICEWAIT and \
            not step.get('abortable'):
        raise exception.InvalidState(
            reason='Service step %s.%s of node %s is not abortable; wait '
                   'for it to finish' % (step.get('interface'),
                                         step.get('step'), node.uuid))
    node.last_error = 'Servicing of node %s was aborted' % node.uuid
    step_runner.clear_plan(task, KIND)
    task.process_event('abort')


def back_to_active(task) -> None:
    """Worker after 'abort' from service failed: a ramdisk still up for
    the failed servicing goes, the instance boots."""
    try:
        _tear_down(task)
    except Exception as e:
        task.node.last_error = ('Failed to boot the instance of node %s '
                                'after servicing: %s' % (task.node.uuid, e))
        LOG.error(task.node.last_error)
