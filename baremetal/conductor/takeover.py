"""Taking over nodes from dead conductors (and our own after a restart).

Rules (doc/source/admin/failures.rst):
* a reservation held by a dead conductor is dropped;
* stable and failed nodes just change owner (the hash ring);
* wait states (clean wait, wait call-back, inspect wait, rescue wait)
  continue: the callback or the driver poll reaches the new owner;
* a node caught in an active state is resumed where that is safe and
  failed otherwise:
  - cleaning: resumed at the recorded step if that step is idempotent
    (every automated clean step is, by contract); a step that was
    marked non-idempotent (``idempotent: false`` in its plan entry)
    fails the node instead of running twice; caught after the agent's
    first heartbeat and before the first step (its steps being
    planned): back to clean wait, and planned again with the agent (as
    is a node released in clean or service wait that the lost conductor
    held for that heartbeat); caught
    after the last step (tearing the ramdisk down): finished;
  - deploying: resumed at the recorded step if it is one that may run
    again (StepKind.may_run_again; deployments.RESUMABLE: booting the
    ramdisk, writing the image, preparing the instance's boot, powering
    off, booting the instance); failed otherwise (a deploy template's
    step);
  - a resumed step whose agent command the lost conductor had sent is
    not sent again while the agent still runs it (IPA would refuse it:
    "agent is busy"), nor once it ended well: the agent's last command
    is adopted (agent/deploy.py);
  - deleting: torn down again (power off, the instance's boot and image
    withdrawn), then cleaned as after any tear down; verifying,
    inspecting, rescuing (its password saved when it started),
    unrescuing and adopting: run again from their start (_RUN_AGAIN).
"""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.conductor import cleaning
from baremetal.conductor import deployments
from baremetal.conductor import inspection
from baremetal.conductor import rescuing
from baremetal.conductor import servicing
from baremetal.conductor import step_runner
from baremetal.conductor import task_manager
from baremetal.db import conductors as db_conductors
from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations

LOG = log.getLogger(__name__)

_ACTIVE = (states.CLEANING, states.DEPLOYING, states.DELETING,
           states.VERIFYING, states.INSPECTING, states.RESCUING,
           states.UNRESCUING, states.ADOPTING)

# work that runs again from its start when its conductor was lost: it
# reads the hardware, or powers it and sets up or withdraws its boot, to
# the same end however often it runs
_RUN_AGAIN = {
    states.DELETING: ('tearing it down again', deployments.tear_down),
    states.VERIFYING: ('verifying it again', rescuing.verify),
    states.INSPECTING: ('inspecting it again', inspection.start),
    states.RESCUING: ('rescuing it again', rescuing.rescue),
    states.UNRESCUING: ('unrescuing it again', rescuing.unrescue),
    states.ADOPTING: ('adopting it again', rescuing.adopt),
}


def run(conductor) -> None:
    """Release reservations of dead conductors, then recover the nodes
    left in active states that the ring gives to us."""
    timeout = conductor.conf.conductor.heartbeat_timeout
    dead = set(db_conductors.dead_conductor_hosts(timeout)) - {conductor.host}
    if conductor.first_takeover:
        # nodes we held before a restart: nobody works on them now
        dead.add(conductor.host)
    released = db_reservations.release_reservations_of(dead)
    conductor.first_takeover = False
    for row in released:
        LOG.warning('Node %s: released reservation of dead conductor %s',
                    row['uuid'], row['reservation'])
    if dead:
        conductor.rings.reset()
    # whoever released them: the lost conductor may have held them for
    # the agent's first heartbeat, which the owner would otherwise wait
    # minutes to hear again
    _each(conductor, [row['id'] for row in released if row[
        'provision_state'] in _PLANNED_AT_HEARTBEAT and
        conductor.serves(row)], _plan_unplanned)
    rows = db_nodes.nodes_in_states(_ACTIVE, extra=(db_nodes.unreserved(),))
    _each(conductor, [row['id'] for row in rows if _owns(conductor, row)],
          recover)


def _owns(conductor, row) -> bool:
    try:
        return conductor.owns(row)
    except exception.NoValidHost:
        return False


