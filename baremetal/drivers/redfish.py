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
    def supported_firmware_interfaces(self):
        return ['redfish', 'no-firmware']

    @property
    def supported_raid_interfaces(self):
        return ['redfish', 'no-raid', 'agent']

    @property
    def supported_vendor_interfaces(self):
        return ['redfish', 'no-vendor']

    @property
    def supported_inspect_interfaces(self):
        return ['redfish', 'no-inspect', 'agent']

    @property
    def supported_boot_interfaces(self):
        # fake: tests whose agent is a stand-in (tests/agent_double.py)
        # boot nothing; the agent deploy still waits for that agent
        return ['redfish-virtual-media', 'ipxe', 'fake']

    @property
    def supported_rescue_interfaces(self):
        return ['no-rescue', 'agent']

    @property
    def supported_deploy_interfaces(self):
        # the agent erases and writes disks; never fake, which does
        # neither (fake-hardware only)
        return ['direct', 'ramdisk']
