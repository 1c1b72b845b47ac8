"""``agent`` rescue interface: boot the agent ramdisk as a rescue system
the tenant logs into with the rescue password.

``rescue`` boots the ramdisk (``rescue wait``); at the agent's first
heartbeat the conductor sends it the password, crypt(3)-hashed
(``rescue.finalize_rescue`` with ``hashed``), and the node is
``rescue``: the agent writes the hash for the ramdisk's rescue user and
stops, closing its API.  ``unrescue`` powers off, makes the node
boot its disk again and powers on.
"""

from oslo_log import log

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import secrets
from baremetal.common import states
from baremetal.drivers import base
from baremetal.drivers.modules.agent import client as agent_client
from baremetal.drivers.modules.agent import deploy as agent_deploy

LOG = log.getLogger(__name__)


class AgentRescue(base.RescueInterface):
    def get_properties(self):
        return {}

    def validate(self, task):
        if not getattr(task.driver.boot, 'boots_agent', False):
            raise exception.InvalidParameterValue(
                'The agent rescue interface needs a boot interface that '
                'can boot the agent ramdisk; node %s has %s'
                % (task.node.uuid, task.node.boot_interface or 'default'))
        task.driver.boot.validate(task)

    def rescue(self, task):
        node = task.node
        agent_tokens.wipe(node)
        agent_deploy.power_off(task)
        task.driver.boot.prepare_ramdisk(task, {})
        agent_deploy.power_on(task)
        return states.RESCUEWAIT

    def finalize_rescue(self, task) -> None:
        """The rescue ramdisk heartbeated: hand it the password."""
        node = task.node
        info = node.instance_info or {}
        hashed = info.get('hashed_rescue_password')
        if not hashed and info.get('rescue_password'):
            # put into rescue before passwords were hashed
            hashed = secrets.crypt_password(
                info['rescue_password'],
                task.conductor.conf.conductor.rescue_password_hash_algorithm)
        task.process_event('resume')
        try:
            agent_client.Client(node, task.conductor.conf).run_sync(
                'rescue.finalize_rescue',
                {'rescue_password': hashed, 'hashed': True})
        except Exception as e:
            node.last_error = ('Rescue of node %s failed: the agent did not '
                               'take the rescue password: %s'
                               % (node.uuid, e))
            LOG.error(node.last_error)
            task.process_event('fail')
            return
        task.driver.boot.clean_up_ramdisk(task)
        node.last_error = None
        task.process_event('done')
        LOG.info('Node %s: rescue system ready', node.uuid)

    def unrescue(self, task):
        agent_deploy.power_off(task)
        self.clean_up(task)
        task.driver.boot.prepare_instance(task)
        agent_deploy.power_on(task)
        return states.ACTIVE

    def clean_up(self, task):
        task.driver.boot.clean_up_ramdisk(task)
        agent_tokens.wipe(task.node)
        secrets.forget_rescue_password(task.node)
