"""Automated and manual cleaning, driven over the API."""

import pytest

from baremetal.conductor import steps as steps_mod
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests import harness

STEPS = '/v1/nodes/%s/cleaning/steps'


def _manageable(api, **fields):
    n = api.create_node(**fields)
    api.provision(n['uuid'], 'manage')
    return api.wait_for(n['uuid'], 'manageable')


def _clean_order(api, uuid):
    """The automated plan recorded while cleaning waits on the first
    step (made async)."""
    api.provision(uuid, 'provide')
    n = api.wait_for(uuid, 'clean wait')
    return [(s['interface'], s['step'], s['priority']) for s in
            n['driver_internal_info']['clean_steps']]


def test_automated_cleaning_runs_enabled_steps_highest_first(api):
    n = _manageable(api, driver_info={
        'fake_async_steps': ['deploy.erase_devices_metadata']})
    assert _clean_order(api, n['uuid']) == [
        ('deploy', 'erase_devices_metadata', 99),
        ('deploy', 'erase_devices', 10)]
    node = api.node(n['uuid'])
    assert node['clean_step']['step'] == 'erase_devices_metadata'
    status, _, _ = api.heartbeat(n['uuid'])
    assert status == 202
    node = api.wait_for(n['uuid'], 'available')
    assert node['clean_step'] == {}
    assert 'clean_steps' not in node['driver_internal_info']


@pytest.fixture
def overridden(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'deploy.erase_devices_priority': 0,
        'conductor.clean_step_priority_override': [
            'raid.delete_configuration:99', 'bios.factory_reset:99',
            'management.update_firmware:0']})
    yield h
    h.close()


def test_overrides_and_tie_breaks(overridden):
    api = overridden
    n = _manageable(api, driver_info={
        'fake_async_steps': ['bios.factory_reset']})
    # ties at 99: deploy before bios before raid; erase_devices disabled
    assert _clean_order(api, n['uuid']) == [
        ('deploy', 'erase_devices_metadata', 99),
        ('bios', 'factory_reset', 99),
        ('raid', 'delete_configuration', 99)]


def test_steps_listing_with_min_priority(overridden):
    api = overridden
    n = api.create_node()
    status, body, _ = api.request('GET', STEPS % n['uuid'])
    assert status == 200
    steps = body['steps']
    prios = [s['priority'] for s in steps]
    assert prios == sorted(prios, reverse=True)
    by_name = {(s['interface'], s['step']): s for s in steps}
    assert by_name[('deploy', 'erase_devices')]['priority'] == 0
    assert by_name[('deploy', 'erase_devices')]['abortable'] is True
    fw = by_name[('management', 'update_firmware')]
    assert fw['args'] == [{'name': 'firmware_images', 'required': True,
                           'description': 'List of image URLs to apply'}]
    status, body, _ = api.request('GET', STEPS % n['uuid'] +
                                  '?min_priority=50')
    assert {(s['interface'], s['step']) for s in body['steps']} == {
        ('deploy', 'erase_devices_metadata'), ('bios', 'factory_reset'),
        ('raid', 'delete_configuration')}


def test_steps_listing_not_ready_is_202_with_retry_header(api):
    n = api.create_node(driver_info={'fake_steps_unknown': True})
    status, body, headers = api.request('GET', STEPS % n['uuid'])
    assert status == 202
    assert headers['Retry-Request-After'] == '-1'
    assert 'not known yet' in body['message']


def _provide_and_log(h, tmp_path, own):
    """Provide a manageable node whose automated_clean is ``own`` (None:
    unset); the clean steps that ran, from the fake's step log."""
    log = tmp_path / ('steps-%s.log' % own)
    log.touch()
    fields = {} if own is None else {'automated_clean': own}
    n = _manageable(h, driver_info={'fake_step_log': str(log)}, **fields)
    assert n['automated_clean'] is own
    h.provision(n['uuid'], 'provide')
    node = h.wait_for(n['uuid'], 'available')
    assert node['last_error'] is None
    ran = [line.split()[2] for line in log.read_text().splitlines()
           if line.split()[1] == 'clean']
    if not ran:
        # nothing was planned either
        assert node['clean_step'] == {}
        assert 'clean_steps' not in node['driver_internal_info']
    return ran


ERASE_STEPS = ['deploy.erase_devices_metadata', 'deploy.erase_devices']


