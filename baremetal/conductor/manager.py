"""RPC entry points of the conductor: lock, check, hand off.

Every method takes primitives (node UUID, dicts) and reloads the node
under its lock.  Long work goes to a worker so the call returns at once.
"""

import inspect
from typing import Any

from oslo_context import context as oslo_context
from oslo_log import log

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import retirement
from baremetal.common import rpc_batch
from baremetal.common import state_machine
from baremetal.common import states
from baremetal.common import step_requests
from baremetal.conductor import allocations
from baremetal.conductor import bios
from baremetal.conductor import cleaning
from baremetal.conductor import deployments
from baremetal.conductor import inspection
from baremetal.conductor import notify
from baremetal.conductor import power
from baremetal.conductor import rescuing
from baremetal.conductor import servicing
from baremetal.conductor import step_runner
from baremetal.conductor import steps as steps_mod
from baremetal.conductor import task_manager
from baremetal.db import rows as db_rows
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import image_cache

LOG = log.getLogger(__name__)

RPC_API_VERSION = '1.0'


# the verbs that run a node's deploy interface: its deploy steps, its
# tear-down, or a cleaning (the deploy interface erases the disks)
_DEPLOY_INTERFACE_VERBS = frozenset(('active', 'rebuild', 'deleted',
                                     'provide', 'clean'))


def _check_protected(node, verb: str) -> None:
    if node.protected and verb in ('deleted', 'rebuild'):
        raise exception.NodeProtected(node=node.uuid)


