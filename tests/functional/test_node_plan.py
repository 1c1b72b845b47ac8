"""GET /nodes/{node}/plan against a real baremetal-server: fake-hardware
cleaning and deployment with steps (each made to last with driver_info
``fake_step_seconds``), and cleaning through the agent
(tests/agent_double.py in this process, the ``direct`` deploy interface
with the fake boot) while the node waits on the ramdisk's call-back and
then on the agent's command."""

import time

import pytest

from tests import agent_double
from tests.functional import bmc_server as bs
from tests.functional import processes

STEP_SECONDS = 0.4
ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]
MANUAL = [{'interface': 'deploy', 'step': 'erase_devices_metadata'},
          {'interface': 'bios', 'step': 'factory_reset'}]


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('plan')
    conf = processes.agent_server_conf(tmp)
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


def plan(server, ident):
    status, body = bs.http(server, 'GET', '/nodes/%s/plan' % ident)
    assert status == 200, body
    return body


def wait_plan(server, ident, check, timeout=30, what='plan'):
    deadline = time.monotonic() + timeout
    while True:
        body = plan(server, ident)
        if check(body):
            return body
        assert time.monotonic() < deadline, 'no %s: %s' % (what, body)
        time.sleep(0.05)


def _provision(server, node, target, **extra):
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                           % node, dict(extra, target=target))
    assert status == 202, body


def _manageable(server, **fields):
    n = bs.create(server, driver='fake-hardware', **fields)
    _provision(server, n['uuid'], 'manage')
    bs.wait_provision(server, n['uuid'], 'manageable')
    return n['uuid']


def _reached(server, node, state):
    """The node in ``state``, unlocked (a manual cleaning keeps its
    target while it waits or after it failed, as Ironic shows it)."""
    return bs.wait(server, node, lambda n: n['provision_state'] == state
                   and n['reservation'] is None, what=state)


def _running(body):
    return [s for s in body['steps'] if s['state'] == 'running']


def test_bad_ident_is_404_as_the_node_api(server):
    status, body = bs.http(server, 'GET', '/nodes/no-such-node/plan')
    v1_status, v1_body = bs.http(server, 'GET', '/v1/nodes/no-such-node')
    assert (status, v1_status) == (404, 404)
    assert body == v1_body


def test_fake_cleaning_and_deployment_step_by_step(server):
    node = _manageable(server, name='plan-fake', driver_info={
        'fake_step_seconds': STEP_SECONDS})
    _provision(server, node, 'clean', clean_steps=MANUAL)
    # the conductor runs each step in turn: the plan shows it running
    seen = wait_plan(server, node, lambda b: _running(b) and
                     _running(b)[0]['step'] == 'factory_reset',
                     what='the second step running')
    assert seen['work'] == 'clean'
    assert [s['state'] for s in seen['steps']] == ['done', 'running']
    assert seen['waiting']['on'] == 'conductor'
    assert seen['steps'][1]['since'] >= seen['steps'][0]['finished_at']
    bs.wait_provision(server, node, 'manageable')
    done = plan(server, 'plan-fake')
    assert done['work'] == 'none' and done['waiting'] is None
    clean = done['timings']['clean']
    assert clean['outcome'] == 'done'
    assert [(s['step'], s['outcome']) for s in clean['steps']] == [
        ('erase_devices_metadata', 'done'), ('factory_reset', 'done')]
    assert all(s['seconds'] >= STEP_SECONDS for s in clean['steps'])

    _provision(server, node, 'provide')
    bs.wait_provision(server, node, 'available')
    # automated cleaning is off: the last cleaning ran no step
    skipped = plan(server, node)['timings']['clean']
    assert (skipped['outcome'], skipped['steps']) == ('done', [])
    _provision(server, node, 'active')
    during = wait_plan(server, node, lambda b: b['work'] == 'deploy' and
                       _running(b), what='a deploy step running')
    planned = [s['step'] for s in during['steps']]
    bs.wait_provision(server, node, 'active')
    deploy = plan(server, node)['timings']['deploy']
    assert deploy['outcome'] == 'done'
    # one entry per planned step, in order, each as long as the fake
    # made it
    assert [s['step'] for s in deploy['steps']] == planned
    assert all(s['outcome'] == 'done' and s['seconds'] >= STEP_SECONDS
               for s in deploy['steps'])
    assert deploy['seconds'] >= STEP_SECONDS * len(planned)
    # the cleaning's record is kept beside it
    assert plan(server, node)['timings']['clean'] == skipped


