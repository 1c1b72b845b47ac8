"""The fake-hardware type: every interface has a ``fake`` implementation."""

from baremetal.drivers import hardware_type


class FakeHardware(hardware_type.AbstractHardwareType):
    """Hardware that needs no hardware: for tests, demos and benches."""

    @property
    def supported_power_interfaces(self):
        return ['fake']

    @property
    def supported_management_interfaces(self):
        return ['fake', 'noop']

    @property
    def supported_bios_interfaces(self):
        return ['fake', 'no-bios']

    @property
    def supported_firmware_interfaces(self):
        return ['fake', 'no-firmware']

    @property
    def supported_boot_interfaces(self):
        return ['fake', 'ipxe']

    @property
    def supported_console_interfaces(self):
        return ['fake', 'no-console']

    @property
    def supported_deploy_interfaces(self):
        # the agent ones too: fake power and boot, a real agent protocol
        return ['fake', 'direct', 'ramdisk']

    @property
    def supported_inspect_interfaces(self):
        return ['fake', 'no-inspect', 'agent']

    @property
    def supported_network_interfaces(self):
        return ['noop', 'flat']

    @property
    def supported_raid_interfaces(self):
        return ['fake', 'no-raid', 'agent']

    @property
    def supported_rescue_interfaces(self):
        return ['fake', 'no-rescue', 'agent']

    @property
    def supported_storage_interfaces(self):
        return ['noop', 'fake']

    @property
    def supported_vendor_interfaces(self):
        return ['fake', 'no-vendor']
