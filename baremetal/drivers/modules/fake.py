"""``fake`` implementations of every interface (fake-hardware).

They touch no hardware; state lives in the node.  A node's driver_info
can steer the fake steps, so every path of the step engine can be driven
end to end:

* ``fake_fail_steps``: list of ``"interface.step"`` that raise;
* ``fake_async_steps``: list of ``"interface.step"`` that return the wait
  state; ``POST /v1/heartbeat/{node}`` (or ``poll_step`` once
  ``fake_async_done`` lists the step) finishes them;
* ``fake_steps_unknown``: the deploy interface cannot list its clean
  steps yet;
* ``fake_step_seconds``: every step takes this long;
* ``fake_step_log``: a file every step start is appended to;
* ``fake_non_idempotent``: clean steps (``"interface.step"``) marked as
  not safe to run twice in the cleaning plan.
"""

import time

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base


# the driver_info keys above (GET /v1/drivers/fake-hardware/properties)
PROPERTIES = {
    'fake_fail_steps': 'Steps ("interface.step") that fail. Optional.',
    'fake_async_steps': 'Steps ("interface.step") that return the wait '
                        'state, finished by a heartbeat. Optional.',
    'fake_async_done': 'Asynchronous steps that poll_step finishes. '
                       'Optional.',
    'fake_steps_unknown': 'The deploy interface cannot list its clean '
                          'steps yet. Optional.',
    'fake_step_seconds': 'How long every step takes, in seconds. '
                         'Optional.',
    'fake_step_log': 'A file every step start is appended to. Optional.',
    'fake_non_idempotent': 'Clean steps ("interface.step") not safe to '
                           'run twice. Optional.',
    'fake_health': 'The health the fake management interface reports. '
                   'Optional.',
}


class FakeBase:
    def get_properties(self):
        return dict(PROPERTIES)

    def get_clean_steps(self, task):
        steps = super().get_clean_steps(task)
        once = (task.node.driver_info.get('fake_non_idempotent') or ()
                if task is not None else ())
        for s in steps or ():
            if '%s.%s' % (s['interface'], s['step']) in once:
                s['idempotent'] = False
        return steps

    def _execute(self, kind, task, step):
        name = '%s.%s' % (step['interface'], step['step'])
        info = task.node.driver_info
        if info.get('fake_step_log'):
            # an append-only record that survives a conductor's death
            with open(info['fake_step_log'], 'a') as f:
                f.write('%s %s %s\n' % (task.node.uuid, kind, name))
        if info.get('fake_step_seconds'):
            time.sleep(float(info['fake_step_seconds']))
        if name in (info.get('fake_fail_steps') or ()):
            raise exception.HardwareError(
                reason='fake failure of %s step %s (driver_info '
                       'fake_fail_steps)' % (kind, name))
        result = super()._execute(kind, task, step)
        if name in (info.get('fake_async_steps') or ()):
            return states.STEP_WAIT_STATES[kind]
        return result

    def validate(self, task):
        pass

    def poll_step(self, task, step):
        done = task.node.driver_info.get('fake_async_done') or ()
        return '%s.%s' % (step['interface'], step['step']) in done

    polls_steps = True


class FakePower(FakeBase, base.PowerInterface):
    def get_power_state(self, task):
        return task.node.power_state or states.POWER_OFF

    def set_power_state(self, task, power_state, timeout=None):
        if power_state not in (states.POWER_ON, states.POWER_OFF,
                               states.SOFT_POWER_OFF):
            raise exception.InvalidParameterValue(
                err='fake power cannot go to %s' % power_state)
        task.node.power_state = (states.POWER_OFF
                                 if power_state == states.SOFT_POWER_OFF
                                 else power_state)

    def reboot(self, task, timeout=None):
        task.node.power_state = states.POWER_ON

    def get_supported_power_states(self, task):
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT,
                states.SOFT_REBOOT, states.SOFT_POWER_OFF]


