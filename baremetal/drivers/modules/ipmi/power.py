"""``ipmi`` power interface (also registered as ``ipmitool``)."""

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules import power_wait
from baremetal.drivers.modules.ipmi import client

_STATES = {'on': states.POWER_ON, 'off': states.POWER_OFF}


# power target -> the (command, state to wait for, soft?) it takes
_PLANS = {
    states.POWER_ON: (('on', 'on', False),),
    states.POWER_OFF: (('off', 'off', False),),
    states.SOFT_POWER_OFF: (('shutdown', 'off', True),),
    states.SOFT_REBOOT: (('shutdown', 'off', True), ('on', 'on', False)),
    states.REBOOT: (('off', 'off', False), ('on', 'on', False)),
}


class IPMIPower(client.Interface, base.PowerInterface):
    """Power through the BMC's chassis control commands."""

    def get_power_state(self, task):
        raw = self._bmc(task).call('get power state',
                                   client.power_state)
        return _STATES.get(raw, states.ERROR)

    def bmc_endpoint(self, driver_info):
        return client.endpoint(driver_info)

    def get_supported_power_states(self, task):
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_REBOOT, states.SOFT_POWER_OFF]

    def _switch(self, bmc, raw: str, wanted: str, timeout: int,
                label: str) -> None:
        """Ask for ``raw`` ('on', 'off', 'shutdown') and wait until the
        BMC reports ``wanted`` ('on'/'off')."""
        if bmc.call('get power state', client.power_state) == wanted:
            return
        bmc.call('power %s' % label, client.chassis_control(raw))

        def read():
            said = bmc.call('get power state', client.power_state)
            return _STATES.get(said), said
        power_wait.wait_for(bmc.node.uuid, read, _STATES[wanted], timeout,
                            0.1, '"%s"' % label)

    def set_power_state(self, task, power_state, timeout=None):
        plan = _PLANS.get(power_state)
        if plan is None:
            raise exception.InvalidParameterValue(
                'ipmi power cannot go to "%s"' % power_state)
        conf = task.conductor.conf.conductor
        bmc = self._bmc(task)
        for raw, wanted, soft in plan:
            limit = timeout or (conf.soft_power_off_timeout if soft
                                else conf.power_state_change_timeout)
            self._switch(bmc, raw, wanted, limit,
                         'soft off' if soft else raw)

    def reboot(self, task, timeout=None):
        """Hard reboot: power off, then on (each waited for)."""
        self.set_power_state(task, states.REBOOT, timeout)
