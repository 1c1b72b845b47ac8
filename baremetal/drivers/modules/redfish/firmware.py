"""``redfish`` firmware interface: firmware components and their updates.

Components (API 1.86, ``GET /v1/nodes/{node}/firmware``), as Ironic's
redfish interface reads them: ``bios`` is the ComputerSystem's
``BiosVersion``, ``bmc`` its first Manager's ``FirmwareVersion`` (and
``Model``), ``nic:<adapter Id>`` the ``FirmwarePackageVersion`` of each
NetworkAdapter of the system's first chassis (with its ``Manufacturer``,
``Model`` and ``SerialNumber``).  The conductor stores them at
verification, at inspection and after every firmware step.

The ``update`` step (clean, service and deploy step) takes ``settings``,
a list of ``{"component": "bios"|"bmc", "url": ..., "wait": seconds}``,
and flashes them one after the other through the UpdateService's
``SimpleUpdate``: each update's task is polled until it ends; after a BIOS
update the node is rebooted (the firmware is applied while the machine
starts); ``wait`` seconds pass before the next component.
"""

import time

import jsonschema
from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.redfish import client

LOG = log.getLogger(__name__)

_PENDING = 'redfish_firmware_update'
COMPONENTS = ('bios', 'bmc')
SETTINGS_SCHEMA = {
    '$schema': 'http://json-schema.org/draft-04/schema#',
    'type': 'array', 'minItems': 1,
    'items': {
        'type': 'object',
        'required': ['component', 'url'],
        'properties': {
            'component': {'type': 'string', 'enum': list(COMPONENTS)},
            'url': {'type': 'string', 'minLength': 1},
            'wait': {'type': 'integer', 'minimum': 1},
        },
        'additionalProperties': False,
    },
}
_UPDATE_ARGS = {'settings': {
    'description': 'A list of {"component": "bios" or "bmc", "url": the '
                   'firmware file, "wait": optional seconds to wait after '
                   'this update} to flash in order', 'required': True}}


def check_settings(settings) -> None:
    try:
        jsonschema.Draft4Validator(SETTINGS_SCHEMA).validate(settings)
    except jsonschema.ValidationError as e:
        raise exception.InvalidParameterValue(
            err='Invalid firmware update %s. Errors: %s'
            % (settings, e.message)) from None


def _wait_state(task) -> str:
    return {states.CLEANING: states.CLEANWAIT,
            states.DEPLOYING: states.DEPLOYWAIT,
            states.SERVICING: states.SERVICEWAIT}.get(
        task.node.provision_state, states.CLEANWAIT)


