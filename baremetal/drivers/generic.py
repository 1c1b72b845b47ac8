"""Generic hardware types that need no BMC protocol."""

from baremetal.drivers import hardware_type


class ManualManagementHardware(hardware_type.AbstractHardwareType):
    """Real servers without a BMC the service can drive: the operator
    powers them and sets their boot device (fake power, noop
    management); the service boots the agent ramdisk over iPXE and
    deploys, cleans, inspects and rescues through it.  No fake deploy:
    on a real server it would write and erase nothing."""

    @property
    def supported_power_interfaces(self):
        return ['fake']

    @property
    def supported_management_interfaces(self):
        return ['noop']

    @property
    def supported_boot_interfaces(self):
        return ['ipxe']

    @property
    def supported_deploy_interfaces(self):
        return ['direct', 'ramdisk']

    @property
    def supported_inspect_interfaces(self):
        return ['no-inspect', 'agent']

    @property
    def supported_rescue_interfaces(self):
        return ['no-rescue', 'agent']
