"""``redfish-virtual-media`` boot interface: the agent ramdisk as an ISO
the BMC inserts as a virtual CD.

The ISO holds ``deploy_kernel`` and ``deploy_ramdisk`` (driver_info, else
``[conductor]deploy_kernel``/``deploy_ramdisk``), bootable by legacy
BIOS (isolinux) and by UEFI (an EFI System Partition image, efi_image.py:
required when the node boots in ``uefi`` mode, its own or
``[deploy]default_boot_mode``; added whenever one can be had), with the kernel
parameters the agent needs (``ipa-api-url``, ``boot_method=vmedia``,
``ipa-agent-token``) and ``kernel_append_params`` (driver_info, else
``[redfish]``).  The agent token of the boot is generated here and
written into the command line, so no lookup has to hand it out
(common/agent_tokens.py); the ISO is therefore built for one boot only,
published under ``[deploy]http_root`` as ``vmedia/<node uuid>-<random>.iso``
(a name nobody can guess), inserted into the BMC's CD/DVD virtual media,
and the node is set to boot from CD once.  It is withdrawn as soon as
the agent it booted reports in with its token, and at the latest by
``clean_up_ramdisk``, which also ejects it.

A ramdisk deploy's instance ISO (instance_info kernel/ramdisk) carries
no token: it is built once per content and stays published while the
instance boots from it.
"""

import collections.abc
import contextlib
import secrets

from oslo_log import log

from baremetal.common import agent_tokens
from baremetal.drivers import base
from baremetal.drivers.modules import boot_iso
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules import efi_image
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import image_cache
from baremetal.drivers.modules import ramdisk_boot
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import vmedia

LOG = log.getLogger(__name__)

ISO_DIR = 'vmedia'


def _prefix(node) -> str:
    return '%s-' % node.uuid


def instance_iso_name(node) -> str:
    return '%s/%s.iso' % (ISO_DIR, node.uuid)


def _uefi(task) -> bool:
    return boot_modes.for_task(task) == boot_modes.UEFI


@contextlib.contextmanager
def _esp(task) -> collections.abc.Iterator[str | None]:
    """The ESP image the node's ISOs carry, or None (BIOS only): needed
    when the node boots in UEFI mode, added whenever one can be had."""
    if not efi_image.check(task, required=_uefi(task)):
        yield None
        return
    with efi_image.got(task) as path:
        yield path


def _secure_boot_off_unless_signed(task) -> None:
    """The agent's ISO boots with Secure Boot on only through signed
    loaders (efi_image.py); without them Secure Boot goes off for the
    ramdisk (an instance asking for it gets it back before it boots)."""
    if not _uefi(task) or efi_image.boots_signed(task):
        return
    mgmt = task.driver.management
    if getattr(mgmt, 'supports_secure_boot', False) and \
            mgmt.get_secure_boot_state(task):
        LOG.info('Node %s: Secure Boot off for the agent ramdisk (no '
                 'signed boot loaders on this conductor)', task.node.uuid)
        mgmt.set_secure_boot_state(task, False)


class RedfishVirtualMediaBoot(client.Interface, base.BootInterface):
    boots_agent = True
    boots_iso = True

    def get_properties(self):
        props = dict(client.PROPERTIES)
        props.update(ramdisk_boot.PROPERTIES)
        props['bootloader'] = ('EFI System Partition image the boot ISO '
                               'carries for UEFI boot: URL or local path, '
                               'as deploy_kernel. Optional, default '
                               '[conductor]bootloader, else built with '
                               'GRUB on the conductor.')
        return props

    def validate(self, task):
        super().validate(task)     # the BMC's driver_info
        ramdisk_boot.images(task)
        boot_iso.check_loader(task.conductor.conf)
        efi_image.check(task, required=_uefi(task))

    def prepare_ramdisk(self, task, ramdisk_params):
        conf = task.conductor.conf
        node = task.node
        self._withdraw(task)            # an earlier boot's, if any
        if ramdisk_params.get('boot_iso'):
            url = ramdisk_params['boot_iso']
            if image_cache.is_local(url):
                # an allowed local file: the BMC gets it from http_root
                with image_cache.fetched(
                        conf, url, field='instance_info boot_iso of node '
                        '%s' % node.uuid) as path:
                    url = http_files.publish(conf, path,
                                             instance_iso_name(node),
                                             external=True)
        elif ramdisk_params.get('instance'):
            with ramdisk_boot.fetched(task, instance=True) as (
                    kernel, ramdisk), _esp(task) as esp:
                iso = boot_iso.build(conf, kernel, ramdisk,
                                     ramdisk_boot.kernel_params(
                                         task, 'vmedia',
                                         conf.redfish.kernel_append_params,
                                         ramdisk_params), esp)
            url = http_files.publish(conf, iso, instance_iso_name(node),
                                     external=True)
        else:
            url = self._agent_iso(task, ramdisk_params)
            _secure_boot_off_unless_signed(task)
        self.insert(task, url)
        # a live ISO is the instance: it stays the boot device
        task.driver.management.set_boot_device(
            task, 'cdrom', persistent=bool(ramdisk_params.get('boot_iso')))
        LOG.info('Node %s: boot ISO inserted as virtual media', node.uuid)

    def _agent_iso(self, task, ramdisk_params) -> str:
        """Build and publish the agent's ISO of this boot, its token in
        the command line; its URL."""
        conf = task.conductor.conf
        node = task.node
        with ramdisk_boot.fetched(task) as (kernel, ramdisk), \
                _esp(task) as esp:
            token = agent_tokens.pregenerate(node)
            params = ramdisk_boot.kernel_params(
                task, 'vmedia', conf.redfish.kernel_append_params,
                ramdisk_params)
            name = '%s/%s%s.iso' % (ISO_DIR, _prefix(node),
                                    secrets.token_urlsafe(24))
            target = http_files.path_for(conf, name)
            try:
                boot_iso.write(conf, kernel, ramdisk,
                               '%s ipa-agent-token=%s' % (params, token),
                               target, esp)
            except BaseException:
                agent_tokens.wipe(node)
                raise
        return http_files.url_for(conf, name, external=True)

    def _withdraw(self, task) -> None:
        http_files.unpublish_prefix(task.conductor.conf, ISO_DIR,
                                    _prefix(task.node))

    def ramdisk_booted(self, task):
        # the agent is running: the ISO with its token is not needed
        # again (a later boot of the ramdisk gets a new one)
        self._withdraw(task)

    def clean_up_ramdisk(self, task):
        self.eject(task)
        self._withdraw(task)
        http_files.unpublish(task.conductor.conf,
                             instance_iso_name(task.node))

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
