"""``redfish`` RAID interface: build and delete volumes through the BMC's
Storage resources.

``create_configuration`` builds the node's ``target_raid_config``: every
logical disk becomes a POST to the ``Volumes`` collection of a Storage
resource (``RAIDType``, ``CapacityBytes`` unless ``size_gb`` is ``MAX``,
``Links.Drives``, ``Name``).  ``delete_configuration`` deletes every
volume that has a ``RAIDType``.  A BMC that answers with a task (202)
is polled until the task ends; one whose Volumes collection applies
changes only ``OnReset`` gets the node rebooted.  Once done, the volumes
the BMC reports become the node's ``raid_config``; the root volume's
size becomes ``properties.local_gb``.

Physical disks: ``controller`` names a Storage resource by its ``Id``
and ``physical_disks`` its drives by their ``Id``.  Without them, the
smallest free drives (of ``disk_type``/``interface_type`` when given)
that hold the volume are taken, as many as ``number_of_physical_disks``
or the fewest the level needs, on the first Storage that has them.  A
Storage without a ``Volumes`` collection holds no volumes and is not
chosen.

The root volume is the one of the name asked for or, where the BMC
named it otherwise, the one on the drives asked for.  What the BMC
reports is read as Redfish defines it: an ``Id`` that is no short
printable text fails the step naming the resource; a volume's name
that is no text is recorded as none, a long one cut; a RAID type that
is no RAID level leaves the volume out of ``raid_config`` (logged).
"""

import datetime
import math

from oslo_log import log

from baremetal.common import exception
from baremetal.common import raid_config
from baremetal.common import storable
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client

LOG = log.getLogger(__name__)

GIB = 1 << 30
_PENDING = 'redfish_raid_pending'

