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
        return ['redfish', 'no-inspect', 'agent']

    @property
    def supported_boot_interfaces(self):
        # fake: only for tests that exercise the BMC alone
        return ['redfish-virtual-media', 'ipxe', 'fake']

    @property
    def supported_rescue_interfaces(self):
        return ['no-rescue', 'agent']

    @property
    def supported_deploy_interfaces(self):
        # the agent erases and writes disks; fake does neither (test
        # only, and refused for automated cleaning: see FakeDeploy)
        return ['direct', 'ramdisk', 'fake']
