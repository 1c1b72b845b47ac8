"""The step timings kept in driver_internal_info: a record per kind of
work, begun and ended by the node's transitions, a step entry per
step the runner starts."""

from baremetal.common import states
from baremetal.common import step_timings as st

STEP_A = {'interface': 'deploy', 'step': 'erase_devices_metadata'}
STEP_B = {'interface': 'bios', 'step': 'factory_reset'}


def test_entering_a_kind_begins_a_record_and_drops_an_old_plan():
    info = {'deploy_steps': [STEP_A], 'deploy_step_index': 0}
    st.on_transition(info, states.DEPLOYFAIL, states.DEPLOYING, 'deploy')
    assert 'deploy_steps' not in info
    assert 'deploy_step_index' not in info
    rec = st.records(info)['deploy']
    assert rec['outcome'] == 'running'
    assert rec['end'] is None and rec['steps'] == []


def test_moves_within_a_kind_keep_the_record():
    info = {}
    st.on_transition(info, states.MANAGEABLE, states.CLEANING, 'clean')
    rec = st.records(info)['clean']
    st.step_started(info, 'clean', 0, STEP_A)
    info['clean_steps'] = [STEP_A]
    st.on_transition(info, states.CLEANING, states.CLEANWAIT, 'wait')
    st.on_transition(info, states.CLEANWAIT, states.CLEANING, 'resume')
    assert st.records(info)['clean'] is rec
    assert info['clean_steps'] == [STEP_A]


def test_steps_end_done_and_the_record_ends_with_the_kind():
    info = {}
    st.on_transition(info, states.AVAILABLE, states.DEPLOYING, 'deploy')
    st.step_started(info, 'deploy', 0, STEP_A)
    st.step_finished(info, 'deploy')
    st.step_started(info, 'deploy', 1, STEP_B)
    st.step_finished(info, 'deploy')
    st.on_transition(info, states.DEPLOYING, states.ACTIVE, 'done')
    rec = st.records(info)['deploy']
    assert rec['outcome'] == 'done'
    assert rec['end'] >= rec['start']
    assert [(e['index'], e['step'], e['outcome']) for e in rec['steps']] \
        == [(0, 'erase_devices_metadata', 'done'),
            (1, 'factory_reset', 'done')]
    assert all(e['end'] >= e['start'] for e in rec['steps'])


def test_failure_and_abort_end_the_running_step_with_the_record():
    info = {}
    st.on_transition(info, states.MANAGEABLE, states.CLEANING, 'clean')
    st.step_started(info, 'clean', 0, STEP_A)
    st.on_transition(info, states.CLEANING, states.CLEANFAIL, 'fail')
    assert st.records(info)['clean']['outcome'] == 'failed'
    assert st.records(info)['clean']['steps'][0]['outcome'] == 'failed'
    st.on_transition(info, states.CLEANFAIL, states.MANAGEABLE, 'manage')
    st.on_transition(info, states.MANAGEABLE, states.CLEANING, 'clean')
    st.step_started(info, 'clean', 0, STEP_A)
    st.on_transition(info, states.CLEANING, states.CLEANWAIT, 'wait')
    st.on_transition(info, states.CLEANWAIT, states.CLEANFAIL, 'abort')
    rec = st.records(info)['clean']
    assert rec['outcome'] == 'aborted'
    assert [e['outcome'] for e in rec['steps']] == ['aborted']


def test_a_step_started_again_was_interrupted_a_held_one_done():
    info = {}
    st.on_transition(info, states.MANAGEABLE, states.CLEANING, 'clean')
    st.step_started(info, 'clean', 0, STEP_A)
    st.step_started(info, 'clean', 0, STEP_A)       # taken over
    st.step_started(info, 'clean', 1, {'interface': 'power',
                                       'step': 'hold'})
    st.step_started(info, 'clean', 2, STEP_B)       # after unhold
    assert [e['outcome'] for e in st.records(info)['clean']['steps']] == [
        'interrupted', 'done', 'done', 'running']


def test_kinds_are_kept_apart_and_a_record_stays_bounded():
    info = {}
    st.on_transition(info, states.AVAILABLE, states.DEPLOYING, 'deploy')
    st.on_transition(info, states.DEPLOYING, states.ACTIVE, 'done')
    st.on_transition(info, states.ACTIVE, states.SERVICING, 'service')
    for i in range(st.MAX_STEPS + 5):
        st.step_started(info, 'service', i, STEP_A)
    steps = st.records(info)['service']['steps']
    assert len(steps) == st.MAX_STEPS
    assert steps[-1]['index'] == st.MAX_STEPS + 4
    assert set(st.records(info)) == {'deploy', 'service'}
    assert st.records(info)['deploy']['outcome'] == 'done'


def test_unrelated_transitions_and_bad_data_are_left_alone():
    info = {st.KEY: 'garbage'}
    st.on_transition(info, states.ENROLL, states.VERIFYING, 'manage')
    assert info == {st.KEY: 'garbage'}
    assert st.records(info) == {}
    st.step_finished(info, 'clean')
    st.finish(info, 'clean', 'done')
    assert info == {st.KEY: 'garbage'}