@pytest.mark.parametrize('option', [True, False])
def test_node_automated_clean_wins_over_the_option(tmp_path, option):
    """As Ironic: the node's true cleans and its false does not, whatever
    [conductor]automated_clean says; unset, the option decides."""
    h = harness.Harness(tmp_path, overrides={
        'conductor.automated_clean': option})
    try:
        assert _provide_and_log(h, tmp_path, False) == []
        assert _provide_and_log(h, tmp_path, True) == ERASE_STEPS
        assert _provide_and_log(h, tmp_path, None) == (
            ERASE_STEPS if option else [])
    finally:
        h.close()


def test_node_automated_clean_false_skips_cleaning_after_tear_down(
        tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'conductor.automated_clean': True})
    try:
        log = tmp_path / 'steps.log'
        log.touch()
        n = h.make_available(automated_clean=False,
                             driver_info={'fake_step_log': str(log)})
        h.provision(n['uuid'], 'active')
        h.wait_for(n['uuid'], 'active')
        h.provision(n['uuid'], 'deleted')
        h.wait_for(n['uuid'], 'available')
        assert not [line for line in log.read_text().splitlines()
                    if line.split()[1] == 'clean']
    finally:
        h.close()


def test_patching_automated_clean_to_null_hands_it_back_to_the_option(
        tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'conductor.automated_clean': True})
    try:
        log = tmp_path / 'steps.log'
        log.touch()
        n = _manageable(h, automated_clean=False,
                        driver_info={'fake_step_log': str(log)})
        for op in ({'op': 'replace', 'path': '/automated_clean',
                    'value': None},
                   {'op': 'remove', 'path': '/automated_clean'}):
            status, body, _ = h.request('PATCH', '/v1/nodes/%s'
                                        % n['uuid'], [
                {'op': 'replace', 'path': '/automated_clean',
                 'value': False}])
            assert status == 200 and body['automated_clean'] is False
            status, body, _ = h.request('PATCH', '/v1/nodes/%s'
                                        % n['uuid'], [op])
            assert status == 200, body
            assert body['automated_clean'] is None
            assert h.node(n['uuid'])['automated_clean'] is None
        h.provision(n['uuid'], 'provide')
        h.wait_for(n['uuid'], 'available')
        assert [line.split()[2] for line in log.read_text().splitlines()
                ] == ERASE_STEPS
    finally:
        h.close()


def test_automated_cleaning_plans_its_steps_once(api, monkeypatch):
    """The plan of an automated cleaning that boots nothing is made once
    (after preparing), not once before and again after."""
    made = []
    real = steps_mod.driver_steps

    def counted(task, kind, known_only=False):
        if kind == 'clean' and not known_only:
            made.append(task.node.uuid)
        return real(task, kind, known_only)

    n = _manageable(api)
    monkeypatch.setattr(steps_mod, 'driver_steps', counted)
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'available')
    assert made == [n['uuid']]


def test_failing_step_cleanfail_maintenance_power_untouched(api):
    n = _manageable(api, driver_info={
        'fake_fail_steps': ['deploy.erase_devices']})
    status, _, _ = api.request('PUT', '/v1/nodes/%s/states/power'
                               % n['uuid'], {'target': 'power on'})
    assert status == 202
    api.wait_for(n['uuid'], 'manageable')
    assert api.node(n['uuid'])['power_state'] == 'power on'
    api.provision(n['uuid'], 'provide')
    node = api.wait_for(n['uuid'], 'clean failed')
    assert 'deploy.erase_devices' in node['last_error']
    assert node['maintenance'] is True
    assert 'deploy.erase_devices' in node['maintenance_reason']
    assert node['clean_step']['step'] == 'erase_devices'
    assert node['power_state'] == 'power on'
    # power is allowed in clean failed; manage brings it back
    status, _, _ = api.request('PUT', '/v1/nodes/%s/states/power'
                               % n['uuid'], {'target': 'power off'})
    assert status == 202
    api.wait_for(n['uuid'], 'clean failed')
    assert api.node(n['uuid'])['power_state'] == 'power off'
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')


def test_power_refused_while_cleaning(api):
    n = _manageable(api, driver_info={
        'fake_async_steps': ['deploy.erase_devices_metadata']})
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    status, body, _ = api.request('PUT', '/v1/nodes/%s/states/power'
                                  % n['uuid'], {'target': 'power on'})
    assert status == 409
    assert 'clean wait' in harness.error_message(body)


def test_manual_cleaning_runs_given_steps_in_order(api):
    n = _manageable(api)
    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': [{'name': 'A', 'value': '1'}]}},
             {'interface': 'management', 'step': 'update_firmware',
              'args': {'firmware_images': ['http://x/fw.bin']}}]
    api.provision(n['uuid'], 'clean', clean_steps=steps)
    node = api.wait_for(n['uuid'], 'manageable')
    info = node['driver_internal_info']
    assert info['fake_bios'] == {'A': '1'}
    assert info['fake_firmware'] == ['http://x/fw.bin']
    assert node['last_error'] is None


