"""Deploy interfaces driven by the agent (ironic-python-agent) in band.

``AgentBase`` is what every agent-driven deploy interface shares, and
what vendor deploy interfaces subclass to add in-band steps of their own
hardware managers:

* cleaning boots the agent ramdisk through the node's boot interface
  (``prepare_cleaning`` -> ``clean wait``); the agent's first heartbeat
  of the boot reports its clean steps, which are cached, merged with the
  out-of-band steps by priority, and run: in-band ones as agent
  commands, polled until they end;
* a heartbeat resumes only what this interface waits on: the ramdisk
  booting, or the agent command of the current step;
* ``tear_down_cleaning`` powers the node off, ejects the media and
  forgets the agent (token, URL); with fast track
  (``common/fast_track.py``) the agent keeps running instead (the media
  is ejected all the same), and the next cleaning or deployment uses it
  without a boot.

``ramdisk`` boots an operator-supplied ramdisk and calls the node active
once its agent heartbeats.  ``direct`` (whole-disk images written by the
agent) builds on the same base.
"""

import hashlib
import uuid

from oslo_log import log

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import fast_track
from baremetal.common import raid_config
from baremetal.common import secrets
from baremetal.common import states
from baremetal.common import storable
from baremetal.drivers import base
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules import configdrive
from baremetal.drivers.modules import glance_images
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import image_cache
from baremetal.drivers.modules.agent import client as agent_client

LOG = log.getLogger(__name__)

CACHED_STEPS = 'agent_cached_clean_steps'
# the agent's steps of each kind, as it last reported them
CACHED = {'clean': CACHED_STEPS, 'service': 'agent_cached_service_steps'}
VERSIONS = 'hardware_manager_version'
COMMAND = agent_tokens.COMMAND_KEY
# the target RAID configuration a raid step sends the agent, when it is
# not the node's own (create_configuration's create_*_volume arguments)
RAID_TARGET = 'target_raid_config'
# the interfaces whose steps the agent may run: their steps are cached
# with the interface they name
AGENT_INTERFACES = ('deploy', 'raid')

# agent steps the [deploy] options re-prioritise
_PRIORITY_OPTIONS = {('deploy', 'erase_devices'): 'erase_devices_priority',
                     ('deploy', 'erase_devices_metadata'):
                         'erase_devices_metadata_priority',
                     ('raid', 'delete_configuration'):
                         'delete_configuration_priority',
                     ('raid', 'create_configuration'):
                         'create_configuration_priority'}

_WAIT_STATES = {v: k for k, v in states.STEP_WAIT_STATES.items()}


def node_for_agent(task) -> dict:
    """What the agent is told of the node (no secrets)."""
    node = task.node
    info = {k: v for k, v in node.driver_internal_info.items()
            if k not in (agent_tokens.TOKEN_KEY, 'agent_verify_ca')}
    # the RAID configuration the agent's raid steps build: the one a
    # create_configuration step filtered, else the node's target
    raid = info.pop(RAID_TARGET, None) or node.target_raid_config or {}
    return {'uuid': node.uuid, 'properties': node.properties or {},
            'target_raid_config': raid,
            # the agent reads options from it (agent_burnin_*); secrets
            # masked as the API shows them
            'driver_info': secrets.mask_secrets(node.driver_info),
            'instance_info': {k: v for k, v in
                              (node.instance_info or {}).items()
                              if k != 'configdrive'},
            'driver_internal_info': info}


def ports_for_agent(task) -> list[dict]:
    return [{'uuid': p.uuid, 'address': p.address,
             'pxe_enabled': p.pxe_enabled} for p in task.ports]


def power_off(task) -> None:
    """Power the node off before a new boot; a node with
    disable_power_off (API 1.95) stays on (``power_on`` reboots it)."""
    node = task.node
    if node.disable_power_off:
        LOG.info('Node %s: not powered off (disable_power_off)', node.uuid)
        return
    task.power_action(states.POWER_OFF)


def power_on(task) -> None:
    """Boot what was prepared: power on, or reboot a node that was never
    powered off (disable_power_off)."""
    task.power_action(states.REBOOT if task.node.disable_power_off
                      else states.POWER_ON)


def boot_agent(task, ramdisk_params: dict | None = None) -> None:
    """Power off, make the node boot the ramdisk, power on.  A new boot:
    the last one's token and URL are forgotten."""
    node = task.node
    agent_tokens.wipe(node)
    power_off(task)
    task.driver.boot.prepare_ramdisk(task, ramdisk_params or {})
    power_on(task)
    LOG.info('Node %s: booting the agent ramdisk', node.uuid)


