"""Periodic tasks of a conductor (futurist.periodics).

Each acts only on nodes the hash ring maps to this conductor, skips
nodes another task holds, and never blocks on a busy node.
"""

import datetime

import sqlalchemy as sa
from futurist import periodics
from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.conductor import cleaning
from baremetal.conductor import deployments
from baremetal.conductor import power
from baremetal.conductor import task_manager
from baremetal.db import api as db

LOG = log.getLogger(__name__)

# wait state -> (timeout option, what happens)
_TIMEOUTS = {
    states.CLEANWAIT: 'clean_callback_timeout',
    states.DEPLOYWAIT: 'deploy_callback_timeout',
    states.INSPECTWAIT: 'inspect_wait_timeout',
    states.RESCUEWAIT: 'rescue_callback_timeout',
}


def _mine(conductor, rows):
    for row in rows:
        try:
            if conductor.owns(row):
                yield row
        except exception.NoValidHost:
            continue


def check_timeouts(conductor) -> int:
    """Nodes in a wait state past their callback timeout -> *FAIL."""
    conf = conductor.conf.conductor
    now = db.utcnow()
    failed = 0
    rows = db.nodes_in_states(_TIMEOUTS, extra=(
        db.NODES.c.reservation.is_(None),))
    for row in _mine(conductor, rows):
        limit = getattr(conf, _TIMEOUTS[row['provision_state']])
        if not limit or not row['provision_updated_at']:
            continue
        if row['provision_updated_at'] > now - datetime.timedelta(
                seconds=limit):
            continue
        try:
            with task_manager.acquire(conductor, row['id'], shared=False,
                                      purpose='timeout') as task:
                _time_out(task, limit)
                failed += 1
        except (exception.NodeLocked, exception.NodeNotFound):
            continue
    return failed


def _time_out(task, limit: int) -> None:
    node = task.node
    state = node.provision_state
    if state not in _TIMEOUTS:
        return  # moved on while we looked
    msg = ('Timeout reached while waiting in "%s" for %d seconds'
           % (state, limit))
    if state == states.CLEANWAIT:
        step = node.clean_step or {}
        if step:
            msg += ' (step %s.%s)' % (step.get('interface'),
                                      step.get('step'))
        cleaning._fail(task, msg, step)
    elif state == states.DEPLOYWAIT:
        step = node.deploy_step or {}
        if step:
            msg += ' (step %s.%s)' % (step.get('interface'),
                                      step.get('step'))
        deployments._fail(task, msg, step)
    else:
        node.last_error = msg
        task.process_event('fail')
    LOG.error('Node %s: %s', node.uuid, msg)


def poll_async_steps(conductor) -> None:
    """Ask drivers whose step the node waits on whether it finished."""
    rows = db.nodes_in_states((states.CLEANWAIT, states.DEPLOYWAIT),
                              extra=(db.NODES.c.reservation.is_(None),))
    for row in _mine(conductor, rows):
        try:
            with task_manager.acquire(conductor, row['id'], shared=False,
                                      purpose='poll step') as task:
                kind = (cleaning.KIND if task.node.provision_state
                        == states.CLEANWAIT else deployments.KIND)
                step = getattr(task.node, kind.step_field) or {}
                iface = task.driver.interfaces.get(step.get('interface'))
                if iface is None or not getattr(iface, 'polls_steps',
                                                False):
                    continue
                try:
                    finished = iface.poll_step(task, step)
                except Exception as e:
                    conductor.resume_steps(task, str(e) or repr(e))
                    continue
                if finished:
                    conductor.resume_steps(task)
        except (exception.NodeLocked, exception.NodeNotFound):
            continue
        except exception.NoFreeConductorWorker:
            return


def sync_power_states(conductor) -> None:
    """Record every (non-maintenance) node's actual power state."""
    conf = conductor.conf.conductor
    cols = ('id', 'uuid', 'driver', 'conductor_group', 'provision_state',
            'reservation', 'maintenance')
    with db.reader() as conn:
        rows = [dict(r) for r in conn.execute(
            sa.select(*[db.NODES.c[c] for c in cols]).where(
                db.NODES.c.maintenance.is_(False),
                db.NODES.c.reservation.is_(None))).mappings()]
    mine = [r for r in _mine(conductor, rows)
            if r['provision_state'] not in (states.ENROLL,)]

    def one(row):
        try:
            with task_manager.acquire(conductor, row['id'], shared=True,
                                      purpose='power sync') as task:
                power.sync_one(task, conductor.power_failures,
                               conf.power_state_sync_max_retries)
        except (exception.NodeLocked, exception.NodeNotFound):
            pass
        except Exception:
            LOG.exception('Node %s: power sync failed', row['uuid'])

    list(conductor.periodic_pool.map(one, mine))


def take_over_dead(conductor) -> None:
    from baremetal.conductor import takeover
    takeover.run(conductor)


def build(conductor) -> periodics.PeriodicWorker:
    c = conductor.conf.conductor
    tasks = [
        (periodics.periodic(c.heartbeat_interval, run_immediately=False)(
            lambda: conductor.heartbeat()), None, None),
        (periodics.periodic(c.check_provision_state_interval,
                            run_immediately=False)(
            lambda: check_timeouts(conductor)), None, None),
        (periodics.periodic(c.async_step_poll_interval,
                            run_immediately=False)(
            lambda: poll_async_steps(conductor)), None, None),
        (periodics.periodic(c.takeover_interval, run_immediately=True)(
            lambda: take_over_dead(conductor)), None, None),
    ]
    if c.sync_power_state_interval > 0:
        tasks.append((periodics.periodic(c.sync_power_state_interval,
                                         run_immediately=False)(
            lambda: sync_power_states(conductor)), None, None))
    return periodics.PeriodicWorker(tasks)
