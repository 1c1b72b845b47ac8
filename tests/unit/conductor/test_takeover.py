"""What a conductor lost mid-work leaves (conductor/takeover.py), as
``tools/bench-fleet --lose-conductor`` found it:

* caught cleaning between the agent's first heartbeat and the first
  step, while the steps it reported were being planned, the node goes
  back to clean wait and the agent's next heartbeat cleans it (it used
  to fail with "step None.None is not idempotent");
* caught cleaning after its last step (the ramdisk being torn down,
  the end of the steps saved first), the node's cleaning is finished
  (it used to run the last step again, against an agent powered off:
  clean failed, "agent down");
* in-band inspection saves the node inspected before the machine is
  powered off (lost in between, the node used to wait in inspect wait
  for an inventory already posted, its machine off, until the timeout).

The kinds the functional test drives over RabbitMQ (tests/functional/
test_takeover.py) are left to it."""

import pytest

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


@pytest.mark.parametrize('caught', ['cleaning', 'clean wait',
                                    'clean wait, another group'])
def test_lost_after_the_agents_heartbeat_plans_its_steps_with_it(
        api, agent, caught):
    """The agent heartbeated (its URL recorded) to a conductor lost
    before it planned the steps: caught ``cleaning`` (planning) or still
    ``clean wait`` (the heartbeat's work about to start under its lock),
    the node used to wait for the agent's next heartbeat - IPA's
    interval, up to minutes (``bench-fleet --lose-conductor clean``: the
    phase's last nodes, 100 s after the takeover).  The conductor that
    releases it plans them with the agent at once - when the node is of
    its hardware type and conductor group."""
    from baremetal.db import conductors as db_conductors
    uuid = agent_tests._agent_node(api)
    api.provision(uuid, 'provide')
    node = api.wait_for(uuid, 'clean wait')
    status, found, _ = api.request(
        'GET', '/v1/lookup?addresses=%s' % agent_tests.MAC, version='1.62')
    assert status == 200, found
    agent.token = found['config']['agent_token']
    info = dict(db_nodes.get_node(uuid)['driver_internal_info'])
    assert info['clean_step_index'] == -1
    info.update(agent_url=agent.url, agent_version='13.0.0')
    if caught == 'cleaning':
        node_id = _lost_while(uuid, provision_state='cleaning',
                              driver_internal_info=info)
        takeover.recover(api.conductor, node_id)
    else:
        group = 'far' if caught.endswith('another group') else ''
        node_id = _lost_while(uuid, driver_internal_info=info,
                              conductor_group=group)
        assert db_reservations.reserve_node('gone', node_id)   # held
        db_conductors.register_conductor('gone', group, [])
        db_conductors.unregister_conductor('gone')      # found dead
        takeover.run(api.conductor)
        if group:
            assert db_nodes.get_node(uuid)['reservation'] is None
            assert api.wait_for(uuid, 'clean wait')
            assert agent.names() == []
            return
    node = api.wait_for(uuid, 'available')
    assert node['last_error'] is None
    assert agent.names() == ['clean.get_clean_steps',
                             'clean.execute_clean_step:erase_devices_metadata']


def _inspected(api, monkeypatch, end_agent_boot):
    """A node inspected in band, its agent's boot ended by
    ``end_agent_boot``; the node once at rest in manageable."""
    monkeypatch.setattr(agent_deploy, 'end_agent_boot', end_agent_boot)
    node = inspection_tests._inspect_waiting(api)
    status, body, _ = api.request(
        'POST', '/v1/continue_inspection',
        {'inventory': inspection_tests.INVENTORY}, version='1.84')
    assert status == 202, body
    return api.wait_for(node['uuid'], 'manageable')


def test_inspected_is_saved_before_the_machine_is_powered_off(
        api, monkeypatch):
    seen = []
    end = agent_deploy.end_agent_boot

    def recording(task, *args, **kwargs):
        row = db_nodes.get_node(task.node.uuid)
        seen.append((row['provision_state'],
                     row['inspection_finished_at'] is not None))
        return end(task, *args, **kwargs)

    node = _inspected(api, monkeypatch, recording)
    assert node['power_state'] == 'power off'
    assert seen == [('manageable', True)]


def test_lost_after_the_last_step_finishes_the_cleaning(api, agent):
    uuid = agent_tests._agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    info = dict(db_nodes.get_node(uuid)['driver_internal_info'])
    step = {'interface': 'deploy', 'step': 'erase_devices_metadata',
            'priority': 99, 'args': {}, 'abortable': True}
    # the last step done and saved so, then the conductor died while it
    # powered the ramdisk off
    info.update(clean_steps=[step], clean_step_index=1)
    node_id = _lost_while(uuid, provision_state='cleaning',
                          driver_internal_info=info)
    takeover.recover(api.conductor, node_id)
    node = api.wait_for(uuid, 'available')
    assert node['last_error'] is None and not node['maintenance']
    assert node['power_state'] == 'power off'
    assert 'clean_steps' not in node['driver_internal_info']
    assert agent.names() == []          # no step ran again


