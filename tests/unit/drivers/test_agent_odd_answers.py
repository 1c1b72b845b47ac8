"""An agent that answers what ironic-python-agent would not: clean steps
that are no list, steps of the wrong shape (no name, a priority that is
a word, negative or beyond 64 bits, an interface no driver has, a name
of 100 KB or with a NUL character), thousands of steps, command errors
and results of every shape, command statuses IPA has not (the agent
stand-in, tests/agent_double.py), driven through automated cleaning over
the API as an operator's ``provide`` would.

Every node ends cleaning, ``available`` or ``clean failed`` with a
last_error that says what the agent sent (bounded, no "internal error"),
nothing is left locked or in a transient state, and no conductor work
ends in an unexpected exception.  The agent as sent (``as-sent``) takes
its node to ``available``."""

import time

from tests import agent_double
from tests import harness
from tests.unit.drivers import test_agent_deploy as agent_tests

STEP = {'step': 'erase_devices_metadata', 'priority': 99,
        'interface': 'deploy', 'reboot_requested': False,
        'abortable': True}


def _steps(*steps):
    return {'steps': list(steps)}


def _step(**changes):
    return _steps(dict(STEP, **changes))


def _status(value):
    """Step commands report ``value`` as their status once run."""
    def odd(record):
        if record['command_name'] == 'clean.execute_clean_step' and \
                record['command_status'] != 'RUNNING':
            record = dict(record, command_status=value)
        return record
    return {'odd_record': odd}


def _failing(error):
    return {'fail': {'clean.execute_clean_step'}, 'error': error}


def _result(value):
    return {'results': {'erase_devices_metadata': value}}


NOT_LIST = 'the agent reported steps that are not a list'
INVALID = 'the agent reported a step that is not valid (%s)'
FAILED = 'clean.execute_clean_step failed: '
STATUS = 'with a status IPA has not'
# name: (how the agent is steered, what last_error says; None: the node
# is cleaned)
ODD = {
    'as-sent': ({}, None),
    'steps-string': ({'steps': 'erase_devices'}, NOT_LIST),
    # IPA's answer for a hardware manager without steps
    'steps-null': ({'steps': None}, None),
    'steps-object': ({'steps': {'step': 'erase_devices'}}, NOT_LIST),
    'step-string': (_steps('erase_devices_metadata'),
                    INVALID % 'not an object'),
    'step-null': (_steps(None), INVALID % 'not an object'),
    'step-no-name': (_steps({k: v for k, v in STEP.items()
                             if k != 'step'}),
                     INVALID % 'its step is no method name'),
    'step-no-interface': (_steps({k: v for k, v in STEP.items()
                                  if k != 'interface'}),
                          INVALID % 'its interface is no name'),
    'step-no-priority': (_steps({k: v for k, v in STEP.items()
                                 if k != 'priority'}),
                         INVALID % 'its priority is no integer'),
    'step-name-number': (_step(step=42),
                         INVALID % 'its step is no method name'),
    'step-name-100k': (_step(step='s' * 100000),
                       INVALID % 'its step is no method name'),
    'step-name-nul': (_step(step='erase\u0000'),
                      INVALID % 'its step is no method name'),
    'step-priority-word': (_step(priority='high'),
                           INVALID % 'its priority is no integer'),
    # not run, as a step of priority 0
    'step-priority-negative': (_step(priority=-5), None),
    'step-priority-float': (_step(priority=1.5),
                            INVALID % 'its priority is no integer'),
    'step-priority-huge': (_step(priority=2 ** 70),
                           INVALID % 'its priority is no integer'),
    'step-priority-null': (_step(priority=None),
                           INVALID % 'its priority is no integer'),
    # steps of interfaces the agent does not run for this node: left
    # out, as Ironic does
    'step-interface-unknown': (_step(interface='bogus'), None),
    'step-interface-power': (_step(interface='power'), None),
    'step-interface-number': (_step(interface=7),
                              INVALID % 'its interface is no name'),
    'step-argsinfo-string': (_step(argsinfo='runtime'),
                             INVALID % 'its argsinfo is no object of '
                             'objects'),
    'step-argsinfo-odd': (_step(argsinfo={'runtime': 'seconds'}),
                          INVALID % 'its argsinfo is no object of '
                          'objects'),
    'step-reboot-word': (_step(reboot_requested='yes'),
                         INVALID % 'its reboot_requested is no boolean'),
    'step-abortable-object': (_step(abortable={'no': 1}),
                              INVALID % 'its abortable is no boolean'),
    'steps-duplicate': (_steps(STEP, STEP), None),
    'steps-3000': (_steps(*[dict(STEP, step='step_%d' % i, priority=0)
                            for i in range(3000)] + [STEP]), None),
    'error-string-100k': (_failing('e' * 100000), FAILED + 'eeee'),
    'error-nul': (_failing('boom\u0000'), FAILED + 'boom\\x00'),
    'error-null': (_failing(None), FAILED + 'the command failed with no '
                   'error given'),
    'error-list': (_failing(['one', {'two': 2}]), FAILED + "['one'"),
    'error-number': (_failing(500), FAILED + '500'),
    'error-object-100k': (_failing({'type': 'X', 'details': 'd' * 100000}),
                          FAILED + 'dddd'),
    'result-string': (_result('done'), None),
    'result-list': (_result([1, 2]), None),
    'result-100k': (_result({'log': 'l' * 100000}), None),
    'result-nul': (_result({'log': 'l\u0000'}), None),
    'status-unknown': (_status('EXPLODED'), STATUS),
    'status-number': (_status(42), STATUS),
    'status-null': (_status(None), STATUS),
    'status-list': (_status(['SUCCEEDED']), STATUS),
}
RESTING = ('available', 'clean failed')


