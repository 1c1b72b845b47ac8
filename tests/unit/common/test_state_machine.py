"""Every state x event pair of the provision state machine, as Ironic
documents it, and the API's answer for every state x verb pair."""

import itertools

import pytest

from baremetal.common import state_machine as sm
from baremetal.common import states as s

# The Ironic state machine, written out independently of the table.
EXPECTED = {
    s.ENROLL: {'manage': s.VERIFYING},
    s.VERIFYING: {'done': s.MANAGEABLE, 'fail': s.ENROLL},
    s.MANAGEABLE: {'provide': s.CLEANING, 'clean': s.CLEANING,
                   'inspect': s.INSPECTING, 'adopt': s.ADOPTING},
    s.INSPECTING: {'done': s.MANAGEABLE, 'wait': s.INSPECTWAIT,
                   'fail': s.INSPECTFAIL},
    s.INSPECTWAIT: {'done': s.MANAGEABLE, 'fail': s.INSPECTFAIL,
                    'abort': s.INSPECTFAIL},
    s.INSPECTFAIL: {'manage': s.MANAGEABLE, 'inspect': s.INSPECTING},
    s.CLEANING: {'done': s.AVAILABLE, 'manage': s.MANAGEABLE,
                 'wait': s.CLEANWAIT, 'fail': s.CLEANFAIL,
                 'hold': s.CLEANHOLD},
    s.CLEANWAIT: {'resume': s.CLEANING, 'fail': s.CLEANFAIL,
                  'abort': s.CLEANFAIL, 'hold': s.CLEANHOLD},
    s.CLEANHOLD: {'unhold': s.CLEANWAIT, 'abort': s.CLEANFAIL},
    s.CLEANFAIL: {'manage': s.MANAGEABLE},
    s.AVAILABLE: {'manage': s.MANAGEABLE, 'deploy': s.DEPLOYING},
    s.DEPLOYING: {'wait': s.DEPLOYWAIT, 'done': s.ACTIVE,
                  'fail': s.DEPLOYFAIL, 'hold': s.DEPLOYHOLD},
    s.DEPLOYWAIT: {'resume': s.DEPLOYING, 'fail': s.DEPLOYFAIL,
                   'deleted': s.DELETING, 'hold': s.DEPLOYHOLD,
                   'abort': s.DEPLOYFAIL},
    s.DEPLOYHOLD: {'unhold': s.DEPLOYWAIT, 'abort': s.DEPLOYFAIL},
    s.DEPLOYFAIL: {'rebuild': s.DEPLOYING, 'deploy': s.DEPLOYING,
                   'deleted': s.DELETING},
    s.ACTIVE: {'rebuild': s.DEPLOYING, 'deleted': s.DELETING,
               'rescue': s.RESCUING, 'service': s.SERVICING},
    s.SERVICING: {'done': s.ACTIVE, 'fail': s.SERVICEFAIL,
                  'wait': s.SERVICEWAIT, 'hold': s.SERVICEHOLD},
    s.SERVICEWAIT: {'resume': s.SERVICING, 'fail': s.SERVICEFAIL,
                    'abort': s.SERVICEFAIL, 'hold': s.SERVICEHOLD},
    s.SERVICEHOLD: {'unhold': s.SERVICEWAIT, 'service': s.SERVICING,
                    'fail': s.SERVICEFAIL, 'abort': s.SERVICEFAIL},
    s.SERVICEFAIL: {'service': s.SERVICING, 'rescue': s.RESCUING,
                    'abort': s.ACTIVE},
    s.DELETING: {'clean': s.CLEANING, 'error': s.ERROR},
    s.ERROR: {'rebuild': s.DEPLOYING, 'deleted': s.DELETING},
    s.ADOPTING: {'done': s.ACTIVE, 'fail': s.ADOPTFAIL},
    s.ADOPTFAIL: {'adopt': s.ADOPTING, 'manage': s.MANAGEABLE},
    s.RESCUING: {'wait': s.RESCUEWAIT, 'done': s.RESCUE,
                 'fail': s.RESCUEFAIL},
    s.RESCUEWAIT: {'resume': s.RESCUING, 'fail': s.RESCUEFAIL,
                   'abort': s.RESCUEFAIL, 'deleted': s.DELETING},
    s.RESCUEFAIL: {'rescue': s.RESCUING, 'unrescue': s.UNRESCUING,
                   'deleted': s.DELETING},
    s.RESCUE: {'rescue': s.RESCUING, 'unrescue': s.UNRESCUING,
               'deleted': s.DELETING},
    s.UNRESCUING: {'done': s.ACTIVE, 'fail': s.UNRESCUEFAIL},
    s.UNRESCUEFAIL: {'rescue': s.RESCUING, 'unrescue': s.UNRESCUING,
                     'deleted': s.DELETING},
}
EVENTS = sorted({e for v in EXPECTED.values() for e in v})


