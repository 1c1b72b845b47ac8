"""``redfish`` management interface: boot device and boot mode."""

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client

# Ironic boot device -> Redfish BootSourceOverrideTarget
_TO_REDFISH = {'pxe': 'Pxe', 'disk': 'Hdd', 'cdrom': 'Cd',
               'bios': 'BiosSetup', 'usb': 'Usb', 'floppy': 'Floppy'}
_FROM_REDFISH = {v: k for k, v in _TO_REDFISH.items()}
BOOT_MODES = {'uefi': 'UEFI', 'bios': 'Legacy'}


def _value(x):
    return getattr(x, 'value', x)


class RedfishManagement(base.ManagementInterface):
    def get_properties(self):
        return dict(client.PROPERTIES)

    def validate(self, task):
        client.parse(task.node, task.conductor.conf)

    def _system(self, task):
        return client.get_system(task.node, task.conductor.conf)

    def get_supported_boot_devices(self, task):
        system = self._system(task)
        with client.call(task.node, task.conductor.conf,
                         'read allowed boot devices'):
            allowed = {_value(v) for v in
                       system.get_allowed_system_boot_source_values()}
        return [d for d, r in _TO_REDFISH.items() if r in allowed] or \
            list(_TO_REDFISH)

    def set_boot_device(self, task, device, persistent=False):
        import sushy
        if device not in _TO_REDFISH:
            raise exception.InvalidParameterValue(
                'Invalid boot device %s specified; supported: %s'
                % (device, ', '.join(_TO_REDFISH)))
        system = self._system(task)
        enabled = (sushy.BootSourceOverrideEnabled.CONTINUOUS if persistent
                   else sushy.BootSourceOverrideEnabled.ONCE)
        with client.call(task.node, task.conductor.conf,
                         'set boot device %s' % device):
            system.set_system_boot_options(
                target=sushy.BootSource(_TO_REDFISH[device]),
                enabled=enabled)

    def get_boot_device(self, task):
        system = self._system(task)
        target = _value(system.boot.target)
        enabled = _value(system.boot.enabled)
        if target in (None, 'None'):
            return {'boot_device': None, 'persistent': None}
        return {'boot_device': _FROM_REDFISH.get(target, target),
                'persistent': enabled == 'Continuous'}

    def get_boot_mode(self, task) -> str | None:
        mode = _value(self._system(task).boot.mode)
        return {'UEFI': 'uefi', 'Legacy': 'bios'}.get(mode)

    def set_boot_mode(self, task, mode: str) -> None:
        import sushy
        if mode not in BOOT_MODES:
            raise exception.InvalidParameterValue(
                'Invalid boot mode %r; supported: %s'
                % (mode, ', '.join(BOOT_MODES)))
        system = self._system(task)
        with client.call(task.node, task.conductor.conf,
                         'set boot mode %s' % mode):
            system.set_system_boot_options(
                mode=sushy.BootSourceOverrideMode(BOOT_MODES[mode]))
