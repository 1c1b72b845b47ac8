"""The driver contract: interface base classes and step decorators.

Out-of-tree vendor packages build on this module.  Names follow Ironic's
(``BaseInterface``, ``PowerInterface``, ``clean_step``, ``deploy_step``,
``get_clean_steps``, ``execute_clean_step``...), so porting an Ironic
interface is mechanical.  See doc/source/contributor/drivers.rst.
"""

import abc
import dataclasses
import inspect
from collections.abc import Hashable
from typing import Any

from baremetal.common import exception
from baremetal.common import states
from baremetal.common import step_requests
from baremetal.db import vifs as db_vifs

STEP_KINDS = ('clean', 'deploy', 'service')

# Tie-break between interfaces when two steps share a priority: earlier
# in this list runs first.  Documented in the driver guide; defined in
# common/ because the API checks requested steps' interfaces against it.
INTERFACE_ORDER = step_requests.INTERFACE_ORDER


@dataclasses.dataclass(frozen=True)
class Step:
    """A step declared on an interface method by a decorator."""

    kind: str
    name: str
    priority: int
    abortable: bool = False
    argsinfo: dict | None = None
    requires_ramdisk: bool = False


def _check_argsinfo(argsinfo: dict | None) -> None:
    if argsinfo is None:
        return
    if not isinstance(argsinfo, dict):
        raise ValueError('argsinfo must be a dictionary, got %r' % argsinfo)
    for arg, info in argsinfo.items():
        if not isinstance(info, dict):
            raise ValueError('argsinfo[%r] must be a dictionary' % arg)
        if 'description' not in info:
            raise ValueError('argsinfo[%r] needs a description' % arg)
        extra = set(info) - {'description', 'required'}
        if extra:
            raise ValueError('argsinfo[%r] has unknown keys %s'
                             % (arg, sorted(extra)))
        if not isinstance(info.get('required', False), bool):
            raise ValueError('argsinfo[%r]["required"] must be a boolean'
                             % arg)


def _decorator(kind: str, priority: int, abortable: bool,
               argsinfo: dict | None, requires_ramdisk: bool):
    if not isinstance(priority, int) or isinstance(priority, bool) \
            or priority < 0:
        raise ValueError('%s step priority must be an integer >= 0, got %r'
                         % (kind, priority))
    if not isinstance(abortable, bool):
        raise ValueError('abortable must be a boolean, got %r' % abortable)
    _check_argsinfo(argsinfo)

    def wrap(func):
        steps = dict(getattr(func, '_baremetal_steps', {}))
        steps[kind] = Step(kind=kind, name=func.__name__, priority=priority,
                           abortable=abortable,
                           argsinfo=dict(argsinfo) if argsinfo else None,
                           requires_ramdisk=requires_ramdisk)
        func._baremetal_steps = steps
        return func
    return wrap


def clean_step(priority: int, abortable: bool = False,
               argsinfo: dict | None = None,
               requires_ramdisk: bool = True):
    """Mark an interface method as a clean step.

    :param priority: default priority; higher runs first, 0 means the
        step runs only when an operator asks for it (manual cleaning).
    :param abortable: whether ``abort`` may stop the step while the node
        waits in ``clean wait``.
    :param argsinfo: ``{arg: {'description': str, 'required': bool}}``
        for the keyword arguments the step takes (manual cleaning).
    The method is called as ``method(task, **args)`` and returns None when
    finished or ``states.CLEANWAIT`` when it goes on asynchronously.
    """
    return _decorator('clean', priority, abortable, argsinfo,
                      requires_ramdisk)


def deploy_step(priority: int, argsinfo: dict | None = None,
                requires_ramdisk: bool = False, abortable: bool = True):
    """Mark an interface method as a deploy step.

    Returns None when finished or ``states.DEPLOYWAIT`` to wait.
    ``abortable`` (True unless said otherwise, as Ironic's): whether the
    ``abort`` verb (API 1.110) may stop the deployment while the step
    waits; otherwise the deployment stops once the step has finished.
    """
    return _decorator('deploy', priority, abortable, argsinfo,
                      requires_ramdisk)


