"""``no-*`` / ``noop`` interfaces: a slot a hardware type leaves empty."""

from baremetal.common import exception
from baremetal.drivers import base


class _Unsupported:
    """validate() says the feature is not supported by this node."""

    def get_properties(self):
        return {}

    def validate(self, task):
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension=self.interface_type)


class _Noop:
    def get_properties(self):
        return {}

    def validate(self, task):
        pass


class NoBIOS(_Unsupported, base.BIOSInterface):
    pass


class NoConsole(_Unsupported, base.ConsoleInterface):
    pass


class NoFirmware(_Unsupported, base.FirmwareInterface):
    pass


class NoInspect(_Unsupported, base.InspectInterface):
    def inspect_hardware(self, task):
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='inspect')


class NoRAID(_Unsupported, base.RAIDInterface):
    pass


class NoRescue(_Unsupported, base.RescueInterface):
    pass


class NoVendor(_Unsupported, base.VendorInterface):
    pass


class NoopManagement(_Noop, base.ManagementInterface):
    def get_supported_boot_devices(self, task):
        return []

    def set_boot_device(self, task, device, persistent=False):
        pass

    def get_boot_device(self, task):
        return {'boot_device': None, 'persistent': None}


class NoopNetwork(_Noop, base.NetworkInterface):
    def vif_detach(self, task, vif_id: str) -> None:
        """As Ironic's noop network: detaching a VIF that is not
        attached is not an error."""
        vifs = task.node.driver_internal_info.get('vifs') or ()
        if vif_id in vifs:
            super().vif_detach(task, vif_id)


class FlatNetwork(_Noop, base.NetworkInterface):
    pass


class NoopStorage(_Noop, base.StorageInterface):
    pass