def boot_live_iso(task, url: str) -> None:
    """Power off, insert the ISO as the node's persistent boot device,
    power on.  No agent token: nothing will look up."""
    node = task.node
    agent_tokens.wipe(node)
    power_off(task)
    task.driver.boot.prepare_ramdisk(task, {'boot_iso': url})
    boot_modes.set_secure_boot(task, True)
    power_on(task)
    LOG.info('Node %s: booting its live ISO', node.uuid)


def shut_down_agent(task) -> None:
    """Power off, eject the ramdisk, forget the agent."""
    node = task.node
    power_off(task)
    task.driver.boot.clean_up_ramdisk(task)
    agent_tokens.wipe(node)


def end_agent_boot(task, shut_down=shut_down_agent) -> None:
    """At the end of an operation that booted the agent (cleaning,
    in-band inspection): with fast track the node stays on with its
    agent and token for the next operation, and only what booted the
    ramdisk is cleaned up (virtual media ejected, iPXE files withdrawn:
    the agent runs from memory), as Ironic does; otherwise the agent is
    shut down (``shut_down``: a deploy interface's own way).  Not after
    an aborted cleaning (the node is in ``clean failed`` by then): the
    agent may still be running the step, and only powering the node off
    stops it."""
    if fast_track.enabled(task) and \
            task.node.provision_state != states.CLEANFAIL:
        LOG.info('Node %s: fast track: the agent keeps running',
                 task.node.uuid)
        task.driver.boot.clean_up_ramdisk(task)
    else:
        shut_down(task)


def use_running_agent(task) -> bool:
    """Fast track for a deployment: whether the agent running on the
    node is to be used instead of booting it (it answered, and has the
    node's current record: IPA's deploy.get_deploy_steps caches it)."""
    if not fast_track.agent_running(task):
        return False
    try:
        agent_client.Client(task.node, task.conductor.conf).run_sync(
            'deploy.get_deploy_steps', {'node': node_for_agent(task),
                                        'ports': ports_for_agent(task)})
    except exception.AgentError as e:
        fast_track.unused(task, e)
        return False
    LOG.info('Node %s: fast track: deploying with the running agent, '
             'no reboot', task.node.uuid)
    return True


def agent_steps(task, kind: str, interface: str,
                overrides: dict | None = None) -> list[dict] | None:
    """The steps of ``kind`` the agent last reported for ``interface``
    (None: it has not reported any yet), with the priorities the
    [deploy] options and the interface's overrides give them."""
    cached = task.node.driver_internal_info.get(CACHED[kind])
    if cached is None:
        return None
    conf = task.conductor.conf
    out = []
    for st in cached:
        # a cache written before steps named their interface: deploy's
        if (st.get('interface') or 'deploy') != interface:
            continue
        prio = st.get('priority') or 0
        option = _PRIORITY_OPTIONS.get((interface, st['step']))
        if kind == 'clean' and option and \
                getattr(conf.deploy, option) is not None:
            prio = getattr(conf.deploy, option)
        prio = (overrides or {}).get(st['step'], prio)
        out.append({'step': st['step'], 'priority': prio,
                    'interface': interface,
                    'abortable': bool(st.get('abortable')),
                    'argsinfo': st.get('argsinfo') or None,
                    'requires_ramdisk': True, 'in_band': True})
    return out


def _valid_steps(node, command: str, found) -> list[dict]:
    """The steps one hardware manager reported (``found``), each checked
    as IPA writes them: an object with a step name (a method's: an
    identifier), an interface name, an integer priority, argsinfo an
    object of objects, abortable and reboot_requested booleans.  What
    is not fails the operation (AgentError) naming the step: its
    steps would otherwise be skipped without a word, or fail later
    with Python's words."""
    if found is None:
        return []
    if not isinstance(found, list):
        raise exception.AgentError(
            node=node.uuid, command=command,
            error='the agent reported steps that are not a list: %s'
            % storable.bounded(repr(found), 200))
    for st in found:
        why = _invalid_step(st)
        if why:
            raise exception.AgentError(
                node=node.uuid, command=command,
                error='the agent reported a step that is not valid (%s): '
                '%s' % (why, storable.bounded(repr(st), 200)))
    return found


