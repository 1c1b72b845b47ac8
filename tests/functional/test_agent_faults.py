"""An agent that misbehaves: it answers 500, something that is not JSON,
JSON of the wrong shape, or never answers (tests/agent_double.py in this
process; the server under test is a real baremetal-server with the
``direct`` deploy interface and the fake boot and power).  Cleaning and
deployment end in ``clean failed`` / ``deploy failed`` with the reason
within the [agent] timeouts, no lock is left, a heartbeat is answered at
once even while the agent hangs, and the server serves other nodes."""

import time

import pytest

from tests import agent_double
from tests.functional import bmc_server as bs
from tests.functional import processes

COMMAND_TIMEOUT = processes.AGENT_COMMAND_TIMEOUT
ATTEMPTS = processes.AGENT_ATTEMPTS
# the longest a silent agent can hold one request, with slack for a
# loaded machine
HANG_BUDGET = COMMAND_TIMEOUT * ATTEMPTS + 15

MODES = {
    '500': ((500, b'{"faultstring": "the agent blew up"}'),
            'HTTP 500: the agent blew up'),
    'garbage': ((200, b'<html>proxy error</html>'),
                'not a JSON object'),
    'wrong-shape': ((200, b'{"commands": []}'),
                    'without a command id or with a status'),
    'hang': (None, 'no answer within %d seconds ([agent]command_timeout)'
                   % COMMAND_TIMEOUT),
}


@pytest.fixture(scope='module')
def server(agent_server):
    """conftest's: the direct deploy interface, fake power and boot, the
    agent timeouts above."""
    return agent_server


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    double.polls_until_done = 10 ** 6       # steps run until told
    yield double
    double.stop()


def _misbehave(agent, mode):
    answer, _ = MODES[mode]
    if answer is None:
        agent.hang = True
    else:
        agent.answer = answer


def _node(server, **fields):
    n = bs.create(server, driver='fake-hardware', deploy_interface='direct',
                  boot_interface='fake', **fields)
    _provision(server, n['uuid'], 'manage')
    bs.wait_provision(server, n['uuid'], 'manageable')
    return n['uuid']


def _provision(server, node, target, **extra):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, dict(extra, target=target))
    assert status == 202, body


def _boot(server, agent, node):
    """What the agent does once up: look up, then heartbeat; the
    heartbeat is answered at once whatever the agent then does."""
    status, found = bs.http(server, 'GET', '/v1/lookup?node_uuid=%s' % node,
                            version='1.62')
    assert status == 200, found
    agent.token = found['config']['agent_token']
    heartbeat(server, agent, node)


def heartbeat(server, agent, node):
    """One heartbeat, answered at once; tried again after a 409 (a worker
    finishing with the node), as the agent does."""
    for _ in range(50):
        t = time.monotonic()
        status, body = bs.http(server, 'POST', '/v1/heartbeat/%s' % node,
                               {'callback_url': agent.url,
                                'agent_token': agent.token,
                                'agent_version': '10.0.0'},
                               version='1.62')
        # a heartbeat that waited on a silent agent would take at least
        # COMMAND_TIMEOUT * ATTEMPTS (6 s)
        assert time.monotonic() - t < COMMAND_TIMEOUT, \
            'the heartbeat waited on the agent'
        if status != 409:
            break
        time.sleep(0.1)
    assert status == 202, body


def _ended(server, node, state, timeout):
    """The node in ``state`` and unlocked.  (After a manual clean fails,
    target_provision_state stays "manageable", as Ironic shows it.)"""
    return bs.wait(server, node, lambda n: n['provision_state'] == state
                   and n['reservation'] is None, timeout,
                   'provision state %s' % state)


def _still_serving(server):
    other = bs.create(server, driver='fake-hardware')['uuid']
    _provision(server, other, 'manage')
    bs.wait_provision(server, other, 'manageable', timeout=10)


ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]


@pytest.mark.parametrize('mode', sorted(MODES))
def test_agent_failing_to_list_its_steps_fails_cleaning(server, agent,
                                                        mode):
    node = _node(server)
    _provision(server, node, 'clean', clean_steps=ERASE)
    bs.wait(server, node, lambda n: n['provision_state'] == 'clean wait')
    _misbehave(agent, mode)
    started = time.monotonic()
    _boot(server, agent, node)
    got = _ended(server, node, 'clean failed', HANG_BUDGET)
    assert time.monotonic() - started < HANG_BUDGET
    words = MODES[mode][1]
    assert 'clean.get_clean_steps' in got['last_error'], got['last_error']
    assert words in got['last_error'], got['last_error']
    assert agent.token not in got['last_error']
    _still_serving(server)
    # the operator's way out
    _provision(server, node, 'manage')
    bs.wait_provision(server, node, 'manageable')


@pytest.mark.parametrize('mode', sorted(MODES))
def test_agent_turning_bad_while_a_step_runs_fails_cleaning(server, agent,
                                                            mode):
    node = _node(server)
    _provision(server, node, 'clean', clean_steps=ERASE)
    bs.wait(server, node, lambda n: n['provision_state'] == 'clean wait')
    _boot(server, agent, node)
    deadline = time.monotonic() + 30
    while 'clean.execute_clean_step:erase_devices_metadata' not in \
            agent.names():
        assert time.monotonic() < deadline, agent.names()
        time.sleep(0.05)
    _misbehave(agent, mode)
    started = time.monotonic()
    # the agent's own heartbeat still comes and is answered at once
    heartbeat(server, agent, node)
    got = _ended(server, node, 'clean failed', HANG_BUDGET)
    assert time.monotonic() - started < HANG_BUDGET
    assert MODES[mode][1] in got['last_error'], got['last_error']
    assert 'erase_devices_metadata' in got['last_error'] or \
        'clean.execute_clean_step' in got['last_error'], got['last_error']
    _still_serving(server)


@pytest.mark.parametrize('mode', sorted(MODES))
def test_agent_failing_to_write_the_image_fails_deploy(server, agent, mode):
    node = _node(server, instance_info={
        'image_source': 'http://127.0.0.1:9/disk.img',
        'image_os_hash_algo': 'sha256', 'image_os_hash_value': 'ab' * 32})
    _provision(server, node, 'provide')
    bs.wait_provision(server, node, 'available')
    _provision(server, node, 'active')
    bs.wait(server, node, lambda n: n['provision_state'] == 'wait call-back')
    _misbehave(agent, mode)
    started = time.monotonic()
    _boot(server, agent, node)
    got = _ended(server, node, 'deploy failed', HANG_BUDGET)
    assert time.monotonic() - started < HANG_BUDGET
    assert 'standby.prepare_image' in got['last_error'], got['last_error']
    assert MODES[mode][1] in got['last_error'], got['last_error']
    _still_serving(server)
    # and the operator's way out: deleted tears it down
    agent.hang, agent.answer = False, None
    _provision(server, node, 'deleted')
    _ended(server, node, 'available', 30)
