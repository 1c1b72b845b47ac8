"""``redfish`` management interface: boot device, boot mode and Secure
Boot."""

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import sensors
from baremetal.drivers.modules.redfish import vmedia

# Ironic boot device -> Redfish BootSourceOverrideTarget
_TO_REDFISH = {'pxe': 'Pxe', 'disk': 'Hdd', 'cdrom': 'Cd',
               'bios': 'BiosSetup', 'usb': 'Usb', 'floppy': 'Floppy'}
_FROM_REDFISH = {v: k for k, v in _TO_REDFISH.items()}
BOOT_MODES = {'uefi': 'UEFI', 'bios': 'Legacy'}
# Redfish Status.Health -> the node's health
_HEALTH = {'OK': states.HEALTH_OK, 'Warning': states.HEALTH_WARNING,
           'Critical': states.HEALTH_CRITICAL}


def _value(x):
    return getattr(x, 'value', x)


def _boot(system, field: str):
    """A field of the System's Boot: None where the BMC sends no Boot
    object (sushy's ``boot`` is None then)."""
    return _value(getattr(system.boot, field, None))


def requested_boot_mode(node) -> str | None:
    """The mode the node asks for itself, None when it asks for none
    (then [deploy]default_boot_mode applies): use
    boot_modes.for_task(task), which applies it."""
    return boot_modes.asked(node)


class RedfishManagement(client.Interface, base.ManagementInterface):
    supports_secure_boot = True

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
        mode = boot_modes.for_task(task)
        system = self._system(task)
        enabled = (sushy.BootSourceOverrideEnabled.CONTINUOUS if persistent
                   else sushy.BootSourceOverrideEnabled.ONCE)
        options = {}
        if _boot(system, 'mode') != BOOT_MODES[mode]:
            # the node's mode goes with the device change where the BMC
            # has another; sent only then (as Ironic): some BMCs redo
            # the firmware's set-up on every mode change (sushy-tools
            # switches Secure Boot off)
            options['mode'] = sushy.BootSourceOverrideMode(BOOT_MODES[mode])
        with client.call(task.node, task.conductor.conf,
                         'set boot device %s' % device):
            system.set_system_boot_options(
                target=sushy.BootSource(_TO_REDFISH[device]),
                enabled=enabled, **options)

    def get_boot_device(self, task):
        system = self._system(task)
        target = _boot(system, 'target')
        enabled = _boot(system, 'enabled')
        if target in (None, 'None'):
            return {'boot_device': None, 'persistent': None}
        return {'boot_device': _FROM_REDFISH.get(target, target),
                'persistent': enabled == 'Continuous'}

    def get_node_health(self, task) -> str | None:
        """The ComputerSystem's Status.Health (API 1.109)."""
        status = self._system_fields(task).get('Status')
        return _HEALTH.get(status.get('Health')) if isinstance(
            status, dict) else None

    def get_sensors_data(self, task) -> dict:
        """Temperatures, fans, power supplies and drives, in the shape
        of Ironic's redfish interface (redfish/sensors.py)."""
        system = self._system(task)
        with client.call(task.node, task.conductor.conf,
                         'read sensors'):
            return sensors.read(task.node, system)

    def get_boot_mode(self, task) -> str | None:
        mode = _boot(self._system(task), 'mode')
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

    # ---- Secure Boot (the ComputerSystem's SecureBoot resource) ----
    def get_secure_boot_state(self, task) -> bool | None:
        system = self._system(task)
        with client.call(task.node, task.conductor.conf,
                         'read the Secure Boot state'):
            try:
                secure_boot = system.secure_boot
            except Exception:   # sushy: MissingAttributeError
                return None     # the BMC has no SecureBoot resource
            return None if secure_boot is None else \
                bool(secure_boot.enabled)

    def set_secure_boot_state(self, task, state: bool) -> None:
        """Turn Secure Boot on or off; it takes effect at the next boot.
        Refused in legacy BIOS mode, where there is no Secure Boot."""
        node = task.node
        if self.get_boot_mode(task) == boot_modes.BIOS:
            raise exception.InvalidParameterValue(
                'Node %s boots in legacy BIOS mode, which has no Secure '
                'Boot: set its boot mode to uefi first' % node.uuid)
        system = self._system(task)
        with client.call(node, task.conductor.conf,
                         'turn Secure Boot %s' % ('on' if state else 'off')):
            secure_boot = system.secure_boot
            if bool(secure_boot.enabled) != bool(state):
                secure_boot.set_enabled(bool(state))
                secure_boot.refresh()
            now = bool(secure_boot.enabled)
        if now != bool(state):
            raise exception.InvalidParameterValue(
                'Node %s: the BMC accepted turning Secure Boot %s but '
                'still reports it %s' % (node.uuid,
                                         'on' if state else 'off',
                                         'on' if now else 'off'))
        node.secure_boot = now

    # ---- virtual media (API 1.89, 1.93) ----
    def get_virtual_media(self, task):
        return vmedia.describe(task, self._system(task))

    def attach_virtual_media(self, task, device_type, image_url):
        vmedia.insert(task, self._system(task), image_url, device_type)

    def detach_virtual_media(self, task, device_types=None):
        vmedia.eject(task, self._system(task), device_types)
