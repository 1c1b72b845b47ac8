"""Fast track over HTTP: a real baremetal-server (fake power and boot,
the ``direct`` deploy interface) and the agent double of
tests/agent_double.py, which answers only with the token it got at its
lookup.  A node with ``driver_info`` ``fast_track`` keeps its agent from
a manual cleaning through the automated cleaning of ``provide`` to the
deployment: one lookup in all, no further ``wait call-back`` for the
ramdisk; an agent that died meanwhile makes the node boot it again; an
aborted cleaning stops the agent; a node without fast track is powered
off and its agent refused lookups as before.  (The same with a real
agent on a virtual machine: tests/vm/test_software_raid.py.)"""

import pytest

from tests import agent_double
from tests.functional import bmc_server as bs
from tests.functional import test_agent_faults as faults

ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]
IMAGE = {'image_source': 'http://127.0.0.1:9/disk.img',
         'image_os_hash_algo': 'sha256', 'image_os_hash_value': 'ab' * 32}


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    yield double
    double.stop()


def _node(agent_server, fast_track=True, **fields):
    info = {'fast_track': fast_track} if fast_track is not None else {}
    return faults._node(agent_server, driver_info=info, **fields)


def _lookup(agent_server, node):
    return bs.http(agent_server, 'GET', '/v1/lookup?node_uuid=%s' % node,
                   version='1.62')


def _cleaned_by_hand(agent_server, agent, node):
    """A manual cleaning that boots the agent (the double looks up and
    heartbeats), to its end in manageable."""
    faults._provision(agent_server, node, 'clean', clean_steps=ERASE)
    bs.wait(agent_server, node, lambda n: n['provision_state'] == 'clean wait')
    faults._boot(agent_server, agent, node)
    got = faults._ended(agent_server, node, 'manageable', 60)
    assert got['last_error'] is None, got['last_error']
    assert 'clean.execute_clean_step:erase_devices_metadata' in \
        agent.names(), agent.names()
    return got


def _heartbeat_then(agent_server, agent, node, verb, ends_in):
    """The agent's heartbeat (as it sends one every few seconds), then
    ``verb`` to its end: the node, and the agent commands it sent."""
    faults.heartbeat(agent_server, agent, node)
    before = len(agent.names())
    faults._provision(agent_server, node, verb)
    got = faults._ended(agent_server, node, ends_in, 60)
    assert got['last_error'] is None, got['last_error']
    return got, agent.names()[before:]


def test_the_agent_left_running_cleans_and_deploys_without_a_boot(
        agent_server, agent):
    node = _node(agent_server, automated_clean=True, instance_info=IMAGE)
    got = _cleaned_by_hand(agent_server, agent, node)
    # the agent keeps running: the node stays on, its agent known
    assert got['power_state'] == 'power on', got['power_state']
    info = got['driver_internal_info']
    assert info['agent_url'] == agent.url, info
    assert info['agent_secret_token'] == '******', info
    # and may look up and heartbeat between operations; the token is
    # not handed out again
    status, found = _lookup(agent_server, node)
    assert status == 200, found
    assert found['config']['agent_token'] == '******', found['config']

    # provide: the automated cleaning asks the running agent for its
    # steps and runs them; nothing boots, no wait for a heartbeat
    got, ran = _heartbeat_then(agent_server, agent, node, 'provide',
                               'available')
    assert ran[0] == 'clean.get_clean_steps', ran
    assert 'clean.execute_clean_step:erase_devices_metadata' in ran, ran
    assert got['power_state'] == 'power on'

    # deploy: the running agent writes the image (its token of the
    # first boot still good); it is then shut down
    got, ran = _heartbeat_then(agent_server, agent, node, 'active',
                               'active')
    assert ran[:2] == ['deploy.get_deploy_steps', 'standby.prepare_image'], \
        ran
    assert 'standby.sync' in ran, ran
    assert 'agent_url' not in got['driver_internal_info']
    assert 'agent_secret_token' not in got['driver_internal_info']
    assert got['power_state'] == 'power on'
    # waited on the agent's image write, never for a ramdisk to come up
    # (the deploy step), nor in the automated cleaning for one (no
    # step): only the manual cleaning's boot did
    waited = bs.steps_waited_in(agent_server, node)
    assert 'deploy' not in waited and 'write_image' in waited, waited
    waited = bs.steps_waited_in(agent_server, node, 'clean wait', 'clean_step')
    assert waited.count(None) == 1, waited
    # with the agent gone, the node is no longer looked up
    status, _ = _lookup(agent_server, node)
    assert status == 404