class FakeManagement(FakeBase, base.ManagementInterface):
    supports_secure_boot = True

    def get_supported_boot_devices(self, task):
        return ['pxe', 'disk']

    def get_node_health(self, task):
        """driver_info ``fake_health`` (OK, Warning or Critical) when
        set; otherwise no health, as Ironic's fake management."""
        health = task.node.driver_info.get('fake_health')
        if health is None:
            return super().get_node_health(task)
        return health

    def set_boot_device(self, task, device, persistent=False):
        if device not in self.get_supported_boot_devices(task):
            raise exception.InvalidParameterValue(
                err='Invalid boot device %s specified; supported: %s'
                % (device, self.get_supported_boot_devices(task)))
        info = task.node.driver_internal_info
        info['fake_boot_device'] = {'boot_device': device,
                                    'persistent': persistent}

    def get_boot_device(self, task):
        return task.node.driver_internal_info.get(
            'fake_boot_device', {'boot_device': 'disk', 'persistent': True})

    def get_sensors_data(self, task):
        return {'Fake': {'FakeSensor': {'Sensor Reading': '1 RPM'}}}

    def inject_nmi(self, task):
        task.node.driver_internal_info['fake_nmi_count'] = \
            task.node.driver_internal_info.get('fake_nmi_count', 0) + 1

    # a chassis LED an operator may switch, a disk LED it may only read
    _INDICATORS = {
        'system': {'led': {'readonly': False,
                           'states': ['BLINKING', 'OFF', 'ON']}},
        'disk': {'led-0': {'readonly': True, 'states': ['OFF', 'ON']}},
    }

    def get_supported_indicators(self, task):
        return self._INDICATORS

    def _indicator(self, task, component, indicator):
        info = self._INDICATORS.get(component, {}).get(indicator)
        if info is None:
            raise exception.InvalidParameterValue(
                err='Node %s has no indicator %s@%s'
                % (task.node.uuid, indicator, component))
        return info

    def get_indicator_state(self, task, component, indicator):
        self._indicator(task, component, indicator)
        return task.node.driver_internal_info.get(
            'fake_indicators', {}).get('%s@%s' % (indicator, component),
                                       'OFF')

    def set_indicator_state(self, task, component, indicator, state):
        info = self._indicator(task, component, indicator)
        if info['readonly']:
            raise exception.InvalidParameterValue(
                err='Indicator %s@%s of node %s is read-only'
                % (indicator, component, task.node.uuid))
        if state not in info['states']:
            raise exception.InvalidParameterValue(
                err='Indicator %s@%s cannot be %s; it can be %s'
                % (indicator, component, state,
                   ', '.join(info['states'])))
        dii = task.node.driver_internal_info
        dii.setdefault('fake_indicators', {})[
            '%s@%s' % (indicator, component)] = state

    # virtual media (API 1.89/1.93): a CD, a floppy and a USB stick,
    # recorded in driver_internal_info['fake_vmedia'] ({device_type: url})
    _VMEDIA = {'cdrom': ['CD', 'DVD'], 'floppy': ['Floppy'],
               'disk': ['USBStick']}

    def get_virtual_media(self, task):
        held = task.node.driver_internal_info.get('fake_vmedia', {})
        return [{'media_types': list(types), 'inserted': dt in held,
                 'image': held.get(dt, '')}
                for dt, types in sorted(self._VMEDIA.items())]

    def attach_virtual_media(self, task, device_type, image_url):
        if device_type not in self._VMEDIA:
            raise exception.UnsupportedDriverExtension(
                driver=task.node.driver,
                extension='virtual media of type %s' % device_type)
        dii = task.node.driver_internal_info
        dii['fake_vmedia'] = dict(dii.get('fake_vmedia', {}),
                                  **{device_type: image_url})

    def detach_virtual_media(self, task, device_types=None):
        dii = task.node.driver_internal_info
        held = dict(dii.get('fake_vmedia', {}))
        for dt in device_types or list(held):
            held.pop(dt, None)
        dii['fake_vmedia'] = held

    def get_boot_mode(self, task):
        return task.node.driver_internal_info.get('fake_boot_mode', 'uefi')

    def set_boot_mode(self, task, mode):
        task.node.driver_internal_info['fake_boot_mode'] = mode

    def get_secure_boot_state(self, task):
        return task.node.driver_internal_info.get('fake_secure_boot', False)

    def set_secure_boot_state(self, task, state):
        task.node.driver_internal_info['fake_secure_boot'] = state
        task.node.secure_boot = state

    @base.clean_step(priority=0, argsinfo={
        'firmware_images': {'description': 'List of image URLs to apply',
                            'required': True}})
    def update_firmware(self, task, firmware_images):
        """Pretend to flash firmware (a manual step with required args)."""
        if not isinstance(firmware_images, list):
            raise exception.InvalidParameterValue(
                err='firmware_images must be a list')
        task.node.driver_internal_info['fake_firmware'] = firmware_images


