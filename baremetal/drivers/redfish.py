"""The ``redfish`` hardware type."""

from baremetal.drivers import hardware_type


class RedfishHardware(hardware_type.AbstractHardwareType):
    """Servers whose BMC offers the DMTF Redfish API (sushy)."""

    @property
    def supported_power_interfaces(self):
        return ['redfish']

    @property
    def supported_management_interfaces(self):
        return ['redfish', 'noop']

    @property
    def supported_bios_interfaces(self):
        return ['redfish', 'no-bios']

    @property
    def supported_inspect_interfaces(self):
        return ['redfish', 'no-inspect']