def _invalid_step(st) -> str | None:
    """Why ``st`` is no step as IPA reports them (None: it is one)."""
    if not isinstance(st, dict):
        return 'not an object'
    name = st.get('step')
    if not isinstance(name, str) or not name.isidentifier() or \
            len(name) > 255:
        return 'its step is no method name'
    if not isinstance(st.get('interface'), str):
        return 'its interface is no name'
    prio = st.get('priority')
    if not isinstance(prio, int) or isinstance(prio, bool) or \
            not -2 ** 31 <= prio < 2 ** 31:
        return 'its priority is no integer'
    info = st.get('argsinfo')
    if info is not None and not (isinstance(info, dict) and all(
            isinstance(v, dict) for v in info.values())):
        return 'its argsinfo is no object of objects'
    for flag in ('abortable', 'reboot_requested'):
        if st.get(flag) is not None and not isinstance(st[flag], bool):
            return 'its %s is no boolean' % flag
    return None


def step_command(task, kind: str, step: dict) -> tuple[str, dict]:
    """The agent command that runs ``step`` in band, and its
    parameters."""
    node = task.node
    params = {'step': {k: step.get(k) for k in (
                  'interface', 'step', 'priority', 'args', 'abortable')},
              'node': node_for_agent(task),
              'ports': ports_for_agent(task)}
    # the hardware managers' versions the agent reported with its steps
    # this boot; a deploy step's agent was not asked for its steps (the
    # versions cached are an earlier boot's), and IPA checks none when
    # given None
    params['%s_version' % kind] = None if kind == 'deploy' else (
        node.driver_internal_info.get(VERSIONS) or {})
    return '%s.execute_%s_step' % (kind, kind), params


def start_command(task, name: str, params: dict,
                  record: dict | None = None) -> dict | None:
    """Start an agent command for the current step: its record when it
    already ended well, None while it runs (the command is remembered
    for poll_step); raises AgentError when it failed.  ``record``: the
    command's record when the agent already has it (left_by_lost_
    conductor), not sent then."""
    client = agent_client.Client(task.node, task.conductor.conf)
    if record is None:
        record = left_by_lost_conductor(task, name, client)
    command = {'name': name}
    if record is None:
        record = client.run(name, params, wait=False)
    else:
        command['adopted'] = True
    if record['command_status'] == agent_client.FAILED:
        raise exception.AgentError(node=task.node.uuid, command=name,
                                   error=agent_client.error_of(record))
    if record['command_status'] == agent_client.SUCCEEDED:
        return record
    command['id'] = record['id']
    task.node.driver_internal_info[COMMAND] = command
    return None


def _step_id(step) -> tuple | None:
    """(interface, step) of a step record, None for anything else."""
    if not isinstance(step, dict):
        return None
    return step.get('interface'), step.get('step')


def left_by_lost_conductor(task, name: str, client=None) -> dict | None:
    """The record of the command a conductor lost midway sent for the
    step this task resumes (``task.resumed_step``), when the agent
    still runs it or ran it to its end; None: the step's command is to
    be sent (again).

    The agent runs one command at a time (IPA answers 409 "Agent is
    busy" to another) and a step starts only once the one before it
    ended, so the agent's last command, when it has this command's name
    and still runs, is the lost conductor's for this step: it is waited
    for, not sent again.  Ended well, it counts as this step's when
    nothing else could have sent it: a step command whose result names
    this step, or the one image write (or boot loader set-up) of a
    deployment.  Ended in failure, or another command: sent again (the
    step may run again, or it would not be resumed)."""
    resumed, task.resumed_step = task.resumed_step, None
    node = task.node
    current = node.clean_step or node.deploy_step or node.service_step
    if not resumed or not current or _step_id(resumed) != _step_id(current):
        return None
    client = client or agent_client.Client(node, task.conductor.conf)
    last = client.last_command(name)
    if last is None or str(last.get('command_name')).rsplit('.', 1)[-1] \
            != name.rsplit('.', 1)[-1]:
        return None
    status = last['command_status']
    if status == agent_client.SUCCEEDED:
        kind = name.split('.', 1)[0]
        result = last.get('command_result')
        ran = result.get('%s_step' % kind) \
            if isinstance(result, dict) else None
        if name == '%s.execute_%s_step' % (kind, kind) and \
                _step_id(ran) != _step_id(current):
            return None
    elif status != agent_client.RUNNING:
        return None
    LOG.warning('Node %s: agent command %s (id %s), sent for step %s.%s '
                'by a conductor lost since, %s; not sent again', node.uuid,
                name, last['id'], current.get('interface'),
                current.get('step'), 'still runs' if status ==
                agent_client.RUNNING else 'ended well')
    return last