class FakeDeploy(FakeBase, base.DeployInterface):
    """Deployment as four steps at distinct priorities (see docs).

    It writes no image and erases no disk, so it runs only on nodes of
    ``hardware_types`` (hardware that does not exist): on any other node
    validate refuses it, and its steps and tear-down raise, whatever
    path reached them.
    """

    hardware_types = frozenset(('fake-hardware',))

    def check_node(self, task) -> None:
        node = task.node
        if node.driver in self.hardware_types:
            return
        raise exception.InvalidParameterValue(
            err='Node %s has driver %s: the %s deploy interface writes no '
                'image and erases no disk, so it runs only on nodes of '
                'driver %s. Set the node\'s deploy_interface to direct '
                'or ramdisk%s.'
            % (node.uuid, node.driver, node.deploy_interface or 'fake',
               ', '.join(sorted(self.hardware_types)),
               '' if node.provision_state in states.DRIVER_CHANGE_STATES
               else ' (in maintenance mode: the node is %s)'
               % node.provision_state))

    def _execute(self, kind, task, step):
        self.check_node(task)
        return super()._execute(kind, task, step)

    def get_clean_steps(self, task):
        # driver_info fake_steps_unknown: behave like an agent-based
        # interface whose steps are not known yet
        if task is not None and \
                task.node.driver_info.get('fake_steps_unknown'):
            return None
        return super().get_clean_steps(task)

    @base.deploy_step(priority=100)
    def deploy(self, task):
        """Main deploy step (a real driver boots its ramdisk here)."""

    @base.deploy_step(priority=80)
    def write_image(self, task):
        """Write the instance image."""

    @base.deploy_step(priority=60)
    def prepare_instance_boot(self, task):
        """Set up the boot of the instance."""

    @base.deploy_step(priority=20)
    def boot_instance(self, task):
        """Power the instance on."""
        task.power_action(states.POWER_ON)

    def tear_down(self, task):
        self.check_node(task)
        task.power_action(states.POWER_OFF)
        return states.DELETED

    @base.clean_step(priority=99, abortable=False)
    def erase_devices_metadata(self, task):
        """Wipe partition tables and filesystem signatures."""

    @base.clean_step(priority=10, abortable=True)
    def erase_devices(self, task):
        """Erase every disk (abortable while it waits)."""

    def validate(self, task):
        # writing and erasing nothing on a real machine is a lie: the
        # conductor would record a deployment or a cleaning that never
        # happened
        self.check_node(task)

    def heartbeat(self, task, callback_url, agent_version):
        # resume only this interface's own step, steered to wait
        # (fake_async_steps): never another interface's, e.g. a BIOS
        # change the BMC has not confirmed
        state = task.node.provision_state
        if state not in (states.CLEANWAIT, states.DEPLOYWAIT):
            return
        step = (task.node.clean_step if state == states.CLEANWAIT
                else task.node.deploy_step) or {}
        name = '%s.%s' % (step.get('interface'), step.get('step'))
        if step.get('interface') == self.interface_type and name in (
                task.node.driver_info.get('fake_async_steps') or ()):
            task.resume_steps()


class FakeBoot(FakeBase, base.BootInterface):
    # "boots" an agent ramdisk: whatever agent then looks the node up
    # and heartbeats (a test's stand-in) drives an agent deploy interface
    boots_agent = True
    boots_iso = True


class FakeConsole(FakeBase, base.ConsoleInterface):
    def start_console(self, task):
        pass

    def stop_console(self, task):
        pass

    def get_console(self, task):
        return {'type': 'shellinabox',
                'url': 'http://127.0.0.1:4201/%s' % task.node.uuid}


class FakeInspect(FakeBase, base.InspectInterface):
    def inspect_hardware(self, task):
        props = task.node.properties
        props.update({'cpus': props.get('cpus', 2),
                      'cpu_arch': props.get('cpu_arch', 'x86_64'),
                      'memory_mb': props.get('memory_mb', 4096),
                      'local_gb': props.get('local_gb', 10)})
        return states.MANAGEABLE

    def abort(self, task):
        pass


class FakeRAID(FakeBase, base.RAIDInterface):
    @base.clean_step(priority=0, argsinfo={
        'create_root_volume': {'description': 'Create the root volume',
                               'required': False},
        'create_nonroot_volumes': {'description': 'Create other volumes',
                                   'required': False}})
    def create_configuration(self, task, create_root_volume=True,
                             create_nonroot_volumes=True):
        task.node.raid_config = task.node.target_raid_config or {}

    @base.clean_step(priority=0)
    def delete_configuration(self, task):
        task.node.raid_config = {}


