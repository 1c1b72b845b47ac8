"""Hardware types: which interface implementations a kind of server
supports, in order of preference."""

import abc


class AbstractHardwareType(metaclass=abc.ABCMeta):
    """A hardware type lists, per interface type, the implementations it
    supports (entry point names), most preferred first.  The first one
    that is enabled is the default for new nodes."""

    @property
    @abc.abstractmethod
    def supported_power_interfaces(self) -> list[str]:
        """Power interfaces; at least one is required."""

    @property
    @abc.abstractmethod
    def supported_management_interfaces(self) -> list[str]:
        """Management interfaces; at least one is required."""

    @property
    def supported_bios_interfaces(self) -> list[str]:
        return ['no-bios']

    @property
    def supported_firmware_interfaces(self) -> list[str]:
        return ['no-firmware']

    @property
    def supported_boot_interfaces(self) -> list[str]:
        return ['fake']

    @property
    def supported_console_interfaces(self) -> list[str]:
        return ['no-console']

    @property
    def supported_deploy_interfaces(self) -> list[str]:
        return ['fake']

    @property
    def supported_inspect_interfaces(self) -> list[str]:
        return ['no-inspect']

    @property
    def supported_network_interfaces(self) -> list[str]:
        return ['noop', 'flat']

    @property
    def supported_raid_interfaces(self) -> list[str]:
        # agent: software RAID the agent ramdisk builds (any server)
        return ['no-raid', 'agent']

    @property
    def supported_rescue_interfaces(self) -> list[str]:
        return ['no-rescue']

    @property
    def supported_storage_interfaces(self) -> list[str]:
        return ['noop']

    @property
    def supported_vendor_interfaces(self) -> list[str]:
        return ['no-vendor']

    def supported(self, interface_type: str) -> list[str]:
        return list(getattr(self, 'supported_%s_interfaces'
                            % interface_type))

    def get_properties(self) -> dict[str, str]:
        return {}