@pytest.mark.parametrize('state,event',
                         list(itertools.product(EXPECTED, EVENTS)))
def test_every_state_event_pair(state, event):
    want = EXPECTED[state].get(event)
    assert sm.next_state(state, event) == want
    m = sm.machine(state)
    if want is None:
        with pytest.raises(Exception):
            m.process_event(event)
        assert m.current_state == state
    else:
        m.process_event(event)
        assert m.current_state == want


def test_stable_states_are_ironics():
    assert sm.STABLE_STATES == {s.ENROLL, s.MANAGEABLE, s.AVAILABLE,
                                s.ACTIVE, s.ERROR, s.RESCUE}


def test_targets_of_transient_states():
    assert sm.target_of(s.CLEANING) == s.AVAILABLE
    assert sm.target_of(s.DEPLOYWAIT) == s.ACTIVE
    assert sm.target_of(s.VERIFYING) == s.MANAGEABLE
    assert sm.target_of(s.RESCUEWAIT) == s.RESCUE
    assert sm.target_of(s.ACTIVE) is None


def test_machine_copies_are_independent():
    a = sm.machine(s.AVAILABLE)
    b = sm.machine(s.AVAILABLE)
    a.process_event('deploy')
    assert b.current_state == s.AVAILABLE


# verb -> event as the API spells it
VERBS = s.VERBS

# Every state the API can meet a node in, reached through the API with
# fake-hardware, and the extra arguments some verbs need.
_ARGS = {'clean': {'clean_steps': [{'interface': 'deploy',
                                    'step': 'erase_devices'}]},
         'rescue': {'rescue_password': 'pw'},
         'service': {'service_steps': [{'interface': 'bios',
                                        'step': 'factory_reset'}]}}


def _reach(api, state):
    n = api.create_node()
    u = n['uuid']
    path = {
        s.ENROLL: [],
        s.MANAGEABLE: [('manage', s.MANAGEABLE)],
        s.AVAILABLE: [('manage', s.MANAGEABLE), ('provide', s.AVAILABLE)],
        s.ACTIVE: [('manage', s.MANAGEABLE), ('provide', s.AVAILABLE),
                   ('active', s.ACTIVE)],
        s.RESCUE: [('manage', s.MANAGEABLE), ('provide', s.AVAILABLE),
                   ('active', s.ACTIVE), ('rescue', s.RESCUE)],
    }[state]
    for verb, want in path:
        api.provision(u, verb, **_ARGS.get(verb, {}))
        api.wait_for(u, want)
    return u


@pytest.mark.parametrize('state,verb', list(itertools.product(
    [s.ENROLL, s.MANAGEABLE, s.AVAILABLE, s.ACTIVE, s.RESCUE],
    sorted(VERBS))))
def test_api_accepts_exactly_the_verbs_the_machine_allows(api, state,
                                                          verb):
    u = _reach(api, state)
    allowed = VERBS[verb] in EXPECTED[state]
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % u,
        dict(target=verb, **_ARGS.get(verb, {})), version='1.95')
    if allowed:
        assert status == 202, body
    else:
        assert status == 400, body
        assert 'can not be performed' in body['error_message']
        assert api.node(u)['provision_state'] == state


def test_generated_state_docs_are_current():
    # tools/states.py draws doc/source/_generated from the machine
    import importlib.util
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    spec = importlib.util.spec_from_file_location(
        'states_tool', os.path.join(root, 'tools', 'states.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    hint = 'stale: run "python tools/states.py" and commit the result'
    with open(os.path.join(tool.OUT, 'states.rst')) as f:
        assert f.read() == tool.table(), hint
    with open(os.path.join(tool.OUT, 'states.dot')) as f:
        assert f.read() == tool.dot(), hint