class ConductorManager:
    """The methods the API calls (directly or over oslo.messaging)."""

    target = None  # set by the RPC server

    def __init__(self, conductor) -> None:
        self.conductor = conductor

    # ------------------------------------------------------------ batches
    def call_batch(self, context, calls: list[dict]) -> list[dict]:
        """Calls an API process coalesced (common/rpc_batch.py), run one
        after the other, each with its own request context; each gets
        its result or its error."""
        LOG.debug('Running a batch of %d calls', len(calls))
        out = []
        for c in calls:
            method = c.get('method')
            try:
                if method not in rpc_batch.BATCHED:
                    raise exception.InvalidParameterValue(
                        err='%s cannot be called in a batch' % method)
                ctx = oslo_context.RequestContext.from_dict(
                    c.get('context') or {})
                out.append({'result': getattr(self, method)(
                    ctx, **(c.get('kwargs') or {}))})
            except Exception as e:
                if not isinstance(e, exception.BaremetalException):
                    LOG.exception('Batched call %s failed', method)
                out.append({'error': rpc_batch.serialize_error(e)})
        return out

    def _acquire(self, node_id, shared=False, purpose=''):
        return task_manager.acquire(self.conductor, node_id, shared=shared,
                                    purpose=purpose, wait=True)

    # ------------------------------------------------------ provisioning
    def do_provisioning_action(self, context, node_id: str, action: str,
                               params: dict | None = None) -> None:
        params = params or {}
        handler = getattr(self, '_verb_' + action, None)
        if handler is None:
            raise exception.InvalidParameterValue(
                err='unknown provision action %s' % action)
        with self._acquire(node_id, purpose='provision action ' + action
                           ) as task:
            node = task.node
            event = states.VERBS[action]
            if state_machine.next_state(node.provision_state, event) \
                    is None:
                raise exception.InvalidStateRequested(
                    action=action, node=node.uuid,
                    state=node.provision_state)
            if action in _DEPLOY_INTERFACE_VERBS:
                # 400 now, node untouched, rather than a failure in the
                # worker (provide and clean reach the deploy interface
                # only there)
                task.driver.deploy.check_node(task)
            handler(task, **params)

    def _verb_manage(self, task) -> None:
        if task.node.provision_state == states.ENROLL:
            task.process_event('manage', callback=rescuing.verify,
                               last_error=None)
        else:
            task.process_event('manage', last_error=None)

    def _verb_provide(self, task) -> None:
        retirement.check_providable(task.node)
        task.process_event('provide', callback=cleaning.start,
                           last_error=None)

    def _verb_clean(self, task, clean_steps=None,
                    disable_ramdisk=False) -> None:
        requested = step_requests.check_request_shape(clean_steps, 'clean')
        try:
            # unknown steps or bad arguments: 400 now, node untouched
            steps_mod.resolve_requested(task, 'clean', requested)
        except exception.StepsNotReady:
            if disable_ramdisk:
                raise exception.InvalidParameterValue(
                    err='disable_ramdisk: the steps of node %s are known '
                        'only once its ramdisk runs; without the ramdisk '
                        'only steps the BMC runs can be asked for'
                    % task.node.uuid) from None
            # an agent reports its steps later; checked then
        task.process_event('clean', callback=cleaning.start,
                           call_args=(requested, bool(disable_ramdisk)),
                           target_state=states.MANAGEABLE, last_error=None)

    def _verb_active(self, task, configdrive=None, deploy_steps=None
                     ) -> None:
        self._deploy(task, 'deploy', configdrive, deploy_steps)

    def _verb_rebuild(self, task, configdrive=None, deploy_steps=None
                      ) -> None:
        _check_protected(task.node, 'rebuild')
        self._deploy(task, 'rebuild', configdrive, deploy_steps)

    def _deploy(self, task, event, configdrive, deploy_steps) -> None:
        node = task.node
        if node.maintenance:
            raise exception.NodeInMaintenance(op='provisioning',
                                              node=node.uuid)
        user = (step_requests.check_request_shape(
                    deploy_steps, 'deploy', require_priority=True)
                if deploy_steps else [])
        # an unknown step or bad args, an image the deploy interface
        # cannot write: 400 before anything changes
        steps_mod.resolve_requested(task, 'deploy', user)
        task.driver.deploy.validate(task)
        task.process_event(event, callback=deployments.start,
                           call_args=(configdrive, user), last_error=None)

    def _verb_deleted(self, task) -> None:
        _check_protected(task.node, 'deleted')
        task.process_event('deleted', callback=deployments.tear_down,
                           last_error=None)

    def _verb_inspect(self, task) -> None:
        task.process_event('inspect', callback=inspection.start,
                           last_error=None)

    def _verb_adopt(self, task) -> None:
        task.process_event('adopt', callback=rescuing.adopt,
                           last_error=None)

    def _verb_rescue(self, task, rescue_password=None,
                     hashed=False) -> None:
        if not rescue_password or not isinstance(rescue_password, str):
            raise exception.MissingParameterValue(
                err='A non-empty "rescue_password" is required for '
                    'rescue')
        task.process_event('rescue', callback=rescuing.rescue,
                           last_error=None)
        # saved with the new state (after a refused transition, never)
        rescuing.keep_password(task, rescue_password)

    def _verb_unrescue(self, task) -> None:
        task.process_event('unrescue', callback=rescuing.unrescue,
                           last_error=None)

    def _verb_service(self, task, service_steps=None,
                      disable_ramdisk=False) -> None:
        node = task.node
        if node.maintenance:
            raise exception.NodeInMaintenance(op='service', node=node.uuid)
        requested = step_requests.check_request_shape(service_steps, 'service')
        try:
            # unknown steps or bad arguments: 400 now, node untouched
            steps_mod.resolve_requested(task, 'service', requested)
        except exception.StepsNotReady:
            pass    # an agent reports its steps once its ramdisk is up
        if disable_ramdisk:
            servicing.check_without_ramdisk(task, requested)
        task.driver.power.validate(task)
        task.process_event('service', callback=servicing.start,
                           call_args=(requested, bool(disable_ramdisk)),
                           target_state=states.ACTIVE, last_error=None)

    def _verb_unhold(self, task) -> None:
        """Leave clean/deploy/service hold (API 1.85): back to the wait
        state and straight on with the step after the hold."""
        task.process_event('unhold', callback=self._after_unhold)

    def _after_unhold(self, task) -> None:
        kind = self.conductor.wait_kind(task.node.provision_state)
        step_runner.resume(task, kind)

    def _verb_abort(self, task) -> None:
        state = task.node.provision_state
        if state in (states.SERVICEWAIT, states.SERVICEHOLD):
            servicing.abort(task)
        elif state == states.SERVICEFAIL:
            task.process_event('abort', callback=servicing.back_to_active,
                               last_error=None)
        elif state == states.CLEANHOLD:
            cleaning.abort(task)
        elif state == states.DEPLOYHOLD:
            task.node.last_error = ('Deployment of node %s was aborted '
                                    'while held' % task.node.uuid)
            task.process_event('abort')
        elif state == states.CLEANWAIT:
            cleaning.abort(task)
        elif state == states.DEPLOYWAIT:
            deployments.abort(task)
        elif state == states.INSPECTWAIT:
            inspection.abort(task)
        elif state == states.RESCUEWAIT:
            task.node.last_error = 'Rescue was aborted by request.'
            task.process_event('abort')
        else:
            raise exception.InvalidStateRequested(
                action='abort', node=task.node.uuid, state=state)

    # ------------------------------------------------------------ power
    def change_node_power_state(self, context, node_id: str,
                                new_state: str,
                                timeout: int | None = None) -> None:
        with self._acquire(node_id, purpose='power ' + new_state) as task:
            node = task.node
            if node.provision_state in state_machine.POWER_REFUSED_STATES:
                raise exception.InvalidState(
                    reason='Node %s is in state "%s"; power actions are '
                           'refused until cleaning ends or fails'
                    % (node.uuid, node.provision_state))
            if node.disable_power_off and new_state in (
                    states.POWER_OFF, states.SOFT_POWER_OFF):
                raise exception.PowerOffDisabled(pstate=new_state,
                                                 node=node.uuid)
            supported = task.driver.power.get_supported_power_states(task)
            if new_state not in supported:
                raise exception.InvalidParameterValue(
                    err='The requested power state "%s" is not supported '
                        'by node %s; supported: %s'
                    % (new_state, node.uuid, ', '.join(supported)))
            task.driver.power.validate(task)
            node.target_power_state = power.target_for(new_state)
            node.last_error = None
            task.spawn_after(power.change, new_state, timeout)

    # -------------------------------------------------------- validation
    def validate_driver_interfaces(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True, purpose='validate') as t:
            out = {}
            for it, iface in t.driver.interfaces.items():
                try:
                    iface.validate(t)
                    out[it] = {'result': True}
                except exception.UnsupportedDriverExtension as e:
                    out[it] = {'result': False, 'reason': str(e)}
                except Exception as e:
                    out[it] = {'result': False, 'reason': str(e)}
            return out

    # -------------------------------------------------------- management
    def set_boot_device(self, context, node_id: str, device: str,
                        persistent: bool = False) -> None:
        with self._acquire(node_id, purpose='set boot device') as task:
            task.driver.management.validate(task)
            task.driver.management.set_boot_device(task, device,
                                                   persistent=persistent)
            # the mode travelled with the device: show what the BMC has
            boot_modes.record(task)

    def get_boot_device(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True,
                           purpose='get boot device') as task:
            task.driver.management.validate(task)
            return task.driver.management.get_boot_device(task)

    def get_supported_boot_devices(self, context, node_id: str) -> list:
        with self._acquire(node_id, shared=True,
                           purpose='supported boot devices') as task:
            return task.driver.management.get_supported_boot_devices(task)

    def inject_nmi(self, context, node_id: str) -> None:
        with self._acquire(node_id, purpose='inject nmi') as task:
            task.driver.management.validate(task)
            task.driver.management.inject_nmi(task)

    def get_supported_indicators(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True, purpose='indicators') as t:
            return t.driver.management.get_supported_indicators(t)

    def get_indicator_state(self, context, node_id: str, component: str,
                            indicator: str) -> str:
        with self._acquire(node_id, shared=True, purpose='indicator') as t:
            return t.driver.management.get_indicator_state(t, component,
                                                           indicator)

    def set_indicator_state(self, context, node_id: str, component: str,
                            indicator: str, state: str) -> None:
        with self._acquire(node_id, purpose='set indicator') as task:
            task.driver.management.validate(task)
            task.driver.management.set_indicator_state(task, component,
                                                        indicator, state)

    # ---- virtual media (API 1.89, 1.93) ----
    def get_virtual_media(self, context, node_id: str) -> list[dict]:
        with self._acquire(node_id, shared=True, purpose='get vmedia') as t:
            t.driver.management.validate(t)
            return t.driver.management.get_virtual_media(t)

    def attach_virtual_media(self, context, node_id: str, device_type: str,
                             image_url: str,
                             image_download_source: str = 'local') -> None:
        """Checked now (400s), attached by a worker as Ironic does: a
        failure to fetch or insert the image lands in last_error."""
        with self._acquire(node_id, purpose='attach vmedia') as task:
            task.driver.management.validate(task)
            task.node.last_error = None
            task.spawn_after(_attach_vmedia, device_type, image_url,
                             image_download_source)

    def detach_virtual_media(self, context, node_id: str,
                             device_types: list[str] | None = None) -> None:
        with self._acquire(node_id, purpose='detach vmedia') as task:
            task.driver.management.validate(task)
            task.driver.management.detach_virtual_media(task, device_types)
            for dt in device_types or states.VMEDIA_DEVICES:
                http_files.unpublish(task.conductor.conf, 'vmedia/%s-%s.img'
                                     % (task.node.uuid, dt))

    def set_boot_mode(self, context, node_id: str, mode: str) -> None:
        """Change the boot mode (API 1.76) and record what the BMC
        reports afterwards."""
        with self._acquire(node_id, purpose='set boot mode') as task:
            self._check_mode_change(task)
            mgmt = task.driver.management
            mgmt.validate(task)
            mgmt.set_boot_mode(task, mode)
            task.node.boot_mode = mgmt.get_boot_mode(task)

    def set_secure_boot(self, context, node_id: str, state: bool) -> None:
        with self._acquire(node_id, purpose='set secure boot') as task:
            self._check_mode_change(task)
            mgmt = task.driver.management
            mgmt.validate(task)
            mgmt.set_secure_boot_state(task, state)
            task.node.secure_boot = mgmt.get_secure_boot_state(task)

    @staticmethod
    def _check_mode_change(task) -> None:
        node = task.node
        if node.provision_state not in state_machine.STABLE_STATES or \
                node.provision_state in (states.ACTIVE, states.RESCUE):
            raise exception.InvalidState(
                reason='The boot mode of node %s cannot change in state '
                       '"%s" (only while it is not deployed and at rest)'
                % (node.uuid, node.provision_state))

    def get_sensors_data(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True, purpose='sensors') as t:
            return t.driver.management.get_sensors_data(t)

    # ---------------------------------------------------- vifs, console
    def vif_attach(self, context, node_id: str, vif_info: dict) -> None:
        with self._acquire(node_id, purpose='attach vif') as task:
            task.driver.network.vif_attach(task, vif_info)

    def vif_detach(self, context, node_id: str, vif_id: str) -> None:
        with self._acquire(node_id, purpose='detach vif') as task:
            task.driver.network.vif_detach(task, vif_id)

    def vif_list(self, context, node_id: str) -> list:
        with self._acquire(node_id, shared=True, purpose='list vifs') as t:
            return t.driver.network.vif_list(t)

    def set_console_mode(self, context, node_id: str, enabled: bool
                         ) -> None:
        with self._acquire(node_id, purpose='console') as task:
            task.driver.console.validate(task)
            with notify.console_set(task):
                if enabled:
                    task.driver.console.start_console(task)
                else:
                    task.driver.console.stop_console(task)
                task.node.console_enabled = enabled

    def get_console_information(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True, purpose='console') as t:
            if not t.node.console_enabled:
                raise exception.InvalidState(
                    reason='Console access is not enabled on node %s'
                    % t.node.uuid)
            return t.driver.console.get_console(t)

    # ------------------------------------------------------------ steps
    def get_clean_steps(self, context, node_id: str,
                        min_priority: int | None = None) -> list:
        with self._acquire(node_id, shared=True, purpose='steps') as t:
            return steps_mod.listing(t, 'clean', min_priority)

    def continue_inspection(self, context, node_id: str, inventory: dict,
                            plugin_data: dict) -> None:
        with self._acquire(node_id, purpose='continue inspection') as task:
            if task.node.provision_state != states.INSPECTWAIT:
                raise exception.NodeNotFound(node=node_id)
            inspection.resume(task, inventory, plugin_data)

    def get_node_with_token(self, context, node_id: str) -> str:
        """An agent looked its node up and the boot has no token yet
        (network boot): issue it (the first lookup only; later ones get
        409 until a heartbeat carries it, then '******', as Ironic
        answers; agent_tokens.in_transit).  Returns what to hand over.
        The lock is tried once, never waited for: a busy node answers
        409 and the agent looks up again."""
        with self._acquire(node_id, purpose='agent lookup') as task:
            node = task.node
            timeout = self.conductor.conf.rpc_response_timeout_api
            if agent_tokens.lost_in_transit(node.driver_internal_info,
                                            timeout):
                # its lookup's answer was lost: this one gets a new token
                # and the first is void
                LOG.warning('Node %s: no heartbeat carried the agent token '
                            'handed out %d seconds ago or more (that '
                            'lookup\'s answer was lost?): a new token for '
                            'this lookup', node.uuid, timeout)
            elif agent_tokens.in_transit(node.driver_internal_info,
                                         timeout):
                # another lookup's, just now
                raise exception.AgentTokenInTransit(node=node.uuid)
            elif agent_tokens.present(node):
                LOG.warning('Node %s: a second lookup in the same boot; '
                            'the agent token is not handed out again',
                            node.uuid)
                return agent_tokens.MASK
            token = agent_tokens.issue(node)
            LOG.info('Node %s: agent token issued at lookup', node.uuid)
        return token

    def heartbeat(self, context, node_id: str,
                  callback_url: str | None = None,
                  agent_version: str | None = None,
                  agent_token: str | None = None,
                  agent_verify_ca: str | None = None,
                  agent_status: str | None = None,
                  agent_status_message: str | None = None) -> None:
        """An agent reported in.  Without this boot's token nothing
        changes (401): the API refuses such a heartbeat from the row it
        read, locked node or not, and the token is checked again here
        under the node's lock (a token wiped since the API's read; on a
        node locked meanwhile that heartbeat meets the lock first, 409,
        and the agent's next one the 401)."""
        with self._acquire(node_id, purpose='heartbeat') as task:
            node = task.node
            agent_tokens.check(node.uuid, node.driver_internal_info,
                               agent_token)
            info = node.driver_internal_info
            known = info.get('agent_url')
            if known and callback_url and known != callback_url:
                raise exception.InvalidParameterValue(
                    err='the agent of node %s changed its callback_url '
                        'within one boot (%s, now %s)'
                    % (node.uuid, known, callback_url))
            if not known and agent_tokens.pregenerated(node):
                # the medium carrying the token has served its purpose
                task.driver.boot.ramdisk_booted(task)
            if callback_url:
                info['agent_url'] = callback_url
            info['agent_version'] = agent_version
            if agent_verify_ca:
                info['agent_verify_ca'] = agent_verify_ca
            if agent_status:
                info['agent_status'] = agent_status
                info['agent_status_message'] = agent_status_message
            info['agent_last_heartbeat'] = db_rows.utcnow().isoformat()
            if node.provision_state in state_machine.WAIT_STATES:
                # a live agent: the callback timeout starts again
                node.provision_updated_at = db_rows.utcnow()
            task.driver.deploy.heartbeat(task, callback_url, agent_version)

    def vendor_passthru(self, context, node_id: str, vendor_method: str,
                        http_method: str, info: dict) -> Any:
        with self._acquire(node_id, purpose='vendor passthru') as task:
            routes = task.driver.vendor.vendor_routes()
            route = routes.get(vendor_method)
            if route is None:
                raise exception.InvalidParameterValue(
                    err='No handler for method %s' % vendor_method)
            if http_method not in route['http_methods']:
                raise exception.InvalidParameterValue(
                    err='The method %s does not support HTTP %s'
                    % (vendor_method, http_method))
            func, info = route['func'], {} if info is None else info
            try:
                # the body's keys are the method's keyword arguments: one
                # the method cannot take is the caller's mistake
                inspect.signature(func).bind(task, **info)
            except TypeError as e:
                raise exception.InvalidParameterValue(
                    err='Vendor passthru method %s cannot take the '
                        'arguments given: %s' % (vendor_method, e)) from None
            task.driver.vendor.validate(task)
            return func(task, **info)

    def get_vendor_passthru_methods(self, context, node_id: str) -> dict:
        with self._acquire(node_id, shared=True, purpose='vendor') as t:
            return {name: {k: v for k, v in r.items() if k != 'func'}
                    for name, r in t.driver.vendor.vendor_routes().items()}

    def cache_bios_settings(self, context, node_id: str) -> None:
        with self._acquire(node_id, purpose='bios') as task:
            bios.cache(task, strict=True)

    # ------------------------------------------------------------ drivers
    def get_driver_properties(self, context, driver_name: str) -> dict:
        reg = self.conductor.registry
        hw = reg.hardware_types.get(driver_name)
        if hw is None:
            raise exception.DriverNotFound(driver_name=driver_name)
        props = dict(hw.get_properties())
        for it in reg.interfaces:
            impl = reg.default_interface(driver_name, it)
            if impl:
                props.update(reg.interfaces[it][impl].get_properties())
        return props

    def get_raid_logical_disk_properties(self, context,
                                         driver_name: str) -> dict:
        reg = self.conductor.registry
        if driver_name not in reg.hardware_types:
            raise exception.DriverNotFound(driver_name=driver_name)
        impl = reg.default_interface(driver_name, 'raid')
        iface = reg.interfaces['raid'].get(impl)
        if iface is None or impl == 'no-raid':
            raise exception.UnsupportedDriverExtension(
                driver=driver_name, extension='raid')
        return iface.get_logical_disk_properties()

    # -------------------------------------------------------- allocations
    def create_allocation(self, context, allocation_uuid: str) -> None:
        """Pick a node for the allocation in a worker: the API answers
        at once with state ``allocating``, as Ironic does."""
        self.conductor.workers.submit(allocations.allocate, allocation_uuid,
                                     self.conductor.conf)


def _attach_vmedia(task, device_type: str, image_url: str,
                   image_download_source: str) -> None:
    """Worker: fetch (``local``: the BMC reads a copy this conductor
    serves) and insert the image; a failure is the node's last_error."""
    node = task.node
    try:
        if image_download_source == 'local':
            conf = task.conductor.conf
            with image_cache.fetched(conf, image_url) as path:
                image_url = http_files.publish(
                    conf, path,
                    'vmedia/%s-%s.img' % (node.uuid, device_type),
                    external=True)
        task.driver.management.attach_virtual_media(task, device_type,
                                                    image_url)
    except Exception as e:
        node.last_error = ('Failed to attach virtual media %s to node %s: '
                           '%s' % (device_type, node.uuid, e))
        LOG.error(node.last_error)