class RedfishFirmware(client.Interface, base.FirmwareInterface):
    polls_steps = True

    def cache_firmware_components(self, task) -> list[dict]:
        node, conf = task.node, task.conductor.conf
        system = self._system(task)
        found = []
        with client.call(node, conf, 'read the BIOS version'):
            if system.bios_version:
                found.append({'component': 'bios',
                              'current_version': system.bios_version})
        try:
            with client.call(node, conf, 'read the BMC firmware version'):
                # a System that names no Manager has no BMC version to
                # read: no warning
                managers = system.managers \
                    if client.linked(system, 'ManagedBy') else []
                manager = managers[0] if managers else None
                if manager is not None and manager.firmware_version:
                    found.append({'component': 'bmc',
                                  'current_version':
                                      manager.firmware_version,
                                  'model': manager.model})
        except exception.RedfishError as e:
            LOG.warning('Node %s: no BMC firmware version: %s', node.uuid, e)
        found.extend(self._nic_components(task, system))
        if not found:
            raise exception.RedfishError(
                error='the BMC of node %s reports neither a BIOS nor a BMC '
                      'firmware version' % node.uuid)
        return found

    @staticmethod
    def _nic_components(task, system) -> list[dict]:
        """``nic:<Id>`` of each network adapter of the system's first
        chassis whose controllers report a firmware package version; none
        when the BMC serves no adapters."""
        node, conf = task.node, task.conductor.conf
        found: list[dict] = []
        try:
            with client.call(node, conf, 'read the network adapters'):
                chassis = system.chassis \
                    if client.linked(system, 'Chassis') else []
                if not chassis or 'NetworkAdapters' not in chassis[0].json:
                    return found
                for adapter in chassis[0].network_adapters.get_members():
                    version = next((c.firmware_package_version
                                    for c in adapter.controllers
                                    if c.firmware_package_version), None)
                    if version:
                        found.append({
                            'component': 'nic:%s' % adapter.identity,
                            'current_version': version,
                            'vendor': adapter.manufacturer,
                            'model': adapter.model,
                            'serial_number': adapter.serial_number})
        except exception.RedfishError as e:
            LOG.warning('Node %s: no network adapter firmware versions: %s',
                        node.uuid, e)
            return []
        return found

    @base.clean_step(priority=0, abortable=False, argsinfo=_UPDATE_ARGS,
                     requires_ramdisk=False)
    @base.service_step(priority=0, abortable=False, argsinfo=_UPDATE_ARGS)
    @base.deploy_step(priority=0, argsinfo=_UPDATE_ARGS, abortable=False)
    def update(self, task, settings):
        """Flash each component in turn; wait for the BMC's tasks."""
        check_settings(settings)
        pending = {'settings': settings, 'index': 0, 'task': None,
                   'not_before': None}
        self._submit(task, pending)
        task.node.driver_internal_info[_PENDING] = pending
        return _wait_state(task)

    def _submit(self, task, pending) -> None:
        setting = pending['settings'][pending['index']]
        pending['task'] = client.simple_update(
            task.node, task.conductor.conf, setting['url'])
        pending['seen'] = False
        LOG.info('Node %s: %s firmware update from %s started (task %s)',
                 task.node.uuid, setting['component'], setting['url'],
                 pending['task'])

    def poll_step(self, task, step) -> bool:
        pending = task.node.driver_internal_info.get(_PENDING)
        if pending is None:
            return True
        pending = dict(pending)
        setting = pending['settings'][pending['index']]
        changed = False
        if pending['task']:
            try:
                outcome = client.task_outcome(
                    task.node, task.conductor.conf, pending['task'])
            except exception.RedfishTaskGone as e:
                if not pending.get('seen'):
                    raise       # a task monitor that never was
                # read running before: a BMC that restarted or dropped
                # the task once it ended (as Ironic, taken as done; the
                # versions read after the step tell)
                LOG.warning('Node %s: %s; the %s firmware update from %s '
                            'is taken as done', task.node.uuid, e,
                            setting['component'], setting['url'])
                outcome = ''
            except exception.RedfishConnectionError:
                if setting['component'] != 'bmc':
                    raise
                outcome = None  # a BMC restarts into its new firmware
            if outcome is None:
                if not pending.get('seen'):
                    pending['seen'] = True
                    self._save(task, pending)
                return False
            if outcome:
                task.node.driver_internal_info.pop(_PENDING, None)
                raise exception.RedfishError(
                    error='%s firmware update of node %s from %s failed '
                          'on the BMC: %s' % (
                              setting['component'], task.node.uuid,
                              setting['url'], outcome))
            self._component_done(task, pending, setting)
            changed = True
        if pending['not_before'] and time.time() < pending['not_before']:
            if changed:
                self._save(task, pending)
            return False
        if pending['index'] < len(pending['settings']):
            self._save(task, pending)
            self._submit(task, pending)
            self._save(task, pending)
            return False
        task.node.driver_internal_info.pop(_PENDING, None)
        return True

    def _component_done(self, task, pending, setting) -> None:
        LOG.info('Node %s: %s firmware update from %s done',
                 task.node.uuid, setting['component'], setting['url'])
        if setting['component'] == 'bios':
            # the new BIOS is applied while the machine starts
            task.upgrade_lock()
            task.power_action(states.REBOOT)
        pending['task'] = None
        pending['index'] += 1
        pending['not_before'] = (time.time() + setting['wait']
                                 if setting.get('wait') else None)

    @staticmethod
    def _save(task, pending) -> None:
        """Progress made while polling is kept: the lock becomes
        exclusive, and the node is saved when it is released."""
        task.upgrade_lock()
        task.node.driver_internal_info[_PENDING] = pending