# RAID level -> (Redfish RAIDType, fewest disks, data disks of n disks)
LEVELS = {
    '0': ('RAID0', 1, lambda n: n),
    '1': ('RAID1', 2, lambda n: 1),
    '5': ('RAID5', 3, lambda n: n - 1),
    '6': ('RAID6', 4, lambda n: n - 2),
    '1+0': ('RAID10', 4, lambda n: n // 2),
    '5+0': ('RAID50', 6, lambda n: n - 2),
    '6+0': ('RAID60', 8, lambda n: n - 4),
}
_FROM_REDFISH = {v[0]: k for k, v in LEVELS.items()}
# disk_type / interface_type -> Redfish MediaType / Protocol
_MEDIA = {'hdd': 'HDD', 'ssd': 'SSD'}
_PROTOCOL = {'sata': 'SATA', 'sas': 'SAS'}

_CREATE_ARGS = {
    'create_root_volume': {
        'description': 'Whether to create the root volume (default true)',
        'required': False},
    'create_nonroot_volumes': {
        'description': 'Whether to create the other volumes (default '
                       'true)', 'required': False},
    'delete_existing': {
        'description': 'Delete the existing volumes first (default '
                       'false)', 'required': False},
}
# the deploy step: the configuration comes with the step (a deploy
# template's args) and becomes the node's target_raid_config
APPLY_ARGS = {
    'raid_config': {
        'description': 'The RAID configuration to apply (as '
                       'target_raid_config); it becomes the node\'s '
                       'target_raid_config', 'required': True},
    **_CREATE_ARGS,
}


def check_config(node, config) -> None:
    """The schema, then what Redfish cannot build."""
    raid_config.validate(config)
    disks = config['logical_disks']
    if any(d.get('interface_type') == 'scsi' for d in disks):
        raise exception.InvalidParameterValue(
            err='interface type `scsi` not supported by Redfish RAID')
    for d in disks:
        if d['raid_level'] not in LEVELS:
            raise exception.InvalidParameterValue(
                err='RAID level %s is not supported by the driver. '
                    'Supported RAID levels: %s'
                % (d['raid_level'], ', '.join(LEVELS)))
        if d['size_gb'] == 'MAX' and 'physical_disks' not in d:
            raise exception.InvalidParameterValue(
                err="create_configuration called with invalid "
                    "target_raid_configuration for node %s. "
                    "'physical_disks' is missing from logical_disk while "
                    "'size_gb'='MAX' was requested: %s" % (node.uuid, d))
        if any(not isinstance(p, str) for p in d.get('physical_disks', ())):
            raise exception.InvalidParameterValue(
                err='physical_disks of a Redfish logical disk are drive '
                    'Ids (strings): %s' % d)


def _roots(node_uuid: str, logical: list[dict], roots: list
           ) -> list[dict]:
    """The logical disks that are the root volumes asked for: by the
    name asked for, else (a BMC that names volumes its own way) by the
    drives asked for, where one volume has them.  ``roots``: names (as
    a pending step of an earlier version has them) or {name, drives}."""
    out = []
    for root in roots:
        name = root if isinstance(root, str) else root['name']
        drives = None if isinstance(root, str) else root['drives']
        found = [d for d in logical if d['name'] == name] or [
            d for d in logical if drives and d['physical_disks'] == drives]
        if len(found) == 1:
            out.append(found[0])
        else:
            LOG.warning('Node %s: the BMC reports %d volumes that may be '
                        'the root volume %s; none is marked the root',
                        node_uuid, len(found), name)
    return out


def _wait_state(task) -> str:
    return {states.CLEANING: states.CLEANWAIT,
            states.DEPLOYING: states.DEPLOYWAIT,
            states.SERVICING: states.SERVICEWAIT}.get(
        task.node.provision_state, states.CLEANWAIT)


def _last(path: str) -> str:
    return path.rstrip('/').rsplit('/', 1)[-1]


def _drive_links(volume) -> list[str]:
    links = volume.json.get('Links')
    links = links.get('Drives') if isinstance(links, dict) else None
    return [d['@odata.id'] for d in links or () if isinstance(d, dict)
            and isinstance(d.get('@odata.id'), str) and d['@odata.id']]


def _identity(resource, what: str) -> str:
    """The resource's ``Id``, a short printable text as Redfish has it
    (ValueError otherwise: inside ``client.call``, an error naming the
    BMC)."""
    value = resource.identity
    if isinstance(value, str) and 0 < len(value) <= 255 and \
            value.isprintable():
        return value
    raise ValueError('%s %s has an Id that is no Redfish identifier: %s'
                     % (what, resource.path, storable.bounded(
                         repr(value), 80)))


class _Storage:
    """One Storage resource as read once: its drives and volumes."""

    def __init__(self, storage):
        self.resource = storage
        self.id = _identity(storage, 'Storage')
        self.drives = {_identity(d, 'Drive'): d for d in storage.drives}
        # a Storage without a Volumes collection holds no volumes
        self.raid = 'Volumes' in storage.json
        self.volumes = storage.volumes.get_members() if self.raid else []
        for volume in self.volumes:
            _identity(volume, 'Volume')
        self.used = {_last(p) for v in self.volumes
                     for p in _drive_links(v)}


class RedfishRAID(client.Interface, base.RAIDInterface):
    polls_steps = True

    def validate_raid_config(self, task, raid_config: dict) -> None:
        check_config(task.node, raid_config)

    def _storages(self, task, system) -> list[_Storage]:
        with client.call(task.node, task.conductor.conf,
                         'read the storage'):
            return sorted((_Storage(s) for s in
                           system.storage.get_members()),
                          key=lambda s: s.id)

    # ------------------------------------------------------- create
    @base.deploy_step(priority=0, argsinfo=APPLY_ARGS)
    def apply_configuration(self, task, raid_config,
                            create_root_volume=True,
                            create_nonroot_volumes=True,
                            delete_existing=False):
        """Deploy step: make ``raid_config`` the node's target and build
        it (a deploy template carries the configuration)."""
        node = task.node
        check_config(node, raid_config)
        before = node.target_raid_config
        node.target_raid_config = raid_config
        try:
            return self.create_configuration(
                task, create_root_volume=create_root_volume,
                create_nonroot_volumes=create_nonroot_volumes,
                delete_existing=delete_existing)
        except exception.Invalid:
            # a configuration the BMC's drives cannot hold: the step
            # fails and the node keeps the target it had
            node.target_raid_config = before
            raise

    @base.clean_step(priority=0, abortable=False, argsinfo=_CREATE_ARGS,
                     requires_ramdisk=False)
    @base.deploy_step(priority=0, argsinfo=_CREATE_ARGS)
    def create_configuration(self, task, create_root_volume=True,
                             create_nonroot_volumes=True,
                             delete_existing=False):
        """Build the target RAID configuration's volumes."""
        node = task.node
        check_config(node, node.target_raid_config or
                     {'logical_disks': []})
        disks = raid_config.filter_disks(node, create_root_volume,
                                         create_nonroot_volumes)
        system = self._system(task)
        tasks: list[str] = []
        reboot = False
        if delete_existing:
            tasks, reboot = self._delete_volumes(task, system)
        storages = self._storages(task, system)
        plan = self._plan(node, disks, storages)
        roots = [{'name': p[1]['Name'], 'drives': sorted(
            _last(d['@odata.id']) for d in p[1]['Links']['Drives'])}
            for p in plan if p[2].get('is_root_volume')]
        for storage, payload, _ in plan:
            with client.call(node, task.conductor.conf,
                             'create volume %s on %s'
                             % (payload['Name'], storage.id)):
                collection = storage.resource.volumes
                apply_time = client.on_reset_apply_time(collection)
                made = collection.create(payload, apply_time=apply_time)
            reboot = reboot or apply_time is not None
            if client.is_task_monitor(made):
                tasks.append(client.monitor_uri(
                    node, task.conductor.conf, made,
                    'create volume %s' % payload['Name']))
            LOG.info('Node %s: volume %s (RAID %s) requested on %s',
                     node.uuid, payload['Name'], payload['RAIDType'],
                     storage.id)
        return self._finish_or_wait(task, system, tasks, reboot, roots)

    def _plan(self, node, disks, storages) -> list[tuple]:
        """(storage, payload, logical disk) for each disk; the ones with
        their drives named first, so the others do not take them."""
        order = sorted(range(len(disks)),
                       key=lambda i: 'physical_disks' not in disks[i])
        planned: dict[int, tuple] = {}
        taken: set[tuple[str, str]] = set()
        # a generated name counts in the whole target, so that it stays
        # the same whichever volumes one step builds
        everything = (node.target_raid_config or {}).get('logical_disks')
        for i in order:
            disk = disks[i]
            number = next((j for j, d in enumerate(everything or ())
                           if d is disk), i)
            storage, drives = self._place(node, disk, storages, taken)
            if not disk.get('share_physical_disks'):
                taken.update((storage.id, d) for d in drives)
            level = LEVELS[disk['raid_level']]
            payload = {
                'RAIDType': level[0],
                'Name': disk.get('volume_name') or '%s-ld%d' % (
                    node.uuid[:8], number),
                'Links': {'Drives': [
                    {'@odata.id': storage.drives[d].path} for d in drives]}}
            if disk['size_gb'] != 'MAX':
                payload['CapacityBytes'] = disk['size_gb'] * GIB
            planned[i] = (storage, payload, disk)
        return [planned[i] for i in range(len(disks))]

    def _place(self, node, disk, storages, taken) -> tuple:
        level = disk['raid_level']
        fewest, data = LEVELS[level][1], LEVELS[level][2]
        wanted = disk.get('controller')
        candidates = [s for s in storages
                      if s.raid and wanted in (None, s.id)]
        if not candidates:
            raise exception.InvalidParameterValue(
                err='Node %s has no RAID controller%s; the BMC reports '
                    'these Storage resources with volumes: %s' % (
                        node.uuid, '' if wanted is None else ' ' + wanted,
                        ', '.join(s.id for s in storages if s.raid)
                        or 'none'))
        if disk.get('physical_disks'):
            storage = candidates[0]
            named = disk['physical_disks']
            unknown = [d for d in named if d not in storage.drives]
            busy = [d for d in named if d in storage.used
                    or (storage.id, d) in taken]
            if unknown or (busy and not disk.get('share_physical_disks')):
                raise exception.InvalidParameterValue(
                    err='Node %s: controller %s %s drive(s) %s' % (
                        node.uuid, storage.id,
                        'has no' if unknown else 'already uses',
                        ', '.join(unknown or busy)))
            if len(named) < fewest:
                raise exception.InvalidParameterValue(
                    err='RAID level %s needs at least %d physical disks; '
                        '%d given' % (level, fewest, len(named)))
            return storage, list(named)
        count = disk.get('number_of_physical_disks') or fewest
        if count < fewest or (level == '1' and count != 2):
            raise exception.InvalidParameterValue(
                err='RAID level %s cannot be built of %d physical disks'
                % (level, count))
        need = math.ceil(disk['size_gb'] * GIB / data(count))
        for storage in candidates:
            free = sorted(
                (d for i, d in storage.drives.items()
                 if i not in storage.used and (storage.id, i) not in taken
                 and (d.capacity_bytes or 0) >= need
                 and self._kind_fits(disk, d)),
                key=lambda d: (d.capacity_bytes, d.identity))
            if len(free) >= count:
                return storage, [d.identity for d in free[:count]]
        raise exception.InvalidParameterValue(
            err='Node %s: no controller the BMC reports has %d free '
                'physical disks of at least %d bytes for RAID %s logical '
                'disk %s'
            % (node.uuid, count, need, level, disk))

    @staticmethod
    def _kind_fits(disk, drive) -> bool:
        media = _MEDIA.get(disk.get('disk_type'))
        protocol = _PROTOCOL.get(disk.get('interface_type'))
        got = getattr(drive.protocol, 'value', drive.protocol)
        return (media is None or drive.media_type == media) and \
            (protocol is None or got == protocol)

    # ------------------------------------------------------- delete
    @base.clean_step(priority=0, requires_ramdisk=False)
    @base.deploy_step(priority=0)
    def delete_configuration(self, task):
        """Delete every RAID volume the BMC reports."""
        system = self._system(task)
        tasks, reboot = self._delete_volumes(task, system)
        return self._finish_or_wait(task, system, tasks, reboot, [])

    def _delete_volumes(self, task, system) -> tuple[list[str], bool]:
        tasks, reboot = [], False
        for storage in self._storages(task, system):
            for volume in storage.volumes:
                if not volume.json.get('RAIDType'):
                    continue
                with client.call(task.node, task.conductor.conf,
                                 'delete volume %s' % volume.path):
                    apply_time = client.on_reset_apply_time(
                        storage.resource.volumes)
                    gone = volume.delete(apply_time=apply_time)
                reboot = reboot or apply_time is not None
                if client.is_task_monitor(gone):
                    tasks.append(client.monitor_uri(
                        task.node, task.conductor.conf, gone,
                        'delete volume %s' % volume.path))
                LOG.info('Node %s: volume %s deleted', task.node.uuid,
                         volume.path)
        return tasks, reboot

    # ------------------------------------------------------- finishing
    def _finish_or_wait(self, task, system, tasks, reboot, roots):
        if reboot:
            # the controller applies the change while the machine resets
            task.power_action(states.REBOOT)
        if not tasks:
            self._record(task, roots)
            return None
        task.node.driver_internal_info[_PENDING] = {'tasks': tasks,
                                                    'roots': roots}
        return _wait_state(task)

    def poll_step(self, task, step) -> bool:
        pending = task.node.driver_internal_info.get(_PENDING)
        if pending is None:
            return True
        for uri in pending['tasks']:
            outcome = client.task_outcome(task.node, task.conductor.conf,
                                          uri)
            if outcome is None:
                return False
            if outcome:
                task.node.driver_internal_info.pop(_PENDING, None)
                raise exception.RedfishError(
                    error='RAID %s on node %s failed on the BMC: %s'
                    % (step.get('step'), task.node.uuid, outcome))
        task.node.driver_internal_info.pop(_PENDING, None)
        self._record(task, pending.get('roots') or [])
        return True

    def _record(self, task, roots) -> None:
        """The volumes the BMC now reports -> the node's raid_config."""
        node = task.node
        logical = []
        for storage in self._storages(task, self._system(task)):
            for volume in storage.volumes:
                kind = volume.json.get('RAIDType')
                level = _FROM_REDFISH.get(kind) if isinstance(
                    kind, str) else None
                if level is None:
                    if kind is not None:
                        LOG.warning('Node %s: volume %s has RAID type %s, '
                                    'no RAID level; not in raid_config',
                                    node.uuid, volume.path,
                                    storable.bounded(repr(kind), 80))
                    continue
                logical.append({
                    'id': volume.identity, 'name': storable.bounded(
                        volume.name, 255) if isinstance(
                        volume.name, str) else None,
                    'controller': storage.id, 'raid_level': level,
                    'size_gb': max(0, (volume.capacity_bytes or 0) // GIB),
                    'physical_disks': sorted(
                        _last(p) for p in _drive_links(volume))})
        for disk in _roots(node.uuid, logical, roots):
            disk['is_root_volume'] = True
        node.raid_config = {
            'logical_disks': logical,
            'last_updated': str(datetime.datetime.now(
                datetime.UTC).replace(tzinfo=None))}
        root = next((d for d in logical if d.get('is_root_volume')), None)
        if root is not None:
            props = dict(node.properties or {})
            props['local_gb'] = root['size_gb']
            node.properties = props