def test_the_end_of_the_steps_is_saved_before_the_tear_down(
        api, agent, monkeypatch):
    """What the test above takes over: a conductor lost in cleaning's
    tear down finds the plan's end saved."""
    from baremetal.drivers.modules.agent import deploy as agent_deploy
    seen = []
    shut_down = agent_deploy.AgentBase.tear_down_cleaning

    def recording(self, task):
        info = db_nodes.get_node(task.node.uuid)['driver_internal_info']
        seen.append((info.get('clean_step_index'),
                     len(info.get('clean_steps') or [])))
        return shut_down(self, task)

    monkeypatch.setattr(agent_deploy.AgentBase, 'tear_down_cleaning',
                        recording)
    uuid = agent_tests._agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    assert len(seen) == 1 and seen[0][0] == seen[0][1] >= 1, seen


def test_a_ramdisk_that_cannot_be_shut_down_leaves_the_inspection_done(
        api, monkeypatch):
    from baremetal.common import exception

    def failing(task, *args, **kwargs):
        raise exception.PowerStateFailure(pstate='power off')

    node = _inspected(api, monkeypatch, failing)
    assert node['inspection_finished_at'] is not None
    assert node['properties']['cpus'] == 4
    assert 'finished, but its ramdisk could not be shut down' in \
        node['last_error'], node['last_error']


@pytest.mark.parametrize('step, outcome', [
    ('deploy', 'active'), ('boot_instance', 'active'),
    ('write_image', 'active'), ('set_up_raid', 'deploy failed')])
def test_lost_while_deploying_resumes_a_step_that_may_run_again(
        api, step, outcome):
    """Booting, powering, the image's write and the boot set-up may
    run again (deployments.RESUMABLE); a node caught in another step (a
    deploy template's) fails, as in Ironic (where every node caught
    deploying fails: 36 of 116 in ``bench-fleet --lose-conductor
    deploy``)."""
    uuid = api.make_available()['uuid']
    info = dict(db_nodes.get_node(uuid)['driver_internal_info'])
    plan = [{'interface': 'deploy', 'step': step, 'priority': 100,
             'args': {}}]
    info.update(deploy_steps=plan, deploy_step_index=0)
    node_id = _lost_while(uuid, provision_state='deploying',
                          target_provision_state='active',
                          driver_internal_info=info,
                          deploy_step=plan[0])
    takeover.recover(api.conductor, node_id)
    node = api.wait_for(uuid, outcome)
    if outcome == 'active':
        assert node['last_error'] is None
        assert node['driver_internal_info'].get('deploy_steps') is None
    else:
        assert 'was lost' in node['last_error']


IMAGE = {'image_source': 'http://127.0.0.1:9/disk.raw',
         'image_os_hash_algo': 'sha256', 'image_os_hash_value': 'ab' * 32,
         'image_disk_format': 'raw'}


def _lost_before_waiting(uuid, state):
    """What a conductor that died after sending the step's command and
    before saving the node in its wait state left: the state
    ``state``, no command recorded."""
    info = dict(db_nodes.get_node(uuid)['driver_internal_info'])
    assert info.pop(agent_deploy.COMMAND)
    return _lost_while(uuid, provision_state=state,
                       driver_internal_info=info)


def _last_record(agent):
    return list(agent._records.values())[-1]


@pytest.mark.parametrize('agent_had', [
    'running', 'running, then failed', 'running, then failed twice',
    'ended', 'failed', 'nothing'])
