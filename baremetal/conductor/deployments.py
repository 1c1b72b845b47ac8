"""Deployment (verbs 'active' and 'rebuild') and tear-down ('deleted')."""

from oslo_log import log

from baremetal.common import states
from baremetal.conductor import cleaning
from baremetal.conductor import step_runner
from baremetal.conductor import steps as steps_mod
from baremetal.db import deploy_templates as db_deploy_templates

LOG = log.getLogger(__name__)


def _done(task) -> None:
    node = task.node
    node.deploy_step = {}
    task.process_event('done')
    LOG.info('Node %s: deployed', node.uuid)


def _fail(task, message: str, step: dict) -> None:
    node = task.node
    LOG.error('Node %s: %s', node.uuid, message)
    node.last_error = message
    if step:
        node.deploy_step = step
    if node.provision_state in (states.DEPLOYING, states.DEPLOYWAIT):
        task.process_event('fail')


def abort(task) -> None:
    """Verb 'abort' in ``wait call-back`` (API 1.110), as Ironic: the
    agent is cut off and the node goes to ``deploy failed`` while the
    deploy interface cleans up; a step that cannot be stopped runs to
    its end first (it is flagged ``abort_after``)."""
    node = task.node
    step = node.deploy_step or step_runner.current_step(task, KIND) or {}
    if step and not step.get('abortable'):
        LOG.info('Node %s: deploy step %s.%s cannot be stopped; the '
                 'deployment is aborted when it finishes', node.uuid,
                 step.get('interface'), step.get('step'))
        node.deploy_step = dict(step, abort_after=True)
        return
    node.driver_internal_info.pop('agent_url', None)
    task.process_event('abort', callback=_finish_abort)


def _abort_after_step(task) -> None:
    """The step an abort waited for has finished: stop here."""
    task.process_event('fail')
    _finish_abort(task)


def _finish_abort(task) -> None:
    """Worker, node in ``deploy failed``: clean up what the deployment
    prepared and say why it stopped."""
    node = task.node
    step = node.deploy_step or {}
    try:
        task.driver.deploy.clean_up(task)
    except Exception as e:
        LOG.exception('Node %s: clean-up after aborting its deployment '
                      'failed', node.uuid)
        node.last_error = ('Failed to clean up deploying after aborting '
                           'the operation: %s' % e)
        return
    reason = 'By request, the deploy operation was aborted'
    if step:
        reason += (' during or after the completion of step "%s.%s"'
                   % (step.get('interface'), step.get('step')))
    node.last_error = reason
    step_runner.clear_plan(task, KIND)
    LOG.info('Node %s: %s', node.uuid, reason)


# deploy steps that may run again when the conductor running them was
# lost midway (conductor/takeover.py): each boots, powers, writes the
# image or sets up the boot to the same end however often it runs (an
# agent still writing the image is waited for, not asked again:
# agent/deploy.py start_command).  Not the steps of deploy templates or
# of other interfaces: a node caught in those fails.
RESUMABLE = frozenset(('deploy.deploy', 'deploy.write_image',
                       'deploy.prepare_instance_boot',
                       'deploy.tear_down_agent', 'deploy.boot_instance'))


def _may_run_again(step: dict) -> bool:
    return '%s.%s' % (step.get('interface'), step.get('step')) in RESUMABLE


KIND = step_runner.StepKind(name='deploy', wait_state=states.DEPLOYWAIT,
                            on_done=_done, on_fail=_fail,
                            timeout_option='deploy_callback_timeout',
                            abort_after=_abort_after_step,
                            may_run_again=_may_run_again)


def template_steps(task) -> list[dict]:
    """Steps of the deploy templates named in the instance's traits
    (``instance_info['traits']``: what Nova passes from the flavor's
    required traits), as in Ironic; the node's own traits choose
    nothing."""
    traits = (task.node.instance_info or {}).get('traits') or []
    if not isinstance(traits, list) or not traits:
        return []
    rows = db_deploy_templates.steps_for(traits)
    return [{'interface': r['interface'], 'step': r['step'],
             'args': r['args'] or {}, 'priority': r['priority']}
            for r in rows]


def start(task, configdrive=None, user_steps: list[dict] | None = None
          ) -> None:
    """Worker: node already DEPLOYING; plan and run the deploy steps."""
    node = task.node
    node.last_error = None
    try:
        if configdrive is not None:
            node.instance_info['configdrive'] = configdrive
        task.driver.power.validate(task)
        task.driver.deploy.validate(task)
        requested = template_steps(task) + list(user_steps or [])
        extra = steps_mod.resolve_requested(task, 'deploy', requested)
        plan = steps_mod.merge_deploy_steps(task, extra)
        task.driver.deploy.prepare(task)
    except Exception as e:
        _fail(task, 'Failed to prepare deployment of node %s: %s'
              % (node.uuid, e), {})
        return
    step_runner.set_plan(task, KIND, plan)
    step_runner.run(task, KIND)


def tear_down(task) -> None:
    """Worker: node DELETING -> tear down -> CLEANING (or ERROR)."""
    node = task.node
    try:
        task.driver.deploy.tear_down(task)
        task.driver.deploy.clean_up(task)
        if node.provision_state == states.DELETING:
            try:
                task.driver.rescue.clean_up(task)
            except Exception:
                LOG.debug('Node %s: rescue clean-up skipped', node.uuid)
    except Exception as e:
        msg = 'Error tearing down node %s: %s' % (node.uuid, e)
        LOG.error(msg)
        node.last_error = msg
        task.process_event('error')
        return
    clear_instance(node)
    step_runner.clear_plan(task, KIND)
    node.last_error = None
    task.process_event('clean')
    cleaning.start(task)


def clear_instance(node) -> None:
    """Forget the workload: instance_uuid, its name (1.104),
    instance_info and VIFs."""
    node.instance_uuid = None
    node.instance_name = None
    node.instance_info = {}
    info = node.driver_internal_info
    for key in ('vifs', 'deploy_boot_mode', 'is_whole_disk_image',
                'root_uuid_or_disk_id'):
        info.pop(key, None)
    node.deploy_step = {}
