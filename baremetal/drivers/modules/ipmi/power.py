"""``ipmi`` power interface (also registered as ``ipmitool``)."""

import time

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.ipmi import client

_STATES = {'on': states.POWER_ON, 'off': states.POWER_OFF}


def _power(cmd) -> str:
    return cmd.get_power()['powerstate']


class IPMIPower(base.PowerInterface):
    """Power through the BMC's chassis control commands."""

    def get_properties(self):
        return dict(client.PROPERTIES)

    def validate(self, task):
        client.parse(task.node, task.conductor.conf)

    def _bmc(self, task) -> client.BMC:
        return client.BMC(task.node, task.conductor.conf)

    def get_power_state(self, task):
        raw = self._bmc(task).call('get power state', _power)
        return _STATES.get(raw, states.ERROR)

    def get_supported_power_states(self, task):
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_REBOOT, states.SOFT_POWER_OFF]

    def _switch(self, bmc, raw: str, wanted: str, timeout: int,
                label: str) -> None:
        """Ask for ``raw`` ('on', 'off', 'shutdown') and wait until the
        BMC reports ``wanted`` ('on'/'off')."""
        now = bmc.call('get power state', _power)
        if now == wanted:
            return
        bmc.call('power %s' % label, lambda c: c.set_power(raw))
        deadline = time.monotonic() + timeout
        while True:
            now = bmc.call('get power state', _power)
            if now == wanted:
                return
            if time.monotonic() >= deadline:
                raise exception.PowerStateFailure(
                    'Node %s did not reach power state "%s" within %d '
                    'seconds of "%s" (the BMC reports "%s")'
                    % (bmc.node.uuid, wanted, timeout, label, now))
            time.sleep(0.1)

    def set_power_state(self, task, power_state, timeout=None):
        conf = task.conductor.conf.conductor
        bmc = self._bmc(task)
        if power_state == states.POWER_ON:
            self._switch(bmc, 'on', 'on',
                         timeout or conf.power_state_change_timeout,
                         'on')
        elif power_state == states.POWER_OFF:
            self._switch(bmc, 'off', 'off',
                         timeout or conf.power_state_change_timeout,
                         'off')
        elif power_state == states.SOFT_POWER_OFF:
            self._switch(bmc, 'shutdown', 'off',
                         timeout or conf.soft_power_off_timeout,
                         'soft off')
        elif power_state == states.SOFT_REBOOT:
            self._switch(bmc, 'shutdown', 'off',
                         timeout or conf.soft_power_off_timeout,
                         'soft off')
            self._switch(bmc, 'on', 'on', conf.power_state_change_timeout,
                         'on')
        else:
            raise exception.InvalidParameterValue(
                'ipmi power cannot go to "%s"' % power_state)

    def reboot(self, task, timeout=None):
        """Hard reboot: power off, then on (each waited for)."""
        conf = task.conductor.conf.conductor
        bmc = self._bmc(task)
        limit = timeout or conf.power_state_change_timeout
        self._switch(bmc, 'off', 'off', limit, 'off')
        self._switch(bmc, 'on', 'on', limit, 'on')