def service_step(priority: int = 0, abortable: bool = False,
                 argsinfo: dict | None = None,
                 requires_ramdisk: bool = False):
    """Mark an interface method as a service step (API 1.87): run on an
    active node when an operator asks for it with the ``service`` verb.

    Returns None when finished or ``states.SERVICEWAIT`` to wait.
    """
    return _decorator('service', priority, abortable, argsinfo,
                      requires_ramdisk)


def _collect_steps(cls) -> dict[str, dict[str, Step]]:
    found: dict[str, dict[str, Step]] = {k: {} for k in STEP_KINDS}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        for kind, step in getattr(member, '_baremetal_steps', {}).items():
            found[kind][name] = step
    return found


class BaseInterface(metaclass=abc.ABCMeta):
    """Every hardware interface derives from this.

    ``interface_type`` names the slot (``power``, ``deploy``...).  The
    registry sets ``step_priorities`` after config is parsed to hold the
    resolved priority of every step (operator overrides applied).
    """

    interface_type: str = 'base'
    supported: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._declared_steps = _collect_steps(cls)

    def __init__(self) -> None:
        self.step_priorities: dict[str, dict[str, int]] = {
            kind: {name: step.priority for name, step in steps.items()}
            for kind, steps in self._declared_steps.items()}
        # [conductor]*_step_priority_override for this interface type,
        # set by the registry: {kind: {step: priority}}
        self.step_overrides: dict[str, dict[str, int]] = {
            kind: {} for kind in STEP_KINDS}

    @abc.abstractmethod
    def get_properties(self) -> dict[str, str]:
        """driver_info keys this interface reads, with descriptions."""

    @abc.abstractmethod
    def validate(self, task) -> None:
        """Raise ``InvalidParameterValue`` / ``MissingParameterValue``
        when the node's driver_info does not let this interface work."""

    # ---- steps ----
    @classmethod
    def declared_steps(cls, kind: str) -> dict[str, Step]:
        return dict(cls._declared_steps[kind])

    def _steps(self, kind: str) -> list[dict[str, Any]]:
        out = []
        for name, step in self._declared_steps[kind].items():
            out.append({
                'step': name,
                'priority': self.step_priorities[kind][name],
                'interface': self.interface_type,
                'abortable': step.abortable,
                'argsinfo': step.argsinfo,
                'requires_ramdisk': step.requires_ramdisk,
            })
        return out

    def get_clean_steps(self, task) -> list[dict[str, Any]] | None:
        """Clean steps of this interface, priorities resolved.

        An interface whose steps are not known yet (an agent has not
        reported them) returns None or raises ``StepsNotReady`` with
        ``retry_after`` seconds; the steps listing then answers 202 with a
        ``Retry-Request-After`` header."""
        return self._steps('clean')

    def get_deploy_steps(self, task) -> list[dict[str, Any]]:
        """Deploy steps of this interface, priorities resolved."""
        return self._steps('deploy')

    def get_service_steps(self, task) -> list[dict[str, Any]]:
        """Service steps of this interface (API 1.87)."""
        return self._steps('service')

    def _execute(self, kind: str, task, step: dict) -> str | None:
        name = step['step']
        if name not in self._declared_steps[kind]:
            raise exception.InvalidParameterValue(
                err='%s interface has no %s step %s'
                % (self.interface_type, kind, name))
        return getattr(self, name)(task, **(step.get('args') or {}))

    def execute_clean_step(self, task, step: dict) -> str | None:
        """Run a clean step; None when done, CLEANWAIT when async."""
        return self._execute('clean', task, step)

    def execute_deploy_step(self, task, step: dict) -> str | None:
        """Run a deploy step; None when done, DEPLOYWAIT when async."""
        return self._execute('deploy', task, step)

    def execute_service_step(self, task, step: dict) -> str | None:
        """Run a service step; None when done, SERVICEWAIT when async."""
        return self._execute('service', task, step)

    def poll_step(self, task, step: dict) -> bool:
        """Called periodically while the node waits on ``step`` of this
        interface: return True when the step has finished, False to keep
        waiting, raise to fail it.  Interfaces that report completion by
        other means (``task.resume_steps()``) need not override this."""
        return False

    polls_steps = False  # set True when poll_step is implemented