class FakeBIOS(FakeBase, base.BIOSInterface):
    # what the fake BIOS registry says of the settings it knows
    REGISTRY = {
        'BootMode': {'attribute_type': 'Enumeration',
                     'allowable_values': ['Bios', 'Uefi'],
                     'read_only': False, 'reset_required': True,
                     'unique': False},
        'ProcVirtualization': {'attribute_type': 'Enumeration',
                               'allowable_values': ['Enabled', 'Disabled'],
                               'read_only': False, 'reset_required': True,
                               'unique': False},
        'SerialNumber': {'attribute_type': 'String', 'min_length': 0,
                         'max_length': 16, 'read_only': True,
                         'reset_required': False, 'unique': True},
    }

    def cache_bios_settings(self, task):
        stored = task.node.driver_internal_info.get('fake_bios', {})
        return [dict(self.REGISTRY.get(k, {}), name=k, value=v)
                for k, v in sorted(stored.items())]

    @base.clean_step(priority=0, argsinfo={
        'settings': {'description': 'List of {"name", "value"} settings',
                     'required': True}})
    @base.deploy_step(priority=0, argsinfo={
        'settings': {'description': 'List of {"name", "value"} settings',
                     'required': True}})
    @base.service_step(argsinfo={
        'settings': {'description': 'List of {"name", "value"} settings',
                     'required': True}})
    def apply_configuration(self, task, settings):
        if not isinstance(settings, list) or not all(
                isinstance(s, dict) and 'name' in s for s in settings):
            raise exception.InvalidParameterValue(
                err='settings must be a list of {"name", "value"} objects')
        stored = dict(task.node.driver_internal_info.get('fake_bios', {}))
        stored.update({s['name']: s.get('value') for s in settings})
        task.node.driver_internal_info['fake_bios'] = stored

    @base.clean_step(priority=0)
    @base.deploy_step(priority=0)
    @base.service_step()
    def factory_reset(self, task):
        task.node.driver_internal_info['fake_bios'] = {}


class FakeFirmware(FakeBase, base.FirmwareInterface):
    """Firmware versions kept in the node's driver_internal_info
    ``fake_firmware_versions`` (``{component: version}``; a new node has
    a bios and a bmc at 1.0.0; vendor "fake-hardware", model
    "fake-<component>").  ``update`` flashes each component with
    the file its URL names: the new version is the URL's last path
    segment."""

    INITIAL = {'bios': '1.0.0', 'bmc': '1.0.0'}

    def cache_firmware_components(self, task):
        stored = task.node.driver_internal_info.get(
            'fake_firmware_versions', self.INITIAL)
        return [{'component': c, 'current_version': v,
                 'vendor': 'fake-hardware', 'model': 'fake-%s' % c,
                 'serial_number': '%s-%s' % (c, task.node.uuid[:8])}
                for c, v in sorted(stored.items())]

    _UPDATE_ARGS = {'settings': {
        'description': 'List of {"component", "url"} objects: the '
                       'firmware file to flash on each component',
        'required': True}}

    @base.clean_step(priority=0, abortable=False, argsinfo=_UPDATE_ARGS)
    @base.service_step(argsinfo=_UPDATE_ARGS)
    def update(self, task, settings):
        if not isinstance(settings, list) or not settings or not all(
                isinstance(s, dict) and isinstance(s.get('component'), str)
                and isinstance(s.get('url'), str) and s['url']
                for s in settings):
            raise exception.InvalidParameterValue(
                err='settings must be a non-empty list of {"component", '
                    '"url"} objects')
        stored = dict(task.node.driver_internal_info.get(
            'fake_firmware_versions', self.INITIAL))
        for s in settings:
            if s['component'] not in stored:
                raise exception.InvalidParameterValue(
                    err='node %s has no firmware component %r; it has %s'
                    % (task.node.uuid, s['component'],
                       ', '.join(sorted(stored))))
            stored[s['component']] = s['url'].rstrip('/').rsplit('/', 1)[-1]
        task.node.driver_internal_info['fake_firmware_versions'] = stored


class FakeRescue(FakeBase, base.RescueInterface):
    def rescue(self, task):
        return states.RESCUE

    def unrescue(self, task):
        return states.ACTIVE


class FakeStorage(FakeBase, base.StorageInterface):
    pass


class FakeVendor(FakeBase, base.VendorInterface):
    def vendor_routes(self):
        return {'first_method': {'func': self.first_method,
                                 'http_methods': ['POST'], 'async': False,
                                 'description': 'Echo the arguments',
                                 'attach': False}}

    def driver_routes(self):
        return {}

    def first_method(self, task, **kwargs):
        return {'node': task.node.uuid, 'args': kwargs}
