"""``redfish-virtual-media`` boot interface: the agent ramdisk as an ISO
the BMC inserts as a virtual CD.

The ISO holds ``deploy_kernel`` and ``deploy_ramdisk`` (driver_info, else
``[conductor]deploy_kernel``/``deploy_ramdisk``) with the kernel
parameters the agent needs (``ipa-api-url``, ``boot_method=vmedia``) and
``kernel_append_params`` (driver_info, else ``[redfish]``).  It is built
once per content (drivers/modules/boot_iso.py), published under
``[deploy]http_root`` as ``vmedia/<node uuid>.iso``, inserted into the
BMC's CD/DVD virtual media, and the node is set to boot from CD once.
``clean_up_ramdisk`` ejects it and withdraws the file.
"""

from oslo_log import log

from baremetal.drivers import base
from baremetal.drivers.modules import boot_iso
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import ramdisk_boot
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import vmedia

LOG = log.getLogger(__name__)

def iso_name(node) -> str:
    return 'vmedia/%s.iso' % node.uuid


class RedfishVirtualMediaBoot(client.Interface, base.BootInterface):
    boots_agent = True

    def get_properties(self):
        props = dict(client.PROPERTIES)
        props.update(ramdisk_boot.PROPERTIES)
        return props

    def validate(self, task):
        super().validate(task)     # the BMC's driver_info
        ramdisk_boot.images(task)
        boot_iso.check_loader(task.conductor.conf)

    def prepare_ramdisk(self, task, ramdisk_params):
        conf = task.conductor.conf
        if ramdisk_params.get('boot_iso'):
            url = ramdisk_params['boot_iso']
        else:
            kernel, ramdisk = ramdisk_boot.fetch(
                task, instance=bool(ramdisk_params.get('instance')))
            iso = boot_iso.build(conf, kernel, ramdisk,
                                 ramdisk_boot.kernel_params(
                                     task, 'vmedia',
                                     conf.redfish.kernel_append_params,
                                     ramdisk_params))
            url = http_files.publish(conf, iso, iso_name(task.node),
                                     external=True)
        self.insert(task, url)
        task.driver.management.set_boot_device(task, 'cdrom',
                                               persistent=False)
        LOG.info('Node %s: boot ISO %s inserted as virtual media',
                 task.node.uuid, url)

    def clean_up_ramdisk(self, task):
        self.eject(task)
        http_files.unpublish(task.conductor.conf, iso_name(task.node))

    def prepare_instance(self, task):
        """Boot the written disk from now on."""
        self.eject(task)
        task.driver.management.set_boot_device(task, 'disk',
                                               persistent=True)

    # ---- virtual media ----
    def insert(self, task, url: str) -> None:
        vmedia.insert(task, self._system(task), url, 'cdrom')

    def eject(self, task) -> None:
        vmedia.eject(task, self._system(task), ['cdrom'])