class PowerInterface(BaseInterface):
    interface_type = 'power'

    @abc.abstractmethod
    def get_power_state(self, task) -> str:
        """Current power state (``states.POWER_ON`` / ``POWER_OFF``)."""

    @abc.abstractmethod
    def set_power_state(self, task, power_state: str,
                        timeout: int | None = None) -> None:
        """Switch power; ``power_state`` is one of states.POWER_TARGETS
        except reboots, which go to ``reboot``."""

    @abc.abstractmethod
    def reboot(self, task, timeout: int | None = None) -> None:
        """Hard reboot the node."""

    def get_supported_power_states(self, task) -> list[str]:
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT]

    def bmc_endpoint(self, driver_info: dict) -> Hashable | None:
        """What names the BMC a node with this ``driver_info`` talks to
        (protocol, address, port), for the power sync to send one
        request at a time to each; None when nodes share no BMC (each
        is read on its own) or the driver_info does not say."""
        return None


class ManagementInterface(BaseInterface):
    interface_type = 'management'
    # boot modes (drivers/modules/boot_modes.py) this interface can make
    # the node boot in; a node asking for another fails validation
    supported_boot_modes: tuple[str, ...] = ('uefi', 'bios')
    # can turn Secure Boot on and off (set_secure_boot_state)
    supports_secure_boot = False

    @abc.abstractmethod
    def get_supported_boot_devices(self, task) -> list[str]:
        """Boot devices the node can be set to."""

    @abc.abstractmethod
    def set_boot_device(self, task, device: str,
                        persistent: bool = False) -> None:
        """Set the boot device, once or persistently."""

    @abc.abstractmethod
    def get_boot_device(self, task) -> dict:
        """``{'boot_device': str|None, 'persistent': bool|None}``."""

    def get_node_health(self, task) -> str | None:
        """The hardware health the BMC reports: one of
        ``states.HEALTH_STATES``, or None when it reports none."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='get_node_health')

    def get_sensors_data(self, task) -> dict:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='get_sensors_data')

    def inject_nmi(self, task) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='inject_nmi')

    def get_virtual_media(self, task) -> list[dict]:
        """``[{'media_types': [...], 'inserted': bool, 'image': str}]``
        (API 1.93)."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='virtual media')

    def attach_virtual_media(self, task, device_type: str,
                             image_url: str) -> None:
        """Insert ``image_url`` into a ``device_type`` device (API
        1.89)."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='virtual media')

    def detach_virtual_media(self, task, device_types=None) -> None:
        """Eject the media of those device types (all when None)."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='virtual media')

    def get_supported_indicators(self, task) -> dict:
        """``{component: {name: {'readonly': bool, 'states': [...]}}}``
        (API 1.63)."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='indicators')

    def get_indicator_state(self, task, component: str,
                            indicator: str) -> str:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='indicators')

    def set_indicator_state(self, task, component: str, indicator: str,
                            state: str) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='indicators')

    def get_boot_mode(self, task) -> str | None:
        """'uefi' or 'bios' (API 1.75); None when unknown."""
        return None

    def set_boot_mode(self, task, mode: str) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='set_boot_mode')

    def get_secure_boot_state(self, task) -> bool | None:
        return None

    def set_secure_boot_state(self, task, state: bool) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='set_secure_boot_state')


class DeployInterface(BaseInterface):
    interface_type = 'deploy'
    # True where the deployed instance boots through the boot interface
    # (a ramdisk or live ISO) rather than from the node's own disk:
    # adopting such a node validates the boot interface
    instance_boots_via_boot_interface = False

    def check_node(self, task) -> None:
        """Raise InvalidParameterValue when this interface may never run
        on this node (from the node's own fields: no BMC, no files).  The
        conductor asks before a provisioning verb that runs the deploy
        interface changes anything, so the request answers 400."""

    @abc.abstractmethod
    def deploy(self, task) -> str | None:
        """Main deploy step; implementations decorate it with
        ``@deploy_step(priority=100)``."""

    @abc.abstractmethod
    def tear_down(self, task) -> str:
        """Undo the deployment; returns states.DELETED."""

    def prepare(self, task) -> None:
        """Prepare the environment before the deploy steps run."""

    def clean_up(self, task) -> None:
        """Clean up after a deployment is torn down."""

    def take_over(self, task) -> None:
        """Called when this conductor takes an active node over."""

    def prepare_cleaning(self, task) -> str | None:
        """Prepare for cleaning; may return CLEANWAIT."""

    def tear_down_cleaning(self, task) -> None:
        """Tear down what prepare_cleaning set up."""

    def prepare_service(self, task) -> str | None:
        """Prepare an active node for in-band service steps; may return
        SERVICEWAIT (a ramdisk boots).  Called only when a step needs
        it."""
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='in-band service steps')

    def tear_down_service(self, task) -> None:
        """Undo prepare_service: the instance runs again."""

    def heartbeat(self, task, callback_url: str | None,
                  agent_version: str | None) -> None:
        """An agent on the node reported in (POST /v1/heartbeat)."""


class BootInterface(BaseInterface):
    interface_type = 'boot'
    # boot modes this interface can boot the node in (see
    # ManagementInterface.supported_boot_modes)
    supported_boot_modes: tuple[str, ...] = ('uefi', 'bios')

    def prepare_ramdisk(self, task, ramdisk_params: dict) -> None:
        """Make the node boot a ramdisk."""

    def clean_up_ramdisk(self, task) -> None:
        """Undo prepare_ramdisk."""

    def ramdisk_booted(self, task) -> None:
        """The ramdisk prepare_ramdisk booted has reported in with this
        boot's agent token: what only its boot needed may go."""

    def prepare_instance(self, task) -> None:
        """Make the node boot the deployed instance."""

    def clean_up_instance(self, task) -> None:
        """Undo prepare_instance."""


class ConsoleInterface(BaseInterface):
    interface_type = 'console'

    def start_console(self, task) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='console')

    def stop_console(self, task) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='console')

    def get_console(self, task) -> dict:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='console')


