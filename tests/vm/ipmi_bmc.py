"""An IPMI BMC for a test-bed machine: the project's virtual IPMI BMC
(tests/bmc/ipmi_server.py, pyghmi's BMC server) acting on a libvirt
domain.

Run as its own process: ``python -m tests.vm.ipmi_bmc --port P
--domain UUID --state-file F``. Power commands start, stop and reset the
domain; the boot device is the domain's: ``network`` gives the NIC the
first boot index (QEMU's iPXE, DHCP from QEMU's user-mode network, whose
boot file is the service's boot.ipxe), ``hd`` leaves only the disk. A
boot device set "once" is applied to the next start and then undone,
as a BMC does.  The boot flags' "EFI boot" bit (pyghmi's ``uefiboot``)
picks the firmware, as sushy-tools' libvirt driver does for Redfish's
BootSourceOverrideMode: OVMF (its variables kept in the machine's own
NVRAM file from one boot to the next) when set, SeaBIOS when clear.
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ET

import libvirt

from tests.bmc import ipmi_server
from tests.vm import bed

QEMU_NS = 'http://libvirt.org/schemas/domain/qemu/1.0'
ET.register_namespace('qemu', QEMU_NS)


class LibvirtBMC(ipmi_server.VirtualBMC):
    def __init__(self, authdata, port, state_file, delay, domain):
        self.domain = domain
        super().__init__(authdata, port, state_file, delay)
        self.state['power'] = 'on' if self._dom().isActive() else 'off'
        self._save()

    def _dom(self):
        conn = libvirt.open(bed.LIBVIRT_URI)
        return conn.lookupByUUIDString(self.domain)

    def get_power_state(self):
        return 'on' if self._dom().isActive() else 'off'

    def _start(self):
        dom = self._dom()
        self._apply_boot_device(dom)
        dom.create()
        if not self.state['persistent']:
            # a one-time boot device lasts for one start
            self.state['bootdev'] = 'default'
            self._apply_boot_device(self._dom())
        self._power('on')

    def power_on(self):
        if not self._dom().isActive():
            self._start()

    def power_off(self):
        dom = self._dom()
        if dom.isActive():
            dom.destroy()
        self._power('off')

    power_shutdown = power_off

    def power_reset(self):
        self.power_off()
        self._start()

    power_cycle = power_reset

    def _apply_boot_device(self, dom):
        """Rewrite the domain's persistent definition: the NIC's boot
        index first for network boot, none otherwise; the firmware of
        the boot mode while a boot device is set (without one the
        machine keeps the firmware it has, as a real one keeps its
        mode)."""
        tree = ET.fromstring(  # noqa: S314  (libvirt's own XML)
            dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
        if self.state['bootdev'] != 'default':
            _set_firmware(tree.find('os'), bool(self.state.get('uefi')))
        network = self.state['bootdev'] == 'network'
        for arg in tree.iter('{%s}arg' % QEMU_NS):
            value = arg.get('value', '')
            if value.startswith('virtio-net-pci,'):
                value = re.sub(r',bootindex=\d+', '', value)
                if network:
                    value += ',bootindex=0'
                arg.set('value', value)
        dom.connect().defineXML(ET.tostring(tree).decode())


def _set_firmware(os_el, uefi: bool) -> None:
    """OVMF (UEFI, no Secure Boot) or SeaBIOS in a domain's ``<os>``,
    as sushy-tools writes them; a UEFI loader already there (Secure
    Boot's) is left alone."""
    loader = os_el.find('loader')
    if uefi and loader is None:
        ET.SubElement(os_el, 'loader', readonly='yes', secure='no',
                      type='pflash').text = bed.OVMF_CODE
        ET.SubElement(os_el, 'nvram', template=bed.OVMF_VARS)
    elif not uefi and loader is not None:
        os_el.remove(loader)
        nvram = os_el.find('nvram')
        if nvram is not None:
            os_el.remove(nvram)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--user', default='admin')
    p.add_argument('--password', default='password')
    p.add_argument('--state-file', required=True)
    p.add_argument('--domain', required=True)
    p.add_argument('--delay', type=float, default=0.001)
    args = p.parse_args(argv)
    libvirt.registerErrorHandler(lambda *a: None, None)
    server = LibvirtBMC({args.user: args.password}, args.port,
                        args.state_file, args.delay, args.domain)
    print('listening on 127.0.0.1:%d' % args.port, flush=True)
    ipmi_server.serve_forever(server)


if __name__ == '__main__':
    sys.exit(main())