def test_an_image_write_the_lost_conductor_sent_is_not_sent_again(
        api, agent, agent_had, monkeypatch):
    """Caught writing the image (found by ``bench-fleet --lose-conductor
    deploy``: 3 of 35 nodes caught deploying failed so): an agent still
    writing is waited for (sending it again, IPA answers 409 "agent is
    busy"), one that wrote it goes on to the next step; after a failed
    write, or none, the image is written (again).  A write waited for
    that then fails (its image on the lost conductor's file server, gone
    with it) is sent again by this conductor (it used to fail the
    deployment), once: failing again, the deployment fails."""
    uuid = api.make_manageable(agent_tests.MAC, deploy_interface='direct',
                               instance_info=IMAGE)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    api.wait_for(uuid, 'available')
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'wait call-back')
    agent.polls_until_done = 10 ** 6        # writing until told
    agent.received.clear()
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'write_image'
    record = _last_record(agent)
    assert record['command_name'] == 'standby.prepare_image'
    if agent_had == 'ended':
        record.update(command_status='SUCCEEDED', command_result={})
    elif agent_had == 'failed':
        record.update(command_status='FAILED', command_error={
            'message': 'the image server went away'})
    elif agent_had == 'nothing':
        del agent._records[record['id']]
    agent.received.clear()
    # what the image's write is told (and published for the agent, for
    # an image on the conductor): not built again for a write adopted
    built = []
    image_info = agent_deploy.image_info
    monkeypatch.setattr(agent_deploy, 'image_info',
                        lambda task: built.append(1) or image_info(task))
    node_id = _lost_before_waiting(uuid, 'deploying')
    takeover.recover(api.conductor, node_id)
    if agent_had.startswith('running'):
        node = api.wait_for(uuid, 'wait call-back')
        assert node['driver_internal_info'][agent_deploy.COMMAND][
            'id'] == record['id']
        assert agent.names() == []
    if agent_had.startswith('running, then failed'):
        record.update(command_status='FAILED', command_error={
            'message': 'Connection refused: the lost conductor\'s file '
                       'server'})
    agent.polls_until_done = 1
    written = ['standby.prepare_image'] if agent_had in (
        'failed', 'nothing') or agent_had.startswith('running, then') \
        else []
    if agent_had.endswith('twice'):
        agent.fail = {'standby.prepare_image'}
        node = api.wait_for(uuid, 'deploy failed')
        assert 'standby.prepare_image failed' in node['last_error']
        assert agent.names() == written
        return
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert agent.names() == written + ['image.install_bootloader',
                                       'standby.sync']
    assert len(built) == len(written)


def test_a_clean_step_the_agent_still_runs_is_waited_for(api, agent):
    uuid = agent_tests._agent_node(api)
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'clean wait')
    agent.polls_until_done = 10 ** 6
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean wait')
    assert node['clean_step']['step'] == 'erase_devices_metadata'
    node_id = _lost_before_waiting(uuid, 'cleaning')
    takeover.recover(api.conductor, node_id)
    api.wait_for(uuid, 'clean wait')
    agent.polls_until_done = 1
    node = api.wait_for(uuid, 'available')
    assert node['last_error'] is None
    assert agent.names() == ['clean.get_clean_steps',
                             'clean.execute_clean_step:'
                             'erase_devices_metadata']


@pytest.mark.parametrize('state, target, rests', [
    ('deleting', 'available', 'available'),
    ('verifying', 'manageable', 'manageable'),
    ('inspecting', 'manageable', 'manageable'),
    ('rescuing', 'rescue', 'rescue'),
    ('unrescuing', 'active', 'active'),
    ('adopting', 'active', 'active')])
def test_lost_while_its_work_may_run_again_runs_it_again(
        api, state, target, rests):
    """A node caught ``deleting`` (84 of the 123 the lost conductor held
    in ``bench-fleet --lose-conductor undeploy`` went to ``error`` so,
    as in Ironic, for the operator's ``deleted``), verifying,
    inspecting (16 of 114 in ``--lose-conductor inspect`` to ``inspect
    failed``), rescuing (its password saved when it started),
    unrescuing or adopting has that work run again from its start."""
    values = {}
    if state in ('deleting', 'rescuing', 'unrescuing'):
        uuid = api.make_available(rescue_interface='fake')['uuid']
        api.provision(uuid, 'active')
        api.wait_for(uuid, 'active')
        if state == 'rescuing':
            # as the rescue request saved it (rescuing.keep_password)
            values['instance_info'] = dict(
                db_nodes.get_node(uuid)['instance_info'] or {},
                rescue_password='s3cret', hashed_rescue_password='$5$x')
    else:
        uuid = api.make_manageable()
    node_id = _lost_while(uuid, provision_state=state,
                          target_provision_state=target, **values)
    takeover.recover(api.conductor, node_id)
    node = api.wait_for(uuid, rests)
    assert node['last_error'] is None
    if state == 'deleting':
        assert node['instance_info'] == {}
        assert node['power_state'] == 'power off'
    elif state == 'inspecting':
        assert node['inspection_finished_at'] is not None
    else:
        assert node['power_state'] is not None


def test_a_rescue_without_its_password_saved_fails_saying_so(api):
    """Caught rescuing with no rescue password saved (a node left so
    before the password was saved at the rescue's start)."""
    uuid = api.make_available(rescue_interface='fake')['uuid']
    api.provision(uuid, 'active')
    api.wait_for(uuid, 'active')
    node_id = _lost_while(uuid, provision_state='rescuing',
                          target_provision_state='rescue')
    takeover.recover(api.conductor, node_id)
    node = api.wait_for(uuid, 'rescue failed')
    assert 'no rescue password was saved' in node['last_error']