# the service as test_agent_deploy's (its agent steps at their own
# priorities)
api = agent_tests.api


def _mac(index: int) -> str:
    return '52:54:00:0d:%02x:%02x' % (index >> 8, index & 255)


def _clean(api, name: str, index: int) -> dict:
    """A node through automated cleaning with an agent steered by
    ``ODD[name]``; the node once cleaning ended (or 20 s passed)."""
    agent = agent_double.AgentDouble()
    try:
        for attr, value in ODD[name][0].items():
            setattr(agent, attr, value)
        mac = _mac(index)
        uuid = api.make_manageable(mac, deploy_interface='ramdisk',
                                   name='odd-%s' % name)
        api.provision(uuid, 'provide')
        api.wait_for(uuid, 'clean wait')
        status, found, _ = api.request(
            'GET', '/v1/lookup?addresses=%s' % mac, version='1.62')
        assert status == 200, found
        agent.token = found['config']['agent_token']
        status, body, _ = api.request(
            'POST', '/v1/heartbeat/%s' % uuid,
            {'callback_url': agent.url, 'agent_token': agent.token,
             'agent_version': '13.0.0'}, version='1.62')
        assert status == 202, body
        deadline = time.monotonic() + 20
        while True:
            api.conductor.workers.wait_idle(5)
            node = api.node(uuid)
            if node['provision_state'] in RESTING and \
                    not node['reservation']:
                return node
            if time.monotonic() > deadline:
                return node
            time.sleep(0.02)
    finally:
        agent.stop()


def _problem(name: str, node: dict) -> str | None:
    """What is wrong with how cleaning ended for an odd agent."""
    words = ODD[name][1]
    state, error = node['provision_state'], node['last_error'] or ''
    if node['reservation']:
        return '%s: left locked in %s' % (name, state)
    if words is None:
        if (state, error) != ('available', ''):
            return '%s: %s, %s' % (name, state, error[:300])
    elif state != 'clean failed' or words not in error or \
            len(error) >= 2000:
        return '%s: %s, %s' % (name, state, error[:2000])
    return None


def test_odd_agent_answers_end_cleaning_saying_so(api):
    """One test of every odd agent (a module-scoped fixture would run
    them once per xdist worker)."""
    with harness.ErrorRecords().watching() as records:
        nodes = {name: _clean(api, name, i) for i, name in enumerate(ODD)}
    problems = [p for p in (_problem(n, node) for n, node in nodes.items())
                if p]
    assert problems == [], '\n'.join(problems)
    # no conductor work ended in an unexpected exception
    unexpected = records.unexpected()
    assert unexpected == [], '\n'.join(unexpected)