def poll_command(task) -> dict | None:
    """The record of the agent command the current step waits on once
    it ended well, None while it runs (or when none was started);
    raises AgentError when it failed."""
    info = task.node.driver_internal_info
    cmd = info.get(COMMAND)
    if not cmd:
        return None
    record = agent_client.Client(task.node, task.conductor.conf
                                 ).status(cmd['id'], cmd['name'])
    status = record['command_status']
    if status == agent_client.RUNNING:
        return None
    if status == agent_client.FAILED:
        # one a lost conductor sent may have failed for want of it (the
        # image on its file server): its step is run again, once
        fault = exception.AdoptedCommandFailed if cmd.get('adopted') \
            else exception.AgentError
        raise fault(node=task.node.uuid, command=cmd['name'],
                    error=agent_client.error_of(record))
    return record


class AgentBase(base.DeployInterface):
    """Cleaning (and the step machinery) through the agent."""

    polls_steps = True

    def get_properties(self):
        return {
            'deploy_kernel': 'Agent ramdisk kernel: http(s)/file URL or '
                             'absolute path (a local file inside '
                             '[conductor]file_url_allowed_paths). '
                             'Optional when [conductor]deploy_kernel is '
                             'set.',
            'deploy_ramdisk': 'Agent ramdisk initramfs, as deploy_kernel.',
            'kernel_append_params': 'Extra kernel parameters for the '
                                    'ramdisk. Optional.',
        }

    def validate(self, task):
        boot = task.driver.boot
        if not getattr(boot, 'boots_agent', False):
            raise exception.InvalidParameterValue(
                'The %s deploy interface needs a boot interface that can '
                'boot the agent ramdisk; node %s has boot interface %s'
                % (self.entry_name(), task.node.uuid,
                   task.node.boot_interface or 'default'))
        boot.validate(task)
        boot_modes.check_secure_boot(task)
        fast_track.check(task.node.driver_info)

    def entry_name(self) -> str:
        return getattr(self, 'name', type(self).__name__)

    # ---- booting the agent ----
    def boot_agent(self, task, ramdisk_params: dict | None = None
                   ) -> None:
        boot_agent(task, ramdisk_params)

    def shut_down_agent(self, task) -> None:
        shut_down_agent(task)

    # ---- cleaning ----
    def prepare_cleaning(self, task):
        """Boot the agent (``clean wait`` until it heartbeats); with fast
        track, an agent already running lists its steps at once and
        cleaning goes on without a boot (None)."""
        if fast_track.agent_running(task):
            try:
                self.refresh_clean_steps(task)
            except exception.AgentError as e:
                fast_track.unused(task, e)
            else:
                LOG.info('Node %s: fast track: cleaning with the running '
                         'agent, no reboot', task.node.uuid)
                return None
        self.boot_agent(task)
        return states.CLEANWAIT

    def tear_down_cleaning(self, task):
        end_agent_boot(task, self.shut_down_agent)

    def get_clean_steps(self, task):
        return self._with_agent_steps(task, 'clean')

    # ---- servicing (API 1.87): the agent ramdisk on an active node ----
    def get_service_steps(self, task):
        return self._with_agent_steps(task, 'service')

    def prepare_service(self, task):
        """Boot the agent ramdisk instead of the instance."""
        self.boot_agent(task)
        return states.SERVICEWAIT

    def tear_down_service(self, task):
        """Back to the instance: the ramdisk goes, the disk boots."""
        self.shut_down_agent(task)
        task.driver.boot.prepare_instance(task)
        power_on(task)

    def execute_service_step(self, task, step):
        if step['step'] in self._declared_steps['service']:
            return super().execute_service_step(task, step)
        return self.run_in_band(task, 'service', step)

    def _with_agent_steps(self, task, kind: str):
        """The interface's own steps of ``kind`` and the agent's (None
        while the agent has not reported them)."""
        found = agent_steps(task, kind, self.interface_type,
                            self.step_overrides[kind])
        if found is None:
            return None                         # the agent has not said
        return self._steps(kind) + found        # out-of-band ones first

    def refresh_clean_steps(self, task) -> None:
        """Ask the agent for its clean steps and cache them."""
        self.refresh_steps(task, 'clean')

    def refresh_steps(self, task, kind: str) -> None:
        """Ask the agent for its steps of ``kind`` and cache them."""
        command = '%s.get_%s_steps' % (kind, kind)
        client = agent_client.Client(task.node, task.conductor.conf)
        result = client.run_sync(command, {
            'node': node_for_agent(task), 'ports': ports_for_agent(task)})
        by_manager = result.get('%s_steps' % kind)
        if isinstance(by_manager, list):
            # service.get_service_steps answers one de-duplicated list
            by_manager = {'all': by_manager}
        if not isinstance(by_manager, dict):
            raise exception.AgentError(
                node=task.node.uuid, command=command,
                error='no %s_steps in the answer' % kind)
        steps = []
        for found in by_manager.values():
            for st in _valid_steps(task.node, command, found):
                if st['interface'] in AGENT_INTERFACES and not (
                        st['interface'] == self.interface_type and
                        st['step'] in self._declared_steps[kind]):
                    steps.append({k: st.get(k) for k in (
                        'interface', 'step', 'priority', 'abortable',
                        'argsinfo', 'reboot_requested')})
        info = task.node.driver_internal_info
        info[CACHED[kind]] = steps
        info[VERSIONS] = result.get(VERSIONS) or {}
        LOG.info('Node %s: the agent offers %s steps %s', task.node.uuid,
                 kind, ', '.join('%s.%s (%s)' % (
                     s['interface'], s['step'], s['priority'])
                     for s in steps))

    def execute_clean_step(self, task, step):
        if step['step'] in self._declared_steps['clean']:
            return super().execute_clean_step(task, step)
        return self.run_in_band(task, 'clean', step)

    def run_in_band(self, task, kind: str, step: dict) -> str | None:
        name, params = step_command(task, kind, step)
        return self.run_command(task, kind, name, params)

    def run_command(self, task, kind: str, name: str, params: dict,
                    record: dict | None = None) -> str | None:
        """Start an agent command for the current step: None when it
        already ended well, the wait state while it runs (``record``:
        start_command's)."""
        record = start_command(task, name, params, record)
        return None if record is not None else states.STEP_WAIT_STATES[kind]

    # ---- waiting ----
    def poll_step(self, task, step):
        """The agent command of this step: True when it ended well,
        raises AgentError when it failed, False while it runs."""
        return poll_command(task) is not None

    def heartbeat(self, task, callback_url, agent_version):
        node = task.node
        if node.provision_state == states.RESCUEWAIT:
            finalize = getattr(task.driver.rescue, 'finalize_rescue', None)
            if finalize is not None:
                task.spawn_after(lambda t: finalize(t))
            return
        kind = _WAIT_STATES.get(node.provision_state)
        if kind is None:
            LOG.debug('Node %s: heartbeat in "%s" needs nothing',
                      node.uuid, node.provision_state)
            return
        info = node.driver_internal_info
        if info.get('%s_step_index' % kind) == -1:
            # the ramdisk came up for cleaning or servicing: learn its
            # steps, then plan
            task.spawn_after(self._ramdisk_up, kind)
            return
        step = getattr(node, '%s_step' % kind) or {}
        if step.get('step') == 'wait' and not (step.get('args') or {}):
            task.resume_steps()     # a reserved wait: until a heartbeat
            return
        if step.get('interface') != self.interface_type:
            # another interface's step: not ours to resume, but the
            # agent may be running it (the agent RAID interface's)
            if info.get(COMMAND) and step.get('interface') in \
                    AGENT_INTERFACES:
                task.poll_step_soon()
            return
        if self.agent_booted(task, step):
            task.resume_steps()
            return
        if info.get(COMMAND):
            # polled by the conductor under a shared lock, not here: an
            # agent slow to answer must hold up neither this heartbeat
            # nor other requests for the node
            task.poll_step_soon()

    def agent_booted(self, task, step: dict) -> bool:
        """Does a heartbeat end ``step`` (it waited for the ramdisk to
        come up)?  Deploy interfaces say which of their steps do."""
        return False

    def _ramdisk_up(self, task, kind: str = 'clean') -> None:
        try:
            if kind == 'clean':
                self.refresh_clean_steps(task)  # vendors may override it
            else:
                self.refresh_steps(task, kind)
        except Exception as e:
            task.resume_steps('the agent could not list its %s steps: %s'
                              % (kind, e))
            return
        task.resume_steps()


