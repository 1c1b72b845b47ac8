"""The ``ipmi`` hardware type: power and boot devices over IPMI."""

from baremetal.drivers import hardware_type


class IPMIHardware(hardware_type.AbstractHardwareType):
    """Any server whose BMC speaks IPMI 2.0 (pyghmi, no ipmitool)."""

    @property
    def supported_power_interfaces(self):
        return ['ipmi', 'ipmitool']

    @property
    def supported_management_interfaces(self):
        return ['ipmi', 'ipmitool', 'noop']

    @property
    def supported_inspect_interfaces(self):
        return ['no-inspect', 'agent']

    @property
    def supported_boot_interfaces(self):
        # fake: tests whose agent is a stand-in (tests/agent_double.py)
        # boot nothing; the agent deploy still waits for that agent
        return ['ipxe', 'fake']

    @property
    def supported_rescue_interfaces(self):
        return ['no-rescue', 'agent']

    @property
    def supported_deploy_interfaces(self):
        # never fake: it writes and erases nothing (fake-hardware only)
        return ['direct', 'ramdisk']

    @property
    def supported_console_interfaces(self):
        return ['no-console']
