"""``ipmi`` management interface (also registered as ``ipmitool``)."""

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules.ipmi import client
from baremetal.drivers.modules.ipmi import sensors

# Ironic boot device name -> pyghmi's
_TO_IPMI = {'pxe': 'network', 'disk': 'hd', 'cdrom': 'optical',
            'bios': 'setup', 'safe': 'safe'}
_FROM_IPMI = {v: k for k, v in _TO_IPMI.items()}


class IPMIManagement(client.Interface, base.ManagementInterface):
    """Boot device and NMI through IPMI chassis commands.

    IPMI has no boot mode of its own: the mode travels as a flag of the
    boot device override (Set System Boot Options, boot flags, "EFI
    boot"), so every boot device change sends the node's mode
    (drivers/modules/boot_modes.py), and the mode is read back from the
    BMC's override while one is set.
    """

    def get_supported_boot_devices(self, task):
        return list(_TO_IPMI)

    def set_boot_device(self, task, device, persistent=False):
        if device not in _TO_IPMI:
            raise exception.InvalidParameterValue(
                'Invalid boot device %s specified; supported: %s'
                % (device, ', '.join(_TO_IPMI)))
        mode = boot_modes.for_task(task)

        def setdev(cmd):
            answer = cmd.set_bootdev(_TO_IPMI[device],
                                     persist=bool(persistent),
                                     uefiboot=mode == boot_modes.UEFI)
            if isinstance(answer, dict) and 'error' in answer:
                raise exception.IPMIFailure(cmd=answer['error'])

        self._bmc(task).call('set boot device %s (%s)' % (device, mode),
                             setdev)

    def get_boot_device(self, task):
        answer = self._bmc(task).call('get boot device',
                                      lambda c: c.get_bootdev())
        dev = answer.get('bootdev')
        if dev in ('default', None):
            return {'boot_device': None, 'persistent': None}
        return {'boot_device': _FROM_IPMI.get(dev, dev),
                'persistent': bool(answer.get('persistent'))}

    def get_boot_mode(self, task) -> str | None:
        """The EFI flag of the BMC's boot device override while one is
        set; otherwise the mode the node asks for, which the next boot
        device change will send."""
        answer = self._bmc(task).call('get boot device',
                                      lambda c: c.get_bootdev())
        if answer.get('bootdev') in ('default', None) or \
                'uefimode' not in answer:
            return boot_modes.for_task(task)
        return boot_modes.UEFI if answer['uefimode'] else boot_modes.BIOS

    def set_boot_mode(self, task, mode: str) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver,
            extension='set_boot_mode: IPMI sends the boot mode with each '
                      'boot device change; set boot_mode:%s in the '
                      'node\'s properties/capabilities instead' % mode)

    def inject_nmi(self, task):
        def diag(cmd):
            answer = cmd.raw_command(netfn=0, command=2, data=[4])
            if 'error' in answer:
                raise exception.IPMIFailure(cmd='inject NMI: %s'
                                            % answer['error'])
        self._bmc(task).call('inject NMI', diag)

    def get_sensors_data(self, task) -> dict:
        """Every sensor of the BMC's SDR repository, read in one session,
        in Ironic's shape (ipmi/sensors.py)."""
        readings = self._bmc(task).call('read sensors',
                                        client.read_sensors)
        return sensors.ironic_shape(readings)
