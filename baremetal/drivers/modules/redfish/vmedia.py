"""Virtual media devices of a Redfish BMC: found on the system or, as
most BMCs have them, on its managers.

Device types use Ironic's names: ``cdrom`` (CD or DVD media), ``floppy``
and ``disk`` (a USB stick).
"""

from baremetal.common import exception
from baremetal.common import states
from baremetal.common import storable
from baremetal.drivers.modules.redfish import client

# device type -> the Redfish MediaTypes that serve it
MEDIA_TYPES = {'cdrom': ('CD', 'DVD'), 'floppy': ('Floppy',),
               'disk': ('USBStick',)}


def _value(x):
    return getattr(x, 'value', x)


def _all(task, system) -> list:
    """Every virtual media device: the system's, else its managers'."""
    collections = []
    try:
        collections.append(system.virtual_media)
    except Exception:
        pass
    for manager in system.managers:
        try:
            collections.append(manager.virtual_media)
        except Exception:
            continue
    for coll in collections:
        try:
            members = coll.get_members()
        except Exception:
            continue
        if members:
            return members
    return []


def devices(task, system, device_type: str) -> list:
    """The devices that take ``device_type`` media; none is a 400."""
    wanted = set(MEDIA_TYPES[device_type])
    conf = task.conductor.conf
    with client.call(task.node, conf, 'list virtual media'):
        found = [vm for vm in _all(task, system)
                 if {_value(t) for t in (vm.media_types or ())} & wanted]
    if not found:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver,
            extension='virtual media (the BMC offers no %s virtual media '
                      'device)' % device_type)
    return found


def _shown(value):
    """What a BMC reported, a long text cut (escaped as storable has
    it); other values as they came (the API's encoder writes what orjson
    will not)."""
    return storable.bounded(value, 2048) if isinstance(value, str) \
        else value


def describe(task, system) -> list[dict]:
    """What GET /v1/nodes/{node}/vmedia shows (API 1.93): what the BMC
    reports."""
    conf = task.conductor.conf
    with client.call(task.node, conf, 'list virtual media'):
        return [{'media_types': [_shown(_value(t))
                                 for t in (vm.media_types or ())],
                 'inserted': bool(vm.inserted), 'image': _shown(vm.image)}
                for vm in _all(task, system)]


def insert(task, system, url: str, device_type: str = 'cdrom') -> None:
    """Eject what the devices of that type hold, insert ``url`` in the
    first one."""
    found = devices(task, system, device_type)
    with client.call(task.node, task.conductor.conf,
                     'insert virtual media'):
        for vm in found:
            if vm.inserted:
                vm.eject_media()
        found[0].insert_media(url, inserted=True, write_protected=True)


def eject(task, system, device_types=None) -> None:
    """Eject the media of those device types (all when None)."""
    conf = task.conductor.conf
    wanted = set()
    for dt in device_types or states.VMEDIA_DEVICES:
        wanted.update(MEDIA_TYPES[dt])
    with client.call(task.node, conf, 'eject virtual media'):
        for vm in _all(task, system):
            types = {_value(t) for t in (vm.media_types or ())}
            if types & wanted and vm.inserted:
                vm.eject_media()
