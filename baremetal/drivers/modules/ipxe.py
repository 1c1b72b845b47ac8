"""``ipxe`` boot interface: the agent ramdisk over the network.

The operator's DHCP server hands iPXE the conductor's ``boot.ipxe``
(``[deploy]http_url``/boot.ipxe; see doc/source/admin/ipxe.rst for a
dnsmasq example).  That script chains to a per-MAC script,
``ipxe/<mac with hyphens>.ipxe``, which the conductor writes for every
port of a node while it should boot the agent: kernel and initramfs
(published under ``ipxe/<node>/``) with the agent's kernel parameters.
Without a per-MAC script, ``boot.ipxe`` boots the local disk.  The node
is set to boot from the network once; after deployment it boots from
disk persistently.
"""

import os

from oslo_log import log

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import ramdisk_boot

LOG = log.getLogger(__name__)

BOOT_SCRIPT = 'boot.ipxe'

_BOOT_IPXE = """#!ipxe
# Written by baremetal: chain to the script of the NIC that booted (netX),
# else of any other NIC, if the node is to boot the agent; otherwise boot
# the local disk.
isset ${netX/mac} || goto nics
chain --autofree %(base)s/ipxe/${netX/mac:hexhyp}.ipxe || goto nics
:nics
set idx:int32 0
:nic
isset ${net${idx}/mac} || goto local
chain --autofree %(base)s/ipxe/${net${idx}/mac:hexhyp}.ipxe || goto next
:next
inc idx
goto nic
:local
# UEFI: back to the firmware with an error, so that it tries its next boot
# entry (the disk): on success UEFI's boot manager stops and shows its menu;
# legacy BIOS: boot the first disk
iseq ${platform} efi || goto bios
exit 1
:bios
sanboot --no-describe --drive 0x80 || exit
"""

_NODE_IPXE = """#!ipxe
%(timeout)skernel %(base)s/ipxe/%(uuid)s/kernel %(params)s initrd=initrd
initrd --name initrd %(base)s/ipxe/%(uuid)s/initrd
boot
"""


def _mac_name(address: str) -> str:
    return 'ipxe/%s.ipxe' % address.lower().replace(':', '-')


def _write(conf, name: str, text: str) -> None:
    path = os.path.join(http_files.root(conf), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def write_boot_script(conf) -> str:
    """(Re)write http_root/boot.ipxe; its URL."""
    base_url = http_files.base_url(conf)
    _write(conf, BOOT_SCRIPT, _BOOT_IPXE % {'base': base_url})
    return '%s/%s' % (base_url, BOOT_SCRIPT)


class IPXEBoot(base.BootInterface):
    boots_agent = True

    def get_properties(self):
        return dict(ramdisk_boot.PROPERTIES)

    def validate(self, task):
        boot_modes.validate(task)
        ramdisk_boot.images(task)
        if not [p for p in task.ports if p.pxe_enabled]:
            raise exception.MissingParameterValue(
                'Node %s has no port with pxe_enabled: iPXE boots it by '
                'the MAC address of such a port' % task.node.uuid)

    def prepare_ramdisk(self, task, ramdisk_params):
        conf = task.conductor.conf
        node = task.node
        with ramdisk_boot.fetched(
                task, instance=bool(ramdisk_params.get('instance'))) as (
                kernel, ramdisk):
            for src, name in ((kernel, 'kernel'), (ramdisk, 'initrd')):
                http_files.publish(conf, src,
                                   'ipxe/%s/%s' % (node.uuid, name))
        base_url = http_files.base_url(conf)
        params = ramdisk_boot.kernel_params(task, 'pxe',
                                            conf.pxe.kernel_append_params,
                                            ramdisk_params)
        timeout = conf.pxe.ipxe_timeout
        script = _NODE_IPXE % {
            'base': base_url, 'uuid': node.uuid,
            'params': params + ' BOOTIF=${mac}',
            'timeout': ('set net-timeout %d\n' % (timeout * 1000)
                        if timeout else '')}
        write_boot_script(conf)
        for port in task.ports:
            if port.pxe_enabled:
                _write(conf, _mac_name(port.address), script)
        task.driver.management.set_boot_device(task, 'pxe',
                                               persistent=False)
        LOG.info('Node %s: iPXE will boot the agent ramdisk', node.uuid)

    def clean_up_ramdisk(self, task):
        conf = task.conductor.conf
        for port in task.ports:
            http_files.unpublish(conf, _mac_name(port.address))
        for name in ('kernel', 'initrd'):
            http_files.unpublish(conf, 'ipxe/%s/%s' % (task.node.uuid,
                                                        name))

    def prepare_instance(self, task):
        """The node boots its disk from now on, persistently, in its
        boot mode (which the management interface sends with the
        device)."""
        self.clean_up_ramdisk(task)
        task.driver.management.set_boot_device(task, 'disk',
                                               persistent=True)
        boot_modes.record(task)