def _each(conductor, node_ids, take) -> None:
    """``take(conductor, node_id)`` for each node but those locked or
    gone meanwhile, until no worker is free."""
    for node_id in node_ids:
        try:
            take(conductor, node_id)
        except (exception.NodeLocked, exception.NodeNotFound):
            continue
        except exception.NoFreeConductorWorker:
            return


def recover(conductor, node_id) -> None:
    with task_manager.acquire(conductor, node_id, shared=False,
                              purpose='take over') as task:
        node = task.node
        state = node.provision_state
        if state not in _ACTIVE:
            return
        msg = ('The conductor handling node %s was lost, or lost the '
               'database, while the node was "%s"' % (node.uuid, state))
        if state == states.CLEANING:
            step = step_runner.current_step(task, cleaning.KIND)
            index = node.driver_internal_info.get(
                cleaning.KIND.index_key)
            if step_runner.ended(task, cleaning.KIND):
                # every step was done (and saved so): the lost conductor
                # was tearing the ramdisk down; finish that
                LOG.warning('%s, after its last step; finishing the '
                            'cleaning', msg)
                task.spawn_after(step_runner.finish, cleaning.KIND)
                return
            if index == -1:
                # the agent had heartbeated and its steps were being
                # planned: no step ran (each is recorded before it runs);
                # planned again with the agent now
                LOG.warning('%s, before its first step; planning them '
                            'again', msg)
                task.process_event('wait')
                _heartbeat_again(task, cleaning.KIND)
                return
            if _resumed(task, cleaning.KIND, msg):
                return
            if not step and index is None and \
                    node.target_provision_state != states.MANAGEABLE and \
                    cleaning.KIND.steps_key not in node.driver_internal_info:
                # lost before planning: plan again
                task.spawn_after(cleaning.start)
                return
            why = ('step %s.%s is not idempotent' % (
                step['interface'], step['step']) if step else
                'its plan has no step %r to resume at' % (index,))
            cleaning._fail(task, '%s; %s' % (msg, why), step)
            return
        if state == states.DEPLOYING and \
                _resumed(task, deployments.KIND, msg):
            return
        if state in _RUN_AGAIN:
            what, work = _RUN_AGAIN[state]
            LOG.warning('%s; %s', msg, what)
            task.spawn_after(work)
            return
        node.last_error = msg
        LOG.error(msg)
        task.process_event('fail')


# wait states whose steps are planned at the agent's first heartbeat
_PLANNED_AT_HEARTBEAT = {states.CLEANWAIT: cleaning.KIND,
                         states.SERVICEWAIT: servicing.KIND}


def _plan_unplanned(conductor, node_id) -> None:
    """A node released from a dead conductor, waiting for its steps to
    be planned though its agent heartbeated: planned now."""
    with task_manager.acquire(conductor, node_id, shared=False,
                              purpose='take over') as task:
        kind = _PLANNED_AT_HEARTBEAT.get(task.node.provision_state)
        if kind is not None and _heartbeat_again(task, kind):
            LOG.warning('Node %s: its agent heartbeated to a conductor lost '
                        'before it planned the %s steps; planning them now',
                        task.node.uuid, kind.name)


def _heartbeat_again(task, kind) -> bool:
    """When the node's agent heartbeated this boot (its URL recorded) and
    its steps are still to be planned (index -1), do what its heartbeat
    does, which the lost conductor did not finish: ask it for its steps
    (agent/deploy.py) rather than wait for its next heartbeat (IPA's
    interval: a third to two thirds of [api]ramdisk_heartbeat_timeout,
    up to minutes)."""
    info = task.node.driver_internal_info
    url = info.get('agent_url')
    if not url or info.get(kind.index_key) != -1:
        return False
    task.driver.deploy.heartbeat(task, url, info.get('agent_version'))
    return True


def _resumed(task, kind, msg: str) -> bool:
    """Whether the node went on at the step it was at, one its kind says
    may run again (``StepKind.may_run_again``)."""
    step = step_runner.current_step(task, kind)
    if not step or not kind.may_run_again(step):
        return False
    LOG.warning('%s; resuming at %s step %s.%s', msg, kind.name,
                step['interface'], step['step'])
    # the agent may still run the command the lost conductor sent for
    # it: waited for, not sent again (agent/deploy.py start_command)
    task.resumed_step = step
    task.spawn_after(step_runner.run, kind,
                     task.node.driver_internal_info[kind.index_key])
    return True