# states in which a node's instance_info is not about to be deployed:
# validation leaves it alone
_NOT_DEPLOYING = (states.CLEANING, states.CLEANWAIT, states.MANAGEABLE,
                  states.ENROLL, states.VERIFYING)


class RamdiskDeploy(AgentBase):
    """``ramdisk``: boot a ramdisk and call the node active once its
    agent heartbeats; nothing is written to disk."""

    name = 'ramdisk'
    instance_boots_via_boot_interface = True

    def validate(self, task):
        node = task.node
        deploying = node.provision_state not in _NOT_DEPLOYING
        ii = node.instance_info or {}
        if deploying and ii.get('boot_iso') and \
                not getattr(task.driver.boot, 'boots_iso', False):
            # first: whatever else is missing, this boot interface
            # would never boot the ISO
            raise exception.InvalidParameterValue(
                'Node %s: the %s boot interface cannot boot '
                'instance_info boot_iso (a live ISO); use a boot '
                'interface that boots ISOs (redfish-virtual-media)'
                % (node.uuid, node.boot_interface or 'default'))
        super().validate(task)
        if not deploying:
            return
        for name in ('kernel', 'ramdisk', 'boot_iso'):
            source = ii.get(name)
            if image_cache.is_local(source):
                image_cache.check_source(
                    task.conductor.conf, source,
                    'instance_info %s of node %s' % (name, node.uuid))

    @base.deploy_step(priority=100)
    def deploy(self, task):
        """Boot the ramdisk; active when the agent heartbeats.  A live
        ISO (instance_info boot_iso) runs no agent: the node is active
        once it has been booted from the ISO, as in Ironic."""
        ii = task.node.instance_info or {}
        if ii.get('boot_iso'):
            boot_live_iso(task, ii['boot_iso'])
            return None
        if ii.get('kernel') and ii.get('ramdisk'):
            params = {'instance': True}
        else:
            params = {}
        self.boot_agent(task, params)
        return states.DEPLOYWAIT

    def agent_booted(self, task, step):
        return task.node.provision_state == states.DEPLOYWAIT and \
            step.get('step') == 'deploy'

    def tear_down(self, task):
        self.shut_down_agent(task)
        boot_modes.set_secure_boot(task, False)
        return states.DELETED