class RescueInterface(BaseInterface):
    interface_type = 'rescue'

    def rescue(self, task) -> str | None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='rescue')

    def unrescue(self, task) -> str | None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='rescue')

    def clean_up(self, task) -> None:
        """Remove rescue artefacts (tear-down from rescue states)."""


class RAIDInterface(BaseInterface):
    interface_type = 'raid'

    def validate_raid_config(self, task, raid_config: dict) -> None:
        """Raise InvalidParameterValue for a config this driver can't
        build."""
        if not isinstance(raid_config, dict) or \
                not isinstance(raid_config.get('logical_disks'), list):
            raise exception.InvalidParameterValue(
                err='RAID config must hold a "logical_disks" list')

    def get_logical_disk_properties(self) -> dict:
        return {
            'size_gb': 'Size in GiB (integer, or "MAX" for the space '
                       'left). Required.',
            'raid_level': 'RAID level: JBOD, 0, 1, 2, 5, 6, 1+0, 5+0 or '
                          '6+0. Required.',
            'is_root_volume': 'Whether the node boots from this volume '
                              '(default false). Optional.',
            'volume_name': 'Name of the volume (generated when absent). '
                           'Optional.',
            'share_physical_disks': 'Whether other logical disks may use '
                                    'the same physical disks (default '
                                    'false). Optional.',
            'disk_type': 'Preferred disk type: hdd or ssd. Optional.',
            'interface_type': 'Disk interface: sata, scsi or sas. '
                              'Optional.',
            'number_of_physical_disks': 'How many physical disks to use '
                                        '(default: the fewest the level '
                                        'needs). Optional.',
            'controller': 'RAID controller to use (the driver picks one '
                          'when absent). Optional.',
            'physical_disks': 'Physical disks to use (the driver picks '
                              'them when absent). Optional.',
        }


class BIOSInterface(BaseInterface):
    interface_type = 'bios'

    def cache_bios_settings(self, task) -> list[dict] | None:
        """Read the BIOS settings; return ``[{'name':, 'value':}, ...]``
        for the conductor to store, or None if unsupported."""
        return None


