"""Periodic tasks of a conductor (futurist.periodics).

Each acts only on nodes the hash ring maps to this conductor, skips
nodes another task holds, and never blocks on a busy node.
"""

import datetime

from futurist import periodics
from oslo_log import log

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import states
from baremetal.conductor import bmc_lanes
from baremetal.conductor import power
from baremetal.conductor import step_polling
from baremetal.conductor import workflows
from baremetal.conductor import task_manager
from baremetal.db import events as db_events
from baremetal.db import nodes as db_nodes
from baremetal.db import power_sync as db_power_sync
from baremetal.db import rows as db_rows

LOG = log.getLogger(__name__)

# wait state -> (timeout option, what happens)
_BY_WAIT = workflows.BY_WAIT_STATE
_TIMEOUTS = dict({k.wait_state: k.timeout_option for k in workflows.KINDS},
                 **{states.INSPECTWAIT: 'inspect_wait_timeout',
                    states.RESCUEWAIT: 'rescue_callback_timeout'})


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
    now = db_rows.utcnow()
    failed = 0
    rows = db_nodes.nodes_in_states(_TIMEOUTS, extra=(db_nodes.unreserved(),))
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
    kind = _BY_WAIT.get(state)
    if kind is not None:
        step = getattr(node, kind.step_field) or {}
        if step:
            msg += ' (step %s.%s)' % (step.get('interface'),
                                      step.get('step'))
        kind.on_fail(task, msg, step)
    else:
        node.last_error = msg
        task.process_event('fail')
    LOG.error('Node %s: %s', node.uuid, msg)


def poll_async_steps(conductor) -> None:
    """Ask drivers whose step the node waits on whether it finished.
    The poll runs under a shared lock (a hardware or agent slow to answer
    locks nobody out); the lock is taken only to resume.

    Left out: a node waiting with no step (for its agent to boot: its
    heartbeat moves it on), and a step this conductor's step poller
    polls already (step_polling.py: from its start, at least every
    ``[agent]command_poll_max_interval``).  This poll is for the others
    (a conductor that took the node over, a restart); reading each
    waiting node whole to find nothing to do was a seventh of the
    conductor's CPU while a fleet was cleaned and deployed
    (doc/source/admin/performance.rst)."""
    rows = db_nodes.unreserved_with_steps(tuple(_BY_WAIT))
    poller = conductor.step_poller
    for row in _mine(conductor, rows):
        state = row['provision_state']
        step = row[_BY_WAIT[state].step_field]
        if not isinstance(step, dict) or not step.get('interface') or \
                poller.watches(row['uuid'], state, step):
            continue
        with poller.polling(row['uuid']) as mine:
            if mine and not _poll_async_step(conductor, row):
                return


def _poll_async_step(conductor, row) -> bool:
    """Poll one node's step; False when no worker is free."""
    try:
        with task_manager.acquire(conductor, row['id'], shared=True,
                                  purpose='poll step') as task:
            state = task.node.provision_state
            kind = _BY_WAIT.get(state)
            if kind is not None:
                step = getattr(task.node, kind.step_field)
                step_polling.poll_and_resume(
                    conductor, task, lambda node: (
                        node.provision_state,
                        getattr(node, kind.step_field)) == (state, step))
    except (exception.NodeLocked, exception.NodeNotFound):
        pass
    except exception.NoFreeConductorWorker:
        return False
    return True


def sync_power_states(conductor) -> dict:
    """Record every (non-maintenance) node's actual power state, one
    request at a time per BMC (conductor/bmc_lanes.py).

    Left out, as the retirement spec asks: retired nodes at rest in
    ``manageable``, whose BMCs may be unplugged any day; an operator's
    power request still reaches them, and a retired node that still
    serves an instance or is being cleaned keeps being watched."""
    conf = conductor.conf.conductor
    mine = list(_mine(conductor, db_power_sync.candidates()))
    items = [(_bmc_key(conductor, row), row['id'], row) for row in mine]
    lanes = conductor.power_lanes
    stats = lanes.run_round(
        items, lambda row: _sync_node(conductor, row),
        lambda row, error: _sync_node(conductor, row, error),
        timeout=0.9 * conf.sync_power_state_interval
        if conf.sync_power_state_interval > 0 else None,
        # as few workers as read every node within half the interval
        pace=conf.sync_power_state_interval / 2.0
        if conf.sync_power_state_interval > 0 else None)
    lanes.forget_idle({key for key, _, _ in items})
    if stats['backing_off'] or stats['unfinished']:
        LOG.info('Power sync: %(queued)d nodes queued, %(backing_off)d '
                 'left alone (their BMC erred lately), %(unfinished)d '
                 'BMCs still busy with %(carried)d nodes from earlier '
                 'rounds', stats)
    return stats