def image_info(task) -> dict:
    """What the agent's ``standby.prepare_image`` needs to fetch, check
    and write the node's whole-disk image (instance_info, as Nova and
    Ironic's clients fill it)."""
    node = task.node
    ii = node.instance_info or {}
    source = ii.get('image_source')
    if not source or not isinstance(source, str):
        raise exception.MissingParameterValue(
            'Node %s has no instance_info image_source to deploy'
            % node.uuid)
    if ii.get('kernel') or ii.get('ramdisk') or \
            ii.get('image_type') == 'partition':
        raise exception.InvalidParameterValue(
            'Node %s asks for a partition image (instance_info kernel/'
            'ramdisk or image_type partition); only whole-disk images '
            'are supported: deploy a whole-disk image' % node.uuid)
    if glance_images.is_glance(source):
        return _glance_image_info(task)
    algo, value = _checksum(task, ii)
    fmt = ii.get('image_disk_format')
    if fmt not in (None, 'raw', 'qcow2'):
        raise exception.InvalidParameterValue(
            'instance_info image_disk_format of node %s must be raw or '
            'qcow2, got %r' % (node.uuid, fmt))
    image_cache.check_source(task.conductor.conf, source,
                             _SOURCE_FIELD % node.uuid)
    return {'id': hashlib.sha256(source.encode()).hexdigest()[:32],
            'urls': [source], 'os_hash_algo': algo,
            'os_hash_value': value, 'disk_format': fmt,
            'container_format': 'bare', 'image_type': 'whole-disk-image',
            'stream_raw_images': True, 'node_uuid': node.uuid}


def _glance_image_info(task) -> dict:
    """image_info of a Glance image: its record, checked (the image
    record itself under ``glance_image``, for write_image; not sent)."""
    node = task.node
    conf = task.conductor.conf
    image = glance_images.describe(conf, node)
    algo, value = glance_images.expected_hash(image)
    if algo == 'md5' and not conf.agent.allow_md5_checksum:
        raise exception.InvalidParameterValue(
            'Glance image %s of node %s has only an md5 checksum and '
            '[agent]allow_md5_checksum is off' % (image['id'], node.uuid))
    return {'id': image['id'], 'urls': [], 'os_hash_algo': algo,
            'os_hash_value': value, 'checksum': image.get('checksum'),
            'disk_format': image['disk_format'],
            'container_format': image.get('container_format') or 'bare',
            'image_type': 'whole-disk-image', 'stream_raw_images': True,
            'node_uuid': node.uuid, 'glance_image': image}


