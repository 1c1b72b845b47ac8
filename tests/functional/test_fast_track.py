"""Fast track over HTTP: a real baremetal-server (fake power and boot,
the ``direct`` deploy interface) and the agent double of
tests/agent_double.py, which answers only with the token it got at its
lookup.  A node with ``driver_info`` ``fast_track`` keeps its agent from
a manual cleaning through the automated cleaning of ``provide`` to the
deployment: one lookup in all, no further ``wait call-back`` for the
ramdisk; an agent that died meanwhile makes the node boot it again; a
node without fast track is powered off and its agent refused lookups as
before.  (The same with a real agent on a virtual machine:
tests/vm/test_software_raid.py.)"""

import pytest

from tests import agent_double
from tests.functional import bmc_server as bs
from tests.functional import processes
from tests.functional import test_agent_faults as faults

ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]
IMAGE = {'image_source': 'http://127.0.0.1:9/disk.img',
         'image_os_hash_algo': 'sha256', 'image_os_hash_value': 'ab' * 32}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('fasttrack')
    conf = processes.base_conf(
        tmp,
        conductor={'check_provision_state_interval': 1,
                   'async_step_poll_interval': 1,
                   'clean_callback_timeout': 60,
                   'deploy_callback_timeout': 60},
        agent={'command_timeout': 3, 'max_command_attempts': 2,
               'command_poll_max_interval': 0.5})
    conf['DEFAULT'].update({
        'enabled_deploy_interfaces': ['fake', 'direct'],
        'enabled_boot_interfaces': ['fake'],
    })
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    yield double
    double.stop()


def _node(server, fast_track=True, **fields):
    info = {'fast_track': fast_track} if fast_track is not None else {}
    return faults._node(server, driver_info=info, **fields)


def _lookup(server, node):
    return bs.http(server, 'GET', '/v1/lookup?node_uuid=%s' % node,
                   version='1.62')


def _cleaned_by_hand(server, agent, node):
    """A manual cleaning that boots the agent (the double looks up and
    heartbeats), to its end in manageable."""
    faults._provision(server, node, 'clean', clean_steps=ERASE)
    bs.wait(server, node, lambda n: n['provision_state'] == 'clean wait')
    faults._boot(server, agent, node)
    got = faults._ended(server, node, 'manageable', 60)
    assert got['last_error'] is None, got['last_error']
    assert 'clean.execute_clean_step:erase_devices_metadata' in \
        agent.names(), agent.names()
    return got


def test_the_agent_left_running_cleans_and_deploys_without_a_boot(
        server, agent):
    node = _node(server, automated_clean=True, instance_info=IMAGE)
    got = _cleaned_by_hand(server, agent, node)
    # the agent keeps running: the node stays on, its agent known
    assert got['power_state'] == 'power on', got['power_state']
    info = got['driver_internal_info']
    assert info['agent_url'] == agent.url, info
    assert info['agent_secret_token'] == '******', info
    # and may look up and heartbeat between operations; the token is
    # not handed out again
    status, found = _lookup(server, node)
    assert status == 200, found
    assert found['config']['agent_token'] == '******', found['config']
    faults.heartbeat(server, agent, node)

    # provide: the automated cleaning asks the running agent for its
    # steps and runs them; nothing boots, no wait for a heartbeat
    before = len(agent.names())
    faults._provision(server, node, 'provide')
    got = faults._ended(server, node, 'available', 60)
    assert got['last_error'] is None, got['last_error']
    ran = agent.names()[before:]
    assert ran[0] == 'clean.get_clean_steps', ran
    assert 'clean.execute_clean_step:erase_devices_metadata' in ran, ran
    assert got['power_state'] == 'power on'

    # deploy: the running agent writes the image (its token of the
    # first boot still good); it is then shut down
    faults.heartbeat(server, agent, node)
    before = len(agent.names())
    faults._provision(server, node, 'active')
    got = faults._ended(server, node, 'active', 60)
    assert got['last_error'] is None, got['last_error']
    ran = agent.names()[before:]
    assert ran[:2] == ['deploy.get_deploy_steps', 'standby.prepare_image'], \
        ran
    assert 'standby.sync' in ran, ran
    assert 'agent_url' not in got['driver_internal_info']
    assert 'agent_secret_token' not in got['driver_internal_info']
    assert got['power_state'] == 'power on'
    # waited on the agent's image write, never for a ramdisk to come up
    # (the deploy step), nor in the automated cleaning for one (no
    # step): only the manual cleaning's boot did
    waited = bs.steps_waited_in(server, node)
    assert 'deploy' not in waited and 'write_image' in waited, waited
    waited = bs.steps_waited_in(server, node, 'clean wait', 'clean_step')
    assert waited.count(None) == 1, waited
    # with the agent gone, the node is no longer looked up
    status, _ = _lookup(server, node)
    assert status == 404


def test_an_agent_that_died_is_booted_again(server, agent):
    node = _node(server, automated_clean=True)
    _cleaned_by_hand(server, agent, node)
    agent.stop()
    # its last heartbeat is recent and the node is on, but nothing
    # answers: the cleaning boots the ramdisk and waits for it
    faults._provision(server, node, 'provide')
    got = bs.wait(server, node,
                  lambda n: n['provision_state'] == 'clean wait' and
                  n['clean_step'] == {}, timeout=30,
                  what='clean wait for the ramdisk')
    assert 'agent_url' not in got['driver_internal_info']
    second = agent_double.AgentDouble()
    try:
        status, found = _lookup(server, node)
        assert status == 200, found
        # a new boot's token, handed out at its lookup
        assert found['config']['agent_token'] not in ('******', agent.token)
        second.token = found['config']['agent_token']
        faults.heartbeat(server, second, node)
        got = faults._ended(server, node, 'available', 60)
        assert got['last_error'] is None, got['last_error']
        assert second.names()[0] == 'clean.get_clean_steps'
    finally:
        second.stop()


def test_without_fast_track_the_agent_is_shut_down(server, agent):
    node = _node(server, fast_track=None)
    got = _cleaned_by_hand(server, agent, node)
    assert got['power_state'] == 'power off', got['power_state']
    assert 'agent_url' not in got['driver_internal_info']
    status, body = _lookup(server, node)
    assert status == 404, body
    # fast_track false on the node says the same
    node = _node(server, fast_track='false')
    got = _cleaned_by_hand(server, agent, node)
    assert got['power_state'] == 'power off', got['power_state']


def test_a_fast_track_that_is_not_a_boolean_is_refused(server):
    node = _node(server, fast_track='sometimes')
    status, body = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
    assert status == 200, body
    assert body['deploy']['result'] is False, body['deploy']
    assert "driver_info fast_track must be true or false, got " \
        "'sometimes'" in body['deploy']['reason'], body['deploy']
    faults._provision(server, node, 'clean', clean_steps=ERASE)
    got = faults._ended(server, node, 'clean failed', 30)
    assert 'fast_track must be true or false' in got['last_error'], got
