"""``redfish`` power interface."""

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules import power_wait
from baremetal.drivers.modules.redfish import client


_STATES = {'On': states.POWER_ON, 'Off': states.POWER_OFF,
           'PoweringOn': states.POWER_ON, 'PoweringOff': states.POWER_OFF}


def _state(data: dict) -> str:
    """The power state of a System's JSON."""
    return _STATES.get(_text(data.get('PowerState')), states.ERROR)


def _text(value):
    """A System's PowerState if it is a text, else None (a BMC may send
    a list or an object, which no mapping can look up)."""
    return value if isinstance(value, str) else None


def wait_for(task, data: dict | None, wanted: str, timeout: int,
             what: str) -> None:
    """Re-read the system until it reports ``wanted`` (on/off; a
    transitional PoweringOn/Off does not count); at once where the
    System's JSON just read (``data``) reports it and nothing was asked
    of it since (``data`` None: read first).  A re-read takes the
    System's JSON alone (client.system_fields): sushy's refresh parsed
    every field of it each time."""
    conf = task.conductor.conf
    raw = {states.POWER_ON: 'On', states.POWER_OFF: 'Off'}[wanted]
    if data is not None and data.get('PowerState') == raw:
        return

    def read():
        value = client.system_fields(task.node, conf,
                                     'read power state').get('PowerState')
        return {'On': states.POWER_ON, 'Off': states.POWER_OFF}.get(
            _text(value)), value

    power_wait.wait_for(task.node.uuid, read, wanted, timeout,
                        conf.redfish.power_poll_interval, what)


def reset(task, data: dict, reset_type: str, what: str) -> None:
    client.reset_system(task.node, task.conductor.conf, data, reset_type,
                        what)


def restart(task, data: dict) -> None:
    """Reboot hard (or power on when off) and wait until it is on."""
    conf = task.conductor.conf.conductor
    if _state(data) == states.POWER_ON:
        reset(task, data, 'ForceRestart', 'reboot')
    else:
        reset(task, data, 'On', 'power on')
    wait_for(task, None, states.POWER_ON,
             conf.power_state_change_timeout, 'reboot')


class RedfishPower(client.Interface, base.PowerInterface):
    def get_power_state(self, task):
        return _state(self._system_fields(task))

    def bmc_endpoint(self, driver_info):
        return client.endpoint(driver_info)

    def get_supported_power_states(self, task):
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_REBOOT, states.SOFT_POWER_OFF]

    def set_power_state(self, task, power_state, timeout=None):
        conf = task.conductor.conf.conductor
        # the System's JSON is all a power change needs (its state and
        # reset action): sushy's System, which parses every field, is
        # not built
        system = self._system_fields(task)
        current = _state(system)
        if power_state == states.POWER_ON:
            if current != states.POWER_ON:
                reset(task, system, 'On', 'power on')
                system = None
            wait_for(task, system, states.POWER_ON,
                     timeout or conf.power_state_change_timeout,
                     'power on')
        elif power_state in (states.POWER_OFF, states.SOFT_POWER_OFF):
            soft = power_state == states.SOFT_POWER_OFF
            if current != states.POWER_OFF:
                reset(task, system,
                      'GracefulShutdown' if soft else 'ForceOff',
                      'soft power off' if soft else 'power off')
                system = None
            wait_for(task, system, states.POWER_OFF,
                     timeout or (conf.soft_power_off_timeout if soft
                                 else conf.power_state_change_timeout),
                     power_state)
        elif power_state == states.SOFT_REBOOT:
            if current == states.POWER_ON:
                reset(task, system, 'GracefulRestart', 'soft reboot')
            else:
                reset(task, system, 'On', 'power on')
            wait_for(task, None, states.POWER_ON,
                     timeout or conf.soft_power_off_timeout, 'soft reboot')
        else:
            raise exception.InvalidParameterValue(
                'redfish power cannot go to "%s"' % power_state)

    def reboot(self, task, timeout=None):
        restart(task, self._system_fields(task))