_HASH_LENGTHS = {32: 'md5', 64: 'sha256', 128: 'sha512'}
_SOURCE_FIELD = 'instance_info image_source of node %s'


def _checksum(task, ii: dict) -> tuple[str, str]:
    uuid = task.node.uuid
    algo, value = ii.get('image_os_hash_algo'), ii.get('image_os_hash_value')
    if not (algo and value):
        checksum = ii.get('image_checksum')
        if not checksum or not isinstance(checksum, str):
            raise exception.MissingParameterValue(
                'Node %s has no image checksum: set instance_info '
                'image_os_hash_algo and image_os_hash_value (sha256 or '
                'sha512)' % uuid)
        if ':' in checksum and not checksum.startswith('http'):
            algo, _, value = checksum.partition(':')
        else:
            algo, value = _HASH_LENGTHS.get(len(checksum)), checksum
    if not isinstance(value, str) or not value or \
            any(c not in '0123456789abcdefABCDEF' for c in value):
        raise exception.InvalidParameterValue(
            'The image checksum of node %s must be hexadecimal, got %r'
            % (uuid, value))
    allowed = ('sha256', 'sha512') + (
        ('md5',) if task.conductor.conf.agent.allow_md5_checksum else ())
    if algo not in allowed:
        raise exception.InvalidParameterValue(
            'The image checksum algorithm of node %s must be one of %s, '
            'got %r%s' % (uuid, ', '.join(allowed), algo,
                          '' if algo != 'md5' else
                          ' ([agent]allow_md5_checksum is off)'))
    return algo, value.lower()


class DirectDeploy(AgentBase):
    """``direct``: the agent fetches the whole-disk image itself, checks
    its checksum and writes it; the node then boots from disk."""

    name = 'direct'

    def get_properties(self):
        return super().get_properties()

    def validate(self, task):
        super().validate(task)
        if task.node.provision_state not in _NOT_DEPLOYING:
            info = image_info(task)
            if 'glance_image' in info or \
                    image_cache.local_path(info['urls'][0]) is not None:
                http_files.root(task.conductor.conf)   # publishable
            configdrive.check((task.node.instance_info or {}).get(
                'configdrive'))

    @base.deploy_step(priority=100)
    def deploy(self, task):
        """Boot the agent ramdisk; go on when it heartbeats.  With fast
        track, an agent already running goes on at once."""
        if use_running_agent(task):
            return None
        self.boot_agent(task)
        return states.DEPLOYWAIT

    def agent_booted(self, task, step):
        return task.node.provision_state == states.DEPLOYWAIT and \
            step.get('step') == 'deploy'

    @base.deploy_step(priority=80)
    def write_image(self, task):
        """The agent downloads, verifies and writes the image and the
        config drive."""
        node = task.node
        left = left_by_lost_conductor(task, PREPARE_IMAGE)
        if left is not None:
            # a lost conductor's write: the agent has its image already
            return self.run_command(task, 'deploy', PREPARE_IMAGE, {},
                                    record=left)
        info = image_info(task)
        glance_image = info.pop('glance_image', None)
        if glance_image is not None:
            _serve_glance_image(task, glance_image, info)
            local = None
        else:
            local = image_cache.local_path(info['urls'][0])
        if local is not None:
            # the agent fetches it from the conductor's file server
            # under a name only the agent is told: the image may hold
            # what its owner would not publish
            _withdraw_image(task)
            info['urls'] = [http_files.publish(
                task.conductor.conf, local, 'images/%s-%s.img' % (
                    node.uuid, uuid.uuid4().hex),
                field=_SOURCE_FIELD % node.uuid)]
        params = {'image_info': info, 'configdrive': configdrive.for_agent(
            (node.instance_info or {}).get('configdrive'), node.uuid)}
        LOG.info('Node %s: the agent writes image %s', node.uuid,
                 (node.instance_info or {}).get('image_source'))
        return self.run_command(task, 'deploy', PREPARE_IMAGE, params)

    @base.deploy_step(priority=60)
    def prepare_instance_boot(self, task):
        """Make the node boot from its disk (with Secure Boot on when
        the instance asks for it).  On software RAID the agent then
        sets up the boot loader, as in Ironic: the image went onto the
        md device, which no firmware boots from (UEFI: the image's ESP
        copied onto an ESP mirrored on every holder disk, one boot entry
        each).  Otherwise, in UEFI mode, the agent adds a boot entry in
        the firmware's NVRAM for the image's EFI boot loader
        (set_efi_boot_entry)."""
        software_raid = raid_config.names_software(task.node)
        if not software_raid and \
                boot_modes.for_task(task) == boot_modes.UEFI:
            set_efi_boot_entry(task)
        boot_modes.set_secure_boot(task, True)
        task.driver.boot.prepare_instance(task)
        if not software_raid:
            return None
        ii = task.node.instance_info or {}
        params = bootloader_params(ii.get('image_rootfs_uuid'),
                                   boot_modes.for_task(task))
        LOG.info('Node %s: software RAID: the agent installs the boot '
                 'loader (%s)', task.node.uuid, params['target_boot_mode'])
        return self.run_command(task, 'deploy', INSTALL_BOOTLOADER, params)

    @base.deploy_step(priority=40)
    def tear_down_agent(self, task):
        """Flush the disks, power off, eject the ramdisk."""
        try:
            agent_client.Client(task.node, task.conductor.conf).run_sync(
                'standby.sync', {})
        except exception.AgentError as e:
            LOG.warning('Node %s: the agent could not sync its disks '
                        'before power off: %s', task.node.uuid, e)
        self.shut_down_agent(task)
        _withdraw_image(task)

    @base.deploy_step(priority=20)
    def boot_instance(self, task):
        """Power the node on into the deployed system."""
        power_on(task)

    def tear_down(self, task):
        power_off(task)
        boot_modes.set_secure_boot(task, False)
        task.driver.boot.clean_up_instance(task)
        _withdraw_image(task)
        return states.DELETED


