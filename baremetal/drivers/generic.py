"""Generic hardware types that need no BMC protocol."""

from baremetal.drivers import hardware_type


class ManualManagementHardware(hardware_type.AbstractHardwareType):
    """Power and boot devices are managed by hand (fake power, noop
    management); deployment is fake until an agent deploy exists."""

    @property
    def supported_power_interfaces(self):
        return ['fake']

    @property
    def supported_management_interfaces(self):
        return ['noop']
