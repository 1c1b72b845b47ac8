"""Fast track: the agent ramdisk kept running from one operation to the
next (``[deploy]fast_track``, or a node's ``driver_info`` ``fast_track``).

A node whose agent was booted for in-band inspection or cleaning stays
powered on with it at the end, keeping its token; the agent goes on
looking up and heartbeating (the API accepts both in ``enroll``,
``manageable`` and ``available`` for such a node).  The next cleaning or
deployment then uses it instead of booting the ramdisk again, when

* its last heartbeat is at most ``[deploy]fast_track_timeout`` seconds
  old, and the node has its token and URL;
* the BMC says the node is powered on;
* the agent answers a command (the caller's first one).

Otherwise the node boots the agent as it would without fast track.
"""

from oslo_log import log
from oslo_utils import strutils

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import states

LOG = log.getLogger(__name__)

# provision states in which the agent of a fast-track node may look up
# and heartbeat besides those of a ramdisk boot (Ironic's list)
EXTRA_LOOKUP_STATES = (states.ENROLL, states.MANAGEABLE, states.AVAILABLE,
                       states.INSPECTING, states.SERVICING,
                       states.SERVICEHOLD)


def enabled_for(driver_info: dict | None, conf,
                strict: bool = False) -> bool:
    """The node's ``driver_info`` ``fast_track`` when it is set,
    ``[deploy]fast_track`` otherwise (a node row's or object's
    driver_info).  ``strict``: a value that is not a boolean raises
    InvalidParameterValue (as Ironic's lookup answers it, 400), else it
    counts as false."""
    own = (driver_info or {}).get('fast_track')
    if own is None:
        return bool(conf.deploy.fast_track)
    if strict:
        check(driver_info)
    return strutils.bool_from_string(own, default=False)


def enabled(task) -> bool:
    return enabled_for(task.node.driver_info, task.conductor.conf)


def check(driver_info: dict | None) -> None:
    """A node's ``driver_info`` ``fast_track``, if set, is a boolean
    (Ironic's message)."""
    own = (driver_info or {}).get('fast_track')
    if own is None:
        return
    try:
        strutils.bool_from_string(own, strict=True)
    except ValueError as e:
        raise exception.InvalidParameterValue(
            'Invalid value of fast_track: %s' % e) from None


def agent_running(task) -> bool:
    """Whether the node's agent can be used as it runs (without asking
    it yet): fast track on, a token and URL, a recent heartbeat, the
    node powered on.  Logs why not when fast track is on."""
    if not enabled(task):
        return False
    node = task.node
    info = node.driver_internal_info
    if not (agent_tokens.present(node) and info.get('agent_url')):
        why = 'no agent looked the node up and heartbeated'
    else:
        age = agent_tokens.heartbeat_age(info)
        limit = task.conductor.conf.deploy.fast_track_timeout
        if age is None or age > limit:
            why = ('its agent\'s last heartbeat is older than '
                   '[deploy]fast_track_timeout (%d s)' % limit)
        else:
            try:
                power = task.driver.power.get_power_state(task)
            except Exception as e:      # noqa: BLE001 (then boot it)
                power, why = None, 'its power state is unknown (%s)' % e
            else:
                if power == states.POWER_ON:
                    return True
                why = 'it is %s' % power
    LOG.info('Node %s: fast track not used: %s; the agent ramdisk boots',
             node.uuid, why)
    return False


def unused(task, error: Exception) -> None:
    """The running agent did not answer: forget it (the ramdisk boots
    again, with a new token)."""
    LOG.warning('Node %s: fast track not used: the running agent did not '
                'answer (%s); the agent ramdisk boots', task.node.uuid,
                error)
    agent_tokens.wipe(task.node)
