"""Power actions and the power state sync."""

from oslo_log import log

from baremetal.common import exception
from baremetal.common import notifications
from baremetal.common import states
from baremetal.conductor import notify
from baremetal.drivers.modules import boot_modes
from baremetal.objects import history

LOG = log.getLogger(__name__)

_REBOOTS = (states.REBOOT, states.SOFT_REBOOT)


def act(task, new_state: str, timeout: int | None = None) -> None:
    """The one way a power action is taken, whoever asks (an API request
    or the conductor itself: deploy, clean, rescue, tear-down, a step):
    ``baremetal.node.power_set.start`` now, the driver's action, the
    node's power_state recorded, then ``.end`` once the node is saved;
    on failure ``.error`` (once saved) and the driver's exception
    raised, as Ironic's node_power_action."""
    node = task.node
    if notifications.ON:
        notify.power_set(task, 'start', new_state)
    try:
        if new_state in _REBOOTS:
            if new_state == states.SOFT_REBOOT:
                task.driver.power.set_power_state(
                    task, states.SOFT_REBOOT, timeout=timeout)
            else:
                task.driver.power.reboot(task, timeout=timeout)
            node.power_state = states.POWER_ON
        else:
            task.driver.power.set_power_state(task, new_state,
                                              timeout=timeout)
            node.power_state = (states.POWER_OFF
                                if new_state == states.SOFT_POWER_OFF
                                else new_state)
    except Exception:
        if notifications.ON:
            notify.power_set(task, 'error', new_state)
        raise
    if notifications.ON:
        notify.power_set(task, 'end', new_state)


def change(task, new_state: str, timeout: int | None = None) -> None:
    """Worker of an API power request: ``act``, with a failure recorded
    in last_error; target_power_state returns to None."""
    node = task.node
    try:
        act(task, new_state, timeout)
        node.last_error = None
    except Exception as e:
        node.last_error = ('Failed to change power state to "%s" by %s: %s'
                           % (new_state, node.uuid, e))
        LOG.error('Node %s: %s', node.uuid, node.last_error)
        if not isinstance(e, exception.BaremetalException):
            LOG.exception('Node %s: power driver raised', node.uuid)
    finally:
        node.target_power_state = None


def target_for(new_state: str) -> str:
    """What target_power_state shows while the change runs."""
    if new_state in _REBOOTS:
        return states.POWER_ON
    if new_state == states.SOFT_POWER_OFF:
        return states.POWER_OFF
    return new_state


def sync_one(task, failures: dict, max_retries: int,
             error: Exception | None = None) -> Exception | None:
    """Read the node's power state; record it; after ``max_retries``
    failures in a row put the node into maintenance.  Returns the
    error of a failed read, None when it was read.  With ``error``, no
    read: the failure is recorded as if the read had raised it (the
    sync does so for the other nodes of a BMC that just failed).

    The power and the health reads share what the driver read from the
    BMC (``task.bmc_reads``): a Redfish ComputerSystem carries both, one
    request per node."""
    node = task.node
    with task.bmc_reads():
        try:
            if error is not None:
                raise error
            actual = task.driver.power.get_power_state(task)
        except Exception as e:
            _count_failure(task, failures, max_retries, e)
            return e
        failures.pop(node.uuid, None)
        cache_health(task)
    node = task.node
    if actual != node.power_state:
        read_from = node.updated_at
        task.upgrade_lock()
        if task.node.updated_at != read_from:
            # the node changed while the BMC was read (a power action
            # may have recorded its own state): what was read may
            # predate it; the next sync reads again
            return None
        LOG.info('Node %s: power state is %s (database said %s); '
                 'recording it', node.uuid, actual, node.power_state)
        if notifications.ON:   # sent once saved, from the recorded state
            notify.power_corrected(task, task.node.power_state)
        task.node.power_state = actual
        # the machine (re)started or stopped outside our control: its
        # boot mode may have changed too (API 1.75)
        boot_modes.record(task)
    return None


def _count_failure(task, failures: dict, max_retries: int,
                   e: Exception) -> None:
    node = task.node
    n = failures.get(node.uuid, 0) + 1
    failures[node.uuid] = n
    LOG.warning('Node %s: power state read failed (%d/%d): %s',
                node.uuid, n, max_retries, e)
    if n >= max_retries:
        task.upgrade_lock()
        node = task.node
        node.maintenance = True
        node.fault = 'power failure'
        node.maintenance_reason = (
            'During sync_power_state, max retries exceeded for node '
            '%s, node state %s does not match expected state. '
            'Switching node to maintenance mode. Error: %s'
            % (node.uuid, node.power_state, e))
        node.power_state = None
        failures.pop(node.uuid, None)


def cache_health(task) -> None:
    """Record the hardware health the BMC reports (API 1.109) when it
    changed, with a node history entry; as Ironic, a driver that cannot
    report it, or fails to, leaves the node as it is."""
    if not task.conductor.conf.conductor.enable_health_monitoring:
        return
    node = task.node
    try:
        health = task.driver.management.get_node_health(task)
    except exception.UnsupportedDriverExtension:
        return
    except Exception as e:
        LOG.warning('Node %s: could not read its health from the BMC: '
                    '%s', node.uuid, e)
        return
    if health is not None and health not in states.HEALTH_STATES:
        LOG.warning('Node %s: the driver reported health %r, not one of '
                    '%s; ignored', node.uuid, health,
                    ', '.join(states.HEALTH_STATES))
        return
    if health == node.health:
        return
    before = node.health
    task.upgrade_lock()
    task.node.health = health
    task.node.save()
    history.record_event(
        task.node.as_dict(), 'monitoring',
        "Node health status changed: health='%s' (previously '%s')"
        % (health, before), task.conductor.host)
    log = LOG.warning if health in (states.HEALTH_WARNING,
                                    states.HEALTH_CRITICAL) else LOG.info
    log('Node %s: health is now %s (was %s)', node.uuid, health, before)