@pytest.mark.parametrize('steps', [
    'not-a-list', [], [1], [{'step': 'x'}],
    [{'interface': 'nope', 'step': 'x'}],
    [{'interface': 'deploy'}], [{'interface': 'deploy', 'step': 1}],
    [{'interface': 'deploy', 'step': 'x', 'args': []}],
    [{'interface': 'deploy', 'step': 'x', 'extra': 1}],
])
def test_malformed_manual_steps_are_400_node_untouched(api, steps):
    n = _manageable(api)
    before = api.node(n['uuid'])
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
        {'target': 'clean', 'clean_steps': steps})
    assert status == 400, body
    assert api.node(n['uuid']) == before


@pytest.mark.parametrize('step,words', [
    ({'interface': 'deploy', 'step': 'no_such_step'},
     ['deploy.no_such_step', 'not supported']),
    ({'interface': 'management', 'step': 'update_firmware'},
     ['management.update_firmware', 'missing', 'firmware_images']),
    ({'interface': 'management', 'step': 'update_firmware',
      'args': {'firmware_images': [], 'colour': 'red'}},
     ['management.update_firmware', 'colour']),
])
def test_bad_manual_steps_are_400_before_any_step(api, step, words):
    """Unknown steps and bad arguments are refused by the request itself
    (Ironic accepts them and fails cleaning later); the node stays as it
    was."""
    n = _manageable(api)
    before = api.node(n['uuid'])
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
        {'target': 'clean', 'clean_steps': [
            {'interface': 'bios', 'step': 'factory_reset'}, step]})
    assert status == 400, body
    for w in words:
        assert w in body['error_message']
    assert api.node(n['uuid']) == before


def test_manual_clean_needs_1_15_and_manageable(api):
    n = _manageable(api)
    body = {'target': 'clean', 'clean_steps': [
        {'interface': 'deploy', 'step': 'erase_devices'}]}
    status, _, _ = api.request('PUT', '/v1/nodes/%s/states/provision'
                               % n['uuid'], body, version='1.14')
    assert status == 406
    m = api.make_available()
    status, _, _ = api.request('PUT', '/v1/nodes/%s/states/provision'
                               % m['uuid'], body)
    assert status == 400


def test_abort_abortable_step(api):
    n = _manageable(api, driver_info={
        'fake_async_steps': ['deploy.erase_devices']})
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    api.provision(n['uuid'], 'abort')
    node = api.wait_for(n['uuid'], 'clean failed')
    assert 'aborted' in node['last_error']
    assert 'deploy.erase_devices' in node['last_error']


def test_abort_non_abortable_step_is_refused(api):
    n = _manageable(api, driver_info={
        'fake_async_steps': ['deploy.erase_devices_metadata']})
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
        {'target': 'abort'})
    assert status == 409
    assert 'not abortable' in harness.error_message(body)
    assert api.node(n['uuid'])['provision_state'] == 'clean wait'


def test_clean_wait_timeout(tmp_path):
    from baremetal.conductor import periodics
    h = harness.Harness(tmp_path, overrides={
        'conductor.clean_callback_timeout': 1})
    try:
        n = _manageable(h, driver_info={
            'fake_async_steps': ['deploy.erase_devices_metadata']})
        h.provision(n['uuid'], 'provide')
        h.wait_for(n['uuid'], 'clean wait')
        import time
        time.sleep(1.1)
        assert periodics.check_timeouts(h.conductor) == 1
        node = h.wait_for(n['uuid'], 'clean failed')
        assert 'Timeout' in node['last_error']
        assert 'erase_devices_metadata' in node['last_error']
    finally:
        h.close()


def test_async_step_finished_by_driver_poll(api):
    from baremetal.conductor import periodics
    n = _manageable(api, driver_info={
        'fake_async_steps': ['deploy.erase_devices_metadata']})
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'clean wait')
    periodics.poll_async_steps(api.conductor)
    assert api.node(n['uuid'])['provision_state'] == 'clean wait'
    # the hardware finishes (the API refuses a PATCH in clean wait)
    row = db_nodes.get_node(n['uuid'])
    db_rows.update(db_nodes.NODES, row['id'], {'driver_info': dict(
        row['driver_info'],
        fake_async_done=['deploy.erase_devices_metadata'])})
    periodics.poll_async_steps(api.conductor)
    api.wait_for(n['uuid'], 'available')
