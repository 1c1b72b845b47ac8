"""The ``agent`` RAID interface: RAID built in band by the agent.

ironic-python-agent reports ``delete_configuration`` and
``create_configuration`` as clean steps of the ``raid`` interface (its
generic hardware manager builds Linux software RAID with ``mdadm``;
vendor hardware managers may build hardware RAID).  They are planned
like the deploy interface's agent steps: listed once the ramdisk is up
and its agent has reported them, run as ``clean.execute_clean_step``
(``service.execute_service_step`` when servicing) commands, polled until
they end.

``create_configuration`` sends the node's ``target_raid_config`` (less
the root or the other volumes when ``create_root_volume`` /
``create_nonroot_volumes`` are false) and records what the agent built
as the node's ``raid_config``; the root volume's size becomes
``properties/local_gb`` and its level the ``raid_level`` capability.
``delete_configuration`` empties ``raid_config``.

A software RAID configuration (every logical disk's ``controller`` is
``software``) is checked when it is set, with the rules the agent
applies when it builds it: one or two logical disks, the first RAID-1,
the second of level 0, 1, 1+0, 5 or 6, one ``MAX`` at most, unique
volume names, ``physical_disks`` (optional) a list of at least two
device hints.
"""

import datetime

from oslo_log import log

from baremetal.common import exception
from baremetal.common import raid_config
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.agent import deploy as agent_deploy

LOG = log.getLogger(__name__)

# what create_configuration takes here; the agent's own step takes no
# arguments (they filter the configuration it is sent)
CREATE_ARGS = {
    'create_root_volume': {
        'description': 'Whether to create the root volume (default '
                       'true)', 'required': False},
    'create_nonroot_volumes': {
        'description': 'Whether to create the other volumes (default '
                       'true)', 'required': False},
}

# the deploy step: the configuration comes with the step (a deploy
# template's args) and is sent to the agent's own apply_configuration,
# which deletes what is there first unless told not to
APPLY_ARGS = {
    'raid_config': {
        'description': 'The RAID configuration to apply (as '
                       'target_raid_config)', 'required': True},
    'delete_existing': {
        'description': 'Delete the existing RAID configuration first '
                       '(default true)', 'required': False},
}

_RESULT_KEYS = {'clean': 'clean_result', 'service': 'service_result',
                'deploy': 'deploy_result'}


def update_raid_info(node, built: dict) -> None:
    """``built`` (the configuration the agent reports) becomes the
    node's raid_config; its root volume sets local_gb (unless MAX), the
    root device hint it names and the raid_level capability."""
    current = dict(built)
    current['last_updated'] = str(datetime.datetime.now(
        datetime.UTC).replace(tzinfo=None))
    node.raid_config = current
    roots = [d for d in built.get('logical_disks') or ()
             if isinstance(d, dict) and d.get('is_root_volume')]
    if not roots:
        return
    root = roots[0]
    props = dict(node.properties or {})
    if root.get('size_gb') not in (None, 'MAX'):
        props['local_gb'] = root['size_gb']
    if root.get('root_device_hint'):
        props['root_device'] = root['root_device_hint']
    caps = [c for c in str(props.get('capabilities') or '').split(',')
            if c and c.split(':', 1)[0] != 'raid_level']
    caps.append('raid_level:%s' % root.get('raid_level'))
    props['capabilities'] = ','.join(caps)
    node.properties = props