def test_a_failed_step_and_the_steps_after_it(server):
    node = _manageable(server, driver_info={
        'fake_fail_steps': ['deploy.erase_devices_metadata']})
    _provision(server, node, 'clean', clean_steps=MANUAL)
    _reached(server, node, 'clean failed')
    body = plan(server, node)
    assert (body['work'], body['steps_of']) == ('none', 'clean')
    assert [s['state'] for s in body['steps']] == ['failed', 'pending']
    assert body['timings']['clean']['outcome'] == 'failed'
    assert 'fake failure' in body['last_error']


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    double.polls_until_done = 10 ** 6       # the step runs until told
    yield double
    double.stop()


def test_cleaning_through_the_agent_waits_on_callback_then_agent(server,
                                                                 agent):
    node = _manageable(server, deploy_interface='direct',
                       boot_interface='fake')
    _provision(server, node, 'clean', clean_steps=ERASE)
    _reached(server, node, 'clean wait')
    body = plan(server, node)
    # the ramdisk is booting: no step runs, the node waits on its
    # call-back
    assert body['work'] == 'clean'
    assert body['waiting']['on'] == 'callback'
    assert body['waiting']['step'] is None
    assert not _running(body)
    # the agent looks the node up and heartbeats: its step starts as a
    # command that runs until the double is told to end it
    bs.agent_checks_in(server, node, agent)
    body = wait_plan(server, node, lambda b: _running(b) and
                     b['waiting']['on'] == 'agent',
                     what='the step waiting on the agent')
    step = _running(body)[0]
    assert (step['interface'], step['step']) == ('deploy',
                                                 'erase_devices_metadata')
    assert step['waiting_on'] == 'agent'
    assert body['provision_state'] == 'clean wait'
    assert body['waiting']['seconds'] >= 0
    assert 'clean.execute_clean_step:erase_devices_metadata' in \
        agent.names()
    # the agent finishes: cleaning ends; the time before the first step
    # (booting, call-back) is the preparation
    agent.polls_until_done = 0
    bs.wait_provision(server, node, 'manageable')
    clean = plan(server, node)['timings']['clean']
    assert clean['outcome'] == 'done'
    assert [(s['step'], s['outcome']) for s in clean['steps']] == [
        ('erase_devices_metadata', 'done')]
    assert clean['preparation_seconds'] > 0


def test_an_out_of_band_step_after_the_agents_waits_on_the_bmc(server,
                                                              agent):
    """The agent's command ends with its step: the BIOS step after it
    waits on the BMC (the command used to be kept to the end of the
    ramdisk's boot, showing that step as waiting on the agent)."""
    node = _manageable(server, deploy_interface='direct',
                       boot_interface='fake', driver_info={
                           'fake_async_steps': ['bios.factory_reset']})
    _provision(server, node, 'clean', clean_steps=MANUAL)
    _reached(server, node, 'clean wait')
    bs.agent_checks_in(server, node, agent)
    wait_plan(server, node, lambda b: [s['step'] for s in _running(b)] ==
              ['erase_devices_metadata'], what='the agent\'s step')
    agent.polls_until_done = 0
    body = wait_plan(server, node, lambda b: [
        s['step'] for s in _running(b)] == ['factory_reset'],
        what='the BIOS step')
    assert _running(body)[0]['waiting_on'] == 'bmc'
    assert body['waiting']['on'] == 'bmc'
    _, shown = bs.http(server, 'GET', '/v1/nodes/%s' % node)
    assert shown['provision_state'] == 'clean wait'
    assert 'agent_command' not in shown['driver_internal_info']
    # (the fake BIOS step ends only when told: the node is left waiting)