def _bmc_key(conductor, row):
    """The lane of a node: its BMC endpoint, or the node alone."""
    reg = conductor.registry
    try:
        impl = row['power_interface'] or reg.default_interface(
            row['driver'], 'power')
        iface = reg.interfaces['power'].get(impl)
        key = iface.bmc_endpoint(row['driver_info'] or {}) \
            if iface is not None else None
    except Exception:       # noqa: BLE001 (an odd node reads on its own)
        key = None
    return key if key is not None else ('node', row['id'])


def _sync_node(conductor, row, error=None):
    """One node's read (or, with ``error``, its failure recorded without
    a read) -> (outcome, error) for the lanes."""
    conf = conductor.conf.conductor
    try:
        with task_manager.acquire(conductor, row['id'], shared=True,
                                  purpose='power sync') as task:
            node = task.node
            if node.maintenance or node.reservation or \
                    node.provision_state == states.ENROLL:
                # changed while queued; a task that holds the node talks
                # to its BMC itself, and is not to meet a second request
                return bmc_lanes.SKIPPED, None
            failed = power.sync_one(task, conductor.power_failures,
                                    conf.power_state_sync_max_retries,
                                    error=error)
    except (exception.NodeLocked, exception.NodeNotFound):
        return bmc_lanes.SKIPPED, None
    except Exception as e:
        LOG.exception('Node %s: power sync failed', row['uuid'])
        return bmc_lanes.FAILED, e
    if failed is None:
        return bmc_lanes.OK, None
    if getattr(failed, 'bmc_unavailable', False):
        return bmc_lanes.BMC_ERROR, failed
    return bmc_lanes.FAILED, failed


def take_over_dead(conductor) -> None:
    from baremetal.conductor import takeover
    takeover.run(conductor)


def purge_events(conductor) -> int:
    """Keep the change feed bounded: drop node events older than
    [events]retention_hours and beyond [events]max_events (any conductor
    may: deleting what another already deleted is harmless)."""
    ev = conductor.conf.events
    older = (db_rows.utcnow() - datetime.timedelta(hours=ev.retention_hours)
             if ev.retention_hours else None)
    gone = db_events.purge(older, ev.max_events or None)
    if gone:
        LOG.info('Purged %d node events', gone)
    return gone


def send_sensor_data(conductor) -> int:
    """Each node's sensor readings as a notification
    (conductor/sensor_data.py)."""
    return conductor.sensors.run()


def _quiet_when_database_lost(fn):
    """A periodic task that meets an unreachable database says so in one
    line and runs again at its next turn."""
    def run():
        try:
            return fn()
        except exception.DatabaseUnavailable as e:
            LOG.warning('Periodic task skipped: %s', e)
    return metrics.periodic_task(run, metrics.task_name(fn))


def build(conductor) -> periodics.PeriodicWorker:
    c = conductor.conf.conductor
    tasks = [
        (periodics.periodic(c.heartbeat_interval, run_immediately=False)(
            _quiet_when_database_lost(lambda: conductor.heartbeat())),
         None, None),
        (periodics.periodic(c.check_provision_state_interval,
                            run_immediately=False)(
            _quiet_when_database_lost(lambda: check_timeouts(conductor))),
         None, None),
        (periodics.periodic(c.async_step_poll_interval,
                            run_immediately=False)(
            _quiet_when_database_lost(
                lambda: poll_async_steps(conductor))), None, None),
        (periodics.periodic(c.takeover_interval, run_immediately=True)(
            _quiet_when_database_lost(lambda: take_over_dead(conductor))),
         None, None),
        (periodics.periodic(conductor.conf.events.purge_interval,
                            run_immediately=False)(
            _quiet_when_database_lost(lambda: purge_events(conductor))),
         None, None),
    ]
    if c.sync_power_state_interval > 0:
        tasks.append((periodics.periodic(c.sync_power_state_interval,
                                         run_immediately=False)(
            _quiet_when_database_lost(
                lambda: sync_power_states(conductor))), None, None))
    if conductor.sensors is not None:
        tasks.append((periodics.periodic(
            conductor.conf.sensor_data.interval, run_immediately=False)(
            _quiet_when_database_lost(
                lambda: send_sensor_data(conductor))),
            None, None))
    return periodics.PeriodicWorker(tasks)