class FirmwareInterface(BaseInterface):
    """Firmware components and their updates (API 1.86).  Updates are
    clean or service steps named ``update``."""
    interface_type = 'firmware'

    def cache_firmware_components(self, task) -> list[dict] | None:
        """``[{'component': str, 'current_version': str}, ...]`` as the
        hardware reports them now, or None if it cannot tell; each may
        also say ``vendor``, ``model`` and ``serial_number``."""
        return None


class InspectInterface(BaseInterface):
    interface_type = 'inspect'

    @abc.abstractmethod
    def inspect_hardware(self, task) -> str | None:
        """Discover properties; return MANAGEABLE when done or
        INSPECTWAIT when the result arrives later."""

    def abort(self, task) -> None:
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension='abort inspection')


class NetworkInterface(BaseInterface):
    interface_type = 'network'

    def vif_list(self, task) -> list[dict]:
        return [{'id': v} for v in
                task.node.driver_internal_info.get('vifs', [])]

    def vif_attach(self, task, vif_info: dict) -> None:
        """Record the VIF; with port_uuid or portgroup_uuid (API 1.67)
        on that port of this node (its internal_info's
        tenant_vif_port_id)."""
        for key, table in (('port_uuid', 'ports'),
                           ('portgroup_uuid', 'portgroups')):
            if vif_info.get(key):
                self._bind(task, table, vif_info[key], vif_info['id'])
        info = task.node.driver_internal_info
        vifs = list(info.get('vifs', []))
        if vif_info['id'] not in vifs:
            vifs.append(vif_info['id'])
        info['vifs'] = vifs
        task.node.driver_internal_info = info

    @staticmethod
    def _bind(task, table_name: str, uuid: str, vif: str | None) -> None:
        row = db_vifs.port_by_uuid(table_name, uuid)
        if row is None or row['node_id'] != task.node.id:
            raise exception.InvalidParameterValue(
                err='%s %s is not a %s of node %s'
                % (table_name[:-1], uuid, table_name[:-1], task.node.uuid))
        internal = dict(row['internal_info'] or {})
        internal['tenant_vif_port_id'] = vif
        db_vifs.set_internal_info(table_name, row['id'], internal)

    def vif_detach(self, task, vif_id: str) -> None:
        info = task.node.driver_internal_info
        vifs = list(info.get('vifs', []))
        if vif_id not in vifs:
            raise exception.VifNotAttached(vif=vif_id, node=task.node.uuid)
        vifs.remove(vif_id)
        info['vifs'] = vifs
        task.node.driver_internal_info = info
        for name in ('ports', 'portgroups'):
            for r in db_vifs.ports_of_node(name, task.node.id):
                internal = r['internal_info'] or {}
                if internal.get('tenant_vif_port_id') == vif_id:
                    internal = dict(internal)
                    internal.pop('tenant_vif_port_id')
                    db_vifs.set_internal_info(name, r['id'], internal)


class StorageInterface(BaseInterface):
    interface_type = 'storage'

    def attach_volumes(self, task) -> None:
        """Attach the node's volume targets."""

    def detach_volumes(self, task) -> None:
        """Detach them."""

    def should_write_image(self, task) -> bool:
        return True


class VendorInterface(BaseInterface):
    interface_type = 'vendor'

    def vendor_routes(self) -> dict:
        """``{method: {'func', 'http_methods', 'async', 'description'}}``"""
        return {}

    def driver_routes(self) -> dict:
        return {}


INTERFACE_CLASSES = {
    'bios': BIOSInterface, 'boot': BootInterface,
    'console': ConsoleInterface, 'deploy': DeployInterface,
    'firmware': FirmwareInterface,
    'inspect': InspectInterface, 'management': ManagementInterface,
    'network': NetworkInterface, 'power': PowerInterface,
    'raid': RAIDInterface, 'rescue': RescueInterface,
    'storage': StorageInterface, 'vendor': VendorInterface,
}
assert set(INTERFACE_CLASSES) == set(INTERFACE_ORDER)
