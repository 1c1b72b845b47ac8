"""``ipmi`` management interface (also registered as ``ipmitool``)."""

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers.modules.ipmi import client

# Ironic boot device name -> pyghmi's
_TO_IPMI = {'pxe': 'network', 'disk': 'hd', 'cdrom': 'optical',
            'bios': 'setup', 'safe': 'safe'}
_FROM_IPMI = {v: k for k, v in _TO_IPMI.items()}


class IPMIManagement(client.Interface, base.ManagementInterface):
    """Boot device and NMI through IPMI chassis commands."""

    def get_supported_boot_devices(self, task):
        return list(_TO_IPMI)

    def set_boot_device(self, task, device, persistent=False):
        if device not in _TO_IPMI:
            raise exception.InvalidParameterValue(
                'Invalid boot device %s specified; supported: %s'
                % (device, ', '.join(_TO_IPMI)))

        def setdev(cmd):
            answer = cmd.set_bootdev(_TO_IPMI[device],
                                     persist=bool(persistent))
            if isinstance(answer, dict) and 'error' in answer:
                raise exception.IPMIFailure(cmd=answer['error'])

        self._bmc(task).call('set boot device %s' % device, setdev)

    def get_boot_device(self, task):
        answer = self._bmc(task).call('get boot device',
                                      lambda c: c.get_bootdev())
        dev = answer.get('bootdev')
        if dev in ('default', None):
            return {'boot_device': None, 'persistent': None}
        return {'boot_device': _FROM_IPMI.get(dev, dev),
                'persistent': bool(answer.get('persistent'))}

    def inject_nmi(self, task):
        def diag(cmd):
            answer = cmd.raw_command(netfn=0, command=2, data=[4])
            if 'error' in answer:
                raise exception.IPMIFailure(cmd='inject NMI: %s'
                                            % answer['error'])
        self._bmc(task).call('inject NMI', diag)
