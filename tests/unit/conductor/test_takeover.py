"""What a conductor lost mid-work leaves (conductor/takeover.py), as
``tools/bench-fleet --lose-conductor`` found it:

* caught cleaning between the agent's first heartbeat and the first
  step, while the steps it reported were being planned, the node goes
  back to clean wait and the agent's next heartbeat cleans it (it used
  to fail with "step None.None is not idempotent");
* in-band inspection saves the node inspected before the machine is
  powered off (lost in between, the node used to wait in inspect wait
  for an inventory already posted, its machine off, until the timeout).

The kinds the functional test drives over RabbitMQ (tests/functional/
test_takeover.py) are left to it."""

from baremetal.conductor import takeover
from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations
from baremetal.drivers.modules.agent import deploy as agent_deploy
from tests.unit.api import test_versions_63_to_84 as inspection_tests
from tests.unit.drivers import test_agent_deploy as agent_tests

# the harness and the agent stand-in of the agent's own tests
api = agent_tests.api
agent = agent_tests.agent


def _lost_while(uuid, **values):
    """The node as a conductor that died left it: ``values`` saved."""
    row = db_nodes.get_node(uuid)
    assert db_reservations.reserve_node('gone', row['id'])
    db_reservations.release_node('gone', row['id'], values)
    return row['id']


def test_lost_while_planning_the_agents_steps_waits_for_it_again(
        api, agent):
    uuid = agent_tests._agent_node(api)
    api.provision(uuid, 'provide')
    node = api.wait_for(uuid, 'clean wait')
    assert node['driver_internal_info']['clean_step_index'] == -1
    # its heartbeat was taken (cleaning again), then the conductor died
    node_id = _lost_while(uuid, provision_state='cleaning')
    takeover.recover(api.conductor, node_id)
    node = api.wait_for(uuid, 'clean wait')
    assert node['last_error'] is None
    assert agent.names() == []
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'available')
    assert agent.names() == ['clean.get_clean_steps',
                             'clean.execute_clean_step:erase_devices_metadata']


def test_inspected_is_saved_before_the_machine_is_powered_off(
        api, monkeypatch):
    seen = []
    end = agent_deploy.end_agent_boot

    def recording(task, *args, **kwargs):
        row = db_nodes.get_node(task.node.uuid)
        seen.append((row['provision_state'],
                     row['inspection_finished_at'] is not None))
        return end(task, *args, **kwargs)

    monkeypatch.setattr(agent_deploy, 'end_agent_boot', recording)
    node = inspection_tests._inspect_waiting(api)
    status, body, _ = api.request(
        'POST', '/v1/continue_inspection',
        {'inventory': inspection_tests.INVENTORY}, version='1.84')
    assert status == 202, body
    node = api.wait_for(node['uuid'], 'manageable')
    assert node['power_state'] == 'power off'
    assert seen == [('manageable', True)]