def test_an_agent_that_died_is_booted_again(agent_server, agent):
    node = _node(agent_server, automated_clean=True)
    _cleaned_by_hand(agent_server, agent, node)
    agent.stop()
    # its last heartbeat is recent and the node is on, but nothing
    # answers: the cleaning boots the ramdisk and waits for it
    faults._provision(agent_server, node, 'provide')
    got = bs.wait(agent_server, node,
                  lambda n: n['provision_state'] == 'clean wait' and
                  n['clean_step'] == {}, timeout=30,
                  what='clean wait for the ramdisk')
    assert 'agent_url' not in got['driver_internal_info']
    second = agent_double.AgentDouble()
    try:
        status, found = _lookup(agent_server, node)
        assert status == 200, found
        # a new boot's token, handed out at its lookup
        assert found['config']['agent_token'] not in ('******', agent.token)
        second.token = found['config']['agent_token']
        faults.heartbeat(agent_server, second, node)
        got = faults._ended(agent_server, node, 'available', 60)
        assert got['last_error'] is None, got['last_error']
        assert second.names()[0] == 'clean.get_clean_steps'
    finally:
        second.stop()


def test_an_aborted_cleaning_stops_the_agent(agent_server, agent):
    """The step may still run in the agent: the node is powered off and
    its agent forgotten, fast track or not."""
    node = _node(agent_server)
    agent.polls_until_done = 10 ** 6        # the step runs until stopped
    faults._provision(agent_server, node, 'clean', clean_steps=ERASE)
    bs.wait(agent_server, node,
            lambda n: n['provision_state'] == 'clean wait')
    faults._boot(agent_server, agent, node)
    # abort is taken in clean wait: the step started (in cleaning) and
    # the conductor waits for the agent again
    bs.wait(agent_server, node, lambda n: (n['clean_step'] or {}).get(
        'step') == 'erase_devices_metadata' and
        n['provision_state'] == 'clean wait', what='the step running')
    faults._provision(agent_server, node, 'abort')
    got = faults._ended(agent_server, node, 'clean failed', 30)
    got = bs.wait(agent_server, node, lambda n: n['power_state'] ==
                  'power off', what='the node powered off')
    assert 'agent_url' not in got['driver_internal_info'], got
    status, _ = _lookup(agent_server, node)
    assert status == 404


def test_without_fast_track_the_agent_is_shut_down(agent_server, agent):
    node = _node(agent_server, fast_track=None)
    got = _cleaned_by_hand(agent_server, agent, node)
    assert got['power_state'] == 'power off', got['power_state']
    assert 'agent_url' not in got['driver_internal_info']
    status, body = _lookup(agent_server, node)
    assert status == 404, body
    # fast_track false on the node says the same
    node = _node(agent_server, fast_track='false')
    got = _cleaned_by_hand(agent_server, agent, node)
    assert got['power_state'] == 'power off', got['power_state']


def test_a_fast_track_that_is_not_a_boolean_is_refused(agent_server):
    node = _node(agent_server, fast_track='sometimes')
    status, body = bs.http(agent_server, 'GET', '/v1/nodes/%s/validate' % node)
    assert status == 200, body
    assert body['deploy']['result'] is False, body['deploy']
    assert "Invalid value of fast_track: Unrecognized value " \
        "'sometimes'" in body['deploy']['reason'], body['deploy']
    # its agent's lookup: 400 with the reason, as Ironic answers
    status, body = _lookup(agent_server, node)
    assert status == 400, body
    assert "Invalid value of fast_track: Unrecognized value 'sometimes'" \
        in body['error_message'], body
    faults._provision(agent_server, node, 'clean', clean_steps=ERASE)
    got = faults._ended(agent_server, node, 'clean failed', 30)
    assert 'Invalid value of fast_track' in got['last_error'], got