class AgentRAID(base.RAIDInterface):
    """RAID configured in band by the agent ramdisk."""

    name = 'agent'
    polls_steps = True

    def get_properties(self):
        return {}

    def validate(self, task):
        target = task.node.target_raid_config
        if target:
            self.validate_raid_config(task, target)

    def validate_raid_config(self, task, config):
        raid_config.validate(config)
        raid_config.check_software(config)

    # ---- deploy time: a deploy template's step, run by the agent ----
    @base.deploy_step(priority=0, argsinfo=APPLY_ARGS)
    def apply_configuration(self, task, raid_config, delete_existing=True):
        """Have the agent build ``raid_config`` (IPA's deploy step of the
        same name); what it built becomes the node's raid_config.  The
        agent must be up: between deploy.deploy (100), which boots it,
        and deploy.write_image (80)."""
        node = task.node
        self.validate_raid_config(task, raid_config)
        if not node.driver_internal_info.get('agent_url'):
            raise exception.InvalidParameterValue(
                err='Node %s: raid.apply_configuration runs in the agent '
                    'ramdisk, which is not up at priority %s; give the '
                    'step a priority below the deploy step that boots the '
                    'ramdisk (deploy.deploy, 100) and above '
                    'deploy.write_image (80)'
                    % (node.uuid, (node.deploy_step or {}).get('priority')))
        step = {'interface': self.interface_type,
                'step': 'apply_configuration',
                'priority': (node.deploy_step or {}).get('priority', 0),
                'abortable': False,
                'args': {'raid_config': raid_config,
                         'delete_existing': bool(delete_existing)}}
        return self._run(task, 'deploy', step)

    # ---- the agent's steps ----
    def _agent_steps(self, task, kind: str):
        found = agent_deploy.agent_steps(task, kind, self.interface_type,
                                         self.step_overrides[kind])
        for st in found or ():
            if st['step'] == 'create_configuration' and \
                    not st.get('argsinfo'):
                st['argsinfo'] = dict(CREATE_ARGS)
        return found

    def get_clean_steps(self, task):
        return self._agent_steps(task, 'clean')

    def get_service_steps(self, task):
        return self._agent_steps(task, 'service')

    def execute_clean_step(self, task, step):
        return self._run(task, 'clean', step)

    def execute_service_step(self, task, step):
        return self._run(task, 'service', step)

    def _run(self, task, kind: str, step: dict) -> str | None:
        node = task.node
        info = node.driver_internal_info
        sent = dict(step)
        if step['step'] == 'create_configuration':
            args = step.get('args') or {}
            target = node.target_raid_config or {}
            if target:
                self.validate_raid_config(task, target)
            disks = raid_config.filter_disks(
                node, args.get('create_root_volume', True),
                args.get('create_nonroot_volumes', True))
            info[agent_deploy.RAID_TARGET] = dict(target,
                                                  logical_disks=disks)
            sent['args'] = {}
        try:
            name, params = agent_deploy.step_command(task, kind, sent)
        finally:
            info.pop(agent_deploy.RAID_TARGET, None)
        LOG.info('Node %s: the agent runs raid.%s', node.uuid, step['step'])
        record = agent_deploy.start_command(task, name, params)
        if record is None:
            return states.STEP_WAIT_STATES[kind]
        self._finish(task, kind, step, record)
        return None

    def poll_step(self, task, step):
        record = agent_deploy.poll_command(task)
        if record is None:
            return False
        kind = {states.CLEANWAIT: 'clean', states.SERVICEWAIT: 'service',
                states.DEPLOYWAIT: 'deploy'}.get(
            task.node.provision_state, 'clean')
        self._finish(task, kind, step, record)
        return True

    def _finish(self, task, kind: str, step: dict, record: dict) -> None:
        """What the ended command changed: the node's raid_config."""
        node = task.node
        if step.get('step') == 'delete_configuration':
            props = dict(node.properties or {})
            props.pop('root_device', None)
            node.properties = props
            node.raid_config = {}
            LOG.info('Node %s: RAID configuration deleted', node.uuid)
        elif step.get('step') in ('create_configuration',
                                  'apply_configuration'):
            result = (record.get('command_result') or {}).get(
                _RESULT_KEYS[kind])
            if not result or not isinstance(result, dict):
                raise exception.AgentError(
                    node=node.uuid, command=record.get('command_name'),
                    error="Agent ramdisk didn't return a proper command "
                          "result while building RAID on %s. It returned "
                          "'%s' after command execution."
                          % (node.uuid, record))
            update_raid_info(node, result)
            LOG.info('Node %s: RAID configuration built: %s', node.uuid,
                     result.get('logical_disks'))
