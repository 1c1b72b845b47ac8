"""What every boot interface that boots the agent shares: which kernel
and initramfs to boot, and the kernel parameters the agent needs."""

import collections.abc
import contextlib

from baremetal.common import exception
from baremetal.drivers.modules import image_cache

PROPERTIES = {
    'deploy_kernel': 'Agent ramdisk kernel: http(s)/file URL or absolute '
                     'path (a local file inside [conductor]'
                     'file_url_allowed_paths). Optional when '
                     '[conductor]deploy_kernel is set.',
    'deploy_ramdisk': 'Agent ramdisk initramfs, as deploy_kernel.',
    'deploy_kernel_checksum': 'Checksum the fetched deploy_kernel must '
                              'match: sha256:<hex>, sha512:<hex> or the '
                              'bare hex digest. Optional.',
    'deploy_ramdisk_checksum': 'Checksum of deploy_ramdisk, as '
                               'deploy_kernel_checksum. Optional.',
    'kernel_append_params': 'Kernel parameters for the ramdisk. Optional, '
                            'default that of the boot interface\'s group '
                            '([redfish] or [pxe]).',
}


def api_url(conf) -> str:
    """Where the agent reaches the API (its ipa-api-url)."""
    if conf.conductor.api_url:
        return conf.conductor.api_url.rstrip('/')
    return 'http://%s:%d' % (conf.api.host_ip, conf.api.port)


def images(task, instance: bool = False) -> tuple[str, str]:
    """(kernel, ramdisk) sources: the agent's from driver_info (else
    [conductor]), or with ``instance`` the ones instance_info names."""
    (kernel, _), (ramdisk, _) = _sources(task, instance)
    return kernel, ramdisk


def _sources(task, instance: bool) -> list[tuple[str, str]]:
    """[(kernel, field), (ramdisk, field)], checked; ``field`` says
    where each was given."""
    node = task.node
    conf = task.conductor.conf
    if instance:
        src = node.instance_info or {}
        found = [(src.get(n), 'instance_info %s of node %s' % (n, node.uuid))
                 for n in ('kernel', 'ramdisk')]
    else:
        src = node.driver_info or {}
        found = [(src.get(n), 'driver_info %s of node %s' % (n, node.uuid))
                 if src.get(n) else
                 (getattr(conf.conductor, n),
                  '[conductor]%s (node %s)' % (n, node.uuid))
                 for n in ('deploy_kernel', 'deploy_ramdisk')]
    (kernel, _), (ramdisk, _) = found
    missing = [n for n, v in (('kernel', kernel), ('ramdisk', ramdisk))
               if not v]
    if missing:
        if instance:
            where = 'instance_info %s' % ' and '.join(missing)
        else:
            where = ('driver_info %s (or [conductor]deploy_kernel and '
                     'deploy_ramdisk)' % ' and '.join(
                         'deploy_' + m for m in missing))
        raise exception.MissingParameterValue(
            'Node %s has no %s to boot: set %s'
            % (node.uuid, ' and '.join(missing), where))
    for source, field in found:
        image_cache.check_source(conf, source, field)
    checksums(task, instance)
    return found


def checksums(task, instance: bool = False
              ) -> tuple[str | None, str | None]:
    """The checksums the kernel and ramdisk must match, if given
    (driver_info deploy_kernel_checksum / deploy_ramdisk_checksum, or
    instance_info kernel_checksum / ramdisk_checksum); each checked for
    its form."""
    if instance:
        src = task.node.instance_info or {}
        names = ('kernel_checksum', 'ramdisk_checksum')
    else:
        src = task.node.driver_info or {}
        names = ('deploy_kernel_checksum', 'deploy_ramdisk_checksum')
    out = []
    for name in names:
        value = src.get(name)
        try:
            image_cache.parse_checksum(value)
        except exception.InvalidParameterValue as e:
            raise exception.InvalidParameterValue(
                'Invalid %s of node %s: %s' % (name, task.node.uuid, e)
            ) from None
        out.append(value or None)
    return out[0], out[1]


@contextlib.contextmanager
def fetched(task, instance: bool = False
            ) -> collections.abc.Iterator[tuple[str, str]]:
    """Local paths of the kernel and ramdisk to boot, each checked
    against its checksum when one is given; both kept in the image
    cache while the block runs (image_cache.fetched)."""
    conf = task.conductor.conf
    (kernel, kernel_field), (ramdisk, ramdisk_field) = _sources(task,
                                                                instance)
    kernel_sum, ramdisk_sum = checksums(task, instance)
    with image_cache.fetched(conf, kernel, kernel_sum,
                             kernel_field) as kernel_path, \
            image_cache.fetched(conf, ramdisk, ramdisk_sum,
                                ramdisk_field) as ramdisk_path:
        yield kernel_path, ramdisk_path


def kernel_params(task, boot_method: str, default_append: str,
                  ramdisk_params: dict | None = None) -> str:
    """The ramdisk's kernel command line; ``ramdisk_params``'
    ``kernel_params`` (what one boot needs, e.g. in-band inspection's
    callback URL) go before the operator's own."""
    extra = (task.node.driver_info or {}).get('kernel_append_params',
                                              default_append)
    if not isinstance(extra, str) or any(c in extra for c in '\r\n'):
        raise exception.InvalidParameterValue(
            'kernel_append_params of node %s must be a one-line string'
            % task.node.uuid)
    return ' '.join(p for p in (
        'ipa-api-url=%s' % api_url(task.conductor.conf),
        'boot_method=%s' % boot_method, _bootif(task, boot_method),
        (ramdisk_params or {}).get('kernel_params', ''), extra) if p)


def _bootif(task, boot_method: str) -> str:
    """A machine booted from virtual media has no boot NIC to tell the
    agent (a network boot's BOOTIF): the node's one PXE-enabled port is
    named instead, so that the agent's inventory says which NIC the
    machine boots from (in-band inspection keeps PXE on it only)."""
    if boot_method != 'vmedia':
        return ''
    pxe = [p.address for p in task.ports if p.pxe_enabled]
    return 'BOOTIF=%s' % pxe[0] if len(pxe) == 1 else ''