INSTALL_BOOTLOADER = 'image.install_bootloader'
PREPARE_IMAGE = 'standby.prepare_image'


def bootloader_params(root_uuid: str | None, boot_mode: str) -> dict:
    """The arguments of IPA's image.install_bootloader: the agent
    finds the ESP (and, on software RAID, mirrors it) itself."""
    return {'root_uuid': root_uuid, 'efi_system_part_uuid': None,
            'prep_boot_part_uuid': None, 'target_boot_mode': boot_mode}


def set_efi_boot_entry(task) -> None:
    """Ask the agent, while it still runs on the node, to add a boot
    entry for the written image's EFI boot loader to the firmware's
    NVRAM, first in its boot order, as Ironic does for a whole-disk
    image in UEFI mode: IPA's ``image.install_bootloader`` without a
    root partition finds the disk's EFI System Partition and its boot
    loaders (a shim's BOOTX64.CSV, else EFI/BOOT/BOOTX64.EFI and the
    like) and runs efibootmgr, labelling the entry ``ironic1``.

    A failure does not fail the deploy (as in Ironic, whole-disk
    images): the firmware may still boot the disk by its removable-media
    path (EFI/BOOT/BOOTX64.EFI); it is logged with the agent's reason.
    """
    node = task.node
    conf = task.conductor.conf
    params = bootloader_params(None, boot_modes.UEFI)
    try:
        record = agent_client.Client(node, conf).run_to_end(
            INSTALL_BOOTLOADER, params, conf.agent.command_timeout)
    except exception.AgentError as e:
        LOG.warning('Node %s: no UEFI boot entry for the image: %s; the '
                    'firmware boots the disk only by its removable-media '
                    'path', node.uuid, e)
        return
    if record['command_status'] != agent_client.SUCCEEDED:
        LOG.warning('Node %s: the agent could not add a UEFI boot entry '
                    'for the image: %s; the firmware boots the disk only '
                    'by its removable-media path', node.uuid,
                    agent_client.error_of(record))
        return
    LOG.info('Node %s: the agent added the UEFI boot entry of the '
             'image\'s boot loader', node.uuid)


def _serve_glance_image(task, image: dict, info: dict) -> None:
    """Fetch the Glance image into the conductor's cache (once: a
    checked copy there is reused) and publish it for the agent, under
    a name only the agent is told; instance_info records what Glance
    says of it, as Ironic's does."""
    node = task.node
    conf = task.conductor.conf
    node.instance_info.update(glance_images.instance_info_fields(image))
    _withdraw_image(task)
    with glance_images.cached(conf, image) as path:
        info['urls'] = [http_files.publish(
            conf, path, 'images/%s-%s.img' % (node.uuid,
                                              uuid.uuid4().hex))]


def _withdraw_image(task) -> None:
    """The instance image published for the agent, if any."""
    http_files.unpublish_prefix(task.conductor.conf, 'images',
                                '%s-' % task.node.uuid)
