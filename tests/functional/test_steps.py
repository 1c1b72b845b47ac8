"""Cleaning and deploy steps over HTTP against a real baremetal-server,
driven with python-ironicclient's CLI (``baremetal node clean
--clean-steps``, ``provide``, ``deploy``, ``abort``) and plain HTTP for
what the CLI has no command for.  The fake steps record every step start
in a log file (driver_info ``fake_step_log``), so the order the conductor
ran them in is read back from outside the server.

The server enables the vendor test distribution (tests/vendor_plugin,
registered through entry points) and priority overrides:
``bios.factory_reset`` at 99 ties with ``deploy.erase_devices_metadata``
(the deploy interface goes first) and ``raid.delete_configuration`` runs
at 30.
"""

import json

import pytest

from tests.functional import bmc_server as bs
from tests.functional import cli
from tests.functional import processes

CLEAN_ORDER = ['deploy.erase_devices_metadata', 'bios.factory_reset',
               'raid.delete_configuration', 'deploy.erase_devices']
DEPLOY_ORDER = ['deploy.deploy', 'deploy.write_image',
                'deploy.prepare_instance_boot', 'deploy.boot_instance']


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('steps')
    conf = processes.base_conf(tmp, conductor={
        'check_provision_state_interval': 1,
        'async_step_poll_interval': 1,
        'clean_callback_timeout': 3,
        'deploy_callback_timeout': 3,
        'clean_step_priority_override': ['bios.factory_reset:99',
                                         'raid.delete_configuration:30']})
    conf['DEFAULT']['enabled_hardware_types'] = [
        'fake-hardware', 'vendor-hardware']
    conf['DEFAULT']['enabled_deploy_interfaces'] = ['fake', 'vendor-deploy']
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bm(server):
    return cli.CLI(server.endpoint)


@pytest.fixture
def node(bm, tmp_path):
    """A manageable fake node logging its steps to a file."""
    log = tmp_path / 'steps.log'
    n = bm('node', 'create', '--driver', 'fake-hardware', '--driver-info',
           'fake_step_log=%s' % log, '-f', 'json')
    bm('node', 'manage', n['uuid'])
    bm.wait(n['uuid'], 'manageable')
    n['log'] = log
    return n


def ran(n, kind=None) -> list[str]:
    if not n['log'].exists():
        return []
    out = []
    for line in n['log'].read_text().splitlines():
        _, k, name = line.split()
        if kind is None or k == kind:
            out.append(name)
    return out


def steer(bm, n, **info):
    args = []
    for k, v in info.items():
        args += ['--driver-info', '%s=%s' % (k, json.dumps(v))]
    bm('node', 'set', n['uuid'], *args)


# ------------------------------------------------------------ cleaning
def test_automated_cleaning_order_with_overrides_and_tie_breaks(bm, node,
                                                                 server):
    _, steps = bs.http(server, 'GET', '/v1/nodes/%s/cleaning/steps'
                       '?min_priority=1' % node['uuid'])
    listed = ['%s.%s' % (s['interface'], s['step']) for s in steps['steps']]
    assert listed == CLEAN_ORDER
    _, all_steps = bs.http(server, 'GET', '/v1/nodes/%s/cleaning/steps'
                           % node['uuid'])
    assert 'management.update_firmware' in [
        '%s.%s' % (s['interface'], s['step']) for s in all_steps['steps']]
    _, high = bs.http(server, 'GET', '/v1/nodes/%s/cleaning/steps'
                      '?min_priority=50' % node['uuid'])
    assert [s['priority'] for s in high['steps']] == [99, 99]
    status, body = bs.http(server, 'GET', '/v1/nodes/%s/cleaning/steps'
                           '?min_priority=high' % node['uuid'])
    assert status == 400 and 'min_priority' in body['error_message']

    bm('node', 'provide', node['uuid'])
    got = bm.wait(node['uuid'], 'available')
    assert ran(node, 'clean') == CLEAN_ORDER
    assert got['clean_step'] == {}


def test_vendor_distribution_adds_clean_and_deploy_steps(bm, tmp_path):
    log = tmp_path / 'vendor.log'
    n = bm('node', 'create', '--driver', 'vendor-hardware',
           '--deploy-interface', 'vendor-deploy', '--driver-info',
           'fake_step_log=%s' % log, '-f', 'json')
    n['log'] = log
    bm('node', 'manage', n['uuid'])
    bm.wait(n['uuid'], 'manageable')
    bm('node', 'provide', n['uuid'])
    bm.wait(n['uuid'], 'available')
    assert ran(n, 'clean')[-1] == 'deploy.vendor_burn_in'  # priority 5
    bm('node', 'deploy', n['uuid'])
    bm.wait(n['uuid'], 'active')
    assert ran(n, 'deploy') == [
        'deploy.deploy', 'deploy.write_image', 'deploy.tune_vendor_firmware',
        'deploy.prepare_instance_boot', 'deploy.boot_instance']


def test_manual_cleaning_with_args(bm, node):
    bm('node', 'clean', node['uuid'], '--clean-steps', json.dumps([
        {'interface': 'management', 'step': 'update_firmware',
         'args': {'firmware_images': ['http://fw.example/bmc.bin']}},
        {'interface': 'raid', 'step': 'delete_configuration'}]))
    got = bm.wait(node['uuid'], 'manageable')
    assert ran(node, 'clean') == ['management.update_firmware',
                                  'raid.delete_configuration']
    assert got['driver_internal_info']['fake_firmware'] == [
        'http://fw.example/bmc.bin']


@pytest.mark.parametrize('steps,words', [
    ('not json', ['JSON']),  # refused by the client itself
    ('[{"interface": "deploy"}]', ['step']),
    ('[{"interface": "nope", "step": "x"}]', ['nope']),
    ('[{"interface": "deploy", "step": "no_such_step"}]',
     ['deploy.no_such_step', 'not supported']),
    ('[{"interface": "management", "step": "update_firmware"}]',
     ['missing', 'firmware_images']),
    ('[{"interface": "raid", "step": "delete_configuration", '
     '"args": {"force": true}}]', ['force']),
])
def test_bad_manual_cleaning_is_refused_node_untouched(bm, node, steps,
                                                       words):
    before = bm('node', 'show', node['uuid'], '-f', 'json')
    err = bm('node', 'clean', node['uuid'], '--clean-steps', steps,
             ok=False)
    for w in words:
        assert w in err, err
    after = bm('node', 'show', node['uuid'], '-f', 'json')
    assert after['provision_state'] == 'manageable'
    assert after['updated_at'] == before['updated_at']
    assert ran(node) == []


def test_manual_cleaning_only_from_manageable(bm, node):
    bm('node', 'provide', node['uuid'])
    bm.wait(node['uuid'], 'available')
    err = bm('node', 'clean', node['uuid'], '--clean-steps',
             '[{"interface": "raid", "step": "delete_configuration"}]',
             ok=False)
    assert 'available' in err


def test_failing_step_cleanfail_maintenance_power_untouched(bm, node):
    bm('node', 'power', 'on', node['uuid'])
    steer(bm, node, fake_fail_steps=['raid.delete_configuration'])
    bm('node', 'provide', node['uuid'])
    got = bm.wait_state(node['uuid'], 'clean failed')
    assert 'raid.delete_configuration' in got['last_error']
    assert got['maintenance'] and got['fault'] == 'clean failure'
    assert got['power_state'] == 'power on'
    # the steps after the failing one never ran
    assert ran(node, 'clean') == CLEAN_ORDER[:3]
    # the operator fixes it and cleans again
    steer(bm, node, fake_fail_steps=[])
    bm('node', 'maintenance', 'unset', node['uuid'])
    bm('node', 'manage', node['uuid'])
    bm.wait(node['uuid'], 'manageable')


def test_abort_an_abortable_step_but_not_another(bm, node):
    steer(bm, node, fake_async_steps=['deploy.erase_devices_metadata'])
    bm('node', 'provide', node['uuid'])
    bm.wait_state(node['uuid'], 'clean wait')
    err = bm('node', 'abort', node['uuid'], ok=False)
    assert 'not abortable' in err

    # the step never finishes: cleaning times out; then try again with
    # an abortable step
    bm.wait_state(node['uuid'], 'clean failed', timeout=30)
    steer(bm, node, fake_async_steps=['deploy.erase_devices'])
    bm('node', 'maintenance', 'unset', node['uuid'])
    bm('node', 'manage', node['uuid'])
    bm.wait(node['uuid'], 'manageable')
    bm('node', 'provide', node['uuid'])
    got = bm.wait_state(node['uuid'], 'clean wait')
    assert got['clean_step']['step'] == 'erase_devices'
    bm('node', 'abort', node['uuid'])
    got = bm.wait_state(node['uuid'], 'clean failed')
    assert 'aborted' in got['last_error']
    assert got['maintenance']


def test_clean_wait_times_out(bm, node):
    steer(bm, node, fake_async_steps=['bios.factory_reset'])
    bm('node', 'provide', node['uuid'])
    got = bm.wait_state(node['uuid'], 'clean failed', timeout=30)
    assert 'Timeout' in got['last_error']
    assert 'bios.factory_reset' in got['last_error']


# ------------------------------------------------------------ deploying
def _available(bm, node):
    bm('node', 'provide', node['uuid'])
    bm.wait(node['uuid'], 'available')


def test_default_deploy_order(bm, node):
    _available(bm, node)
    bm('node', 'deploy', node['uuid'])
    got = bm.wait(node['uuid'], 'active')
    assert ran(node, 'deploy') == DEPLOY_ORDER
    assert got['deploy_step'] == {}


def test_async_deploy_step_waits_then_completes(bm, node, server):
    _available(bm, node)
    steer(bm, node, fake_async_steps=['deploy.write_image'])
    bm('node', 'deploy', node['uuid'])
    got = bm.wait_state(node['uuid'], 'wait call-back')
    assert got['deploy_step']['step'] == 'write_image'
    assert ran(node, 'deploy') == DEPLOY_ORDER[:2]
    # the agent reports in (with the token its lookup got): the next
    # steps run; a heartbeat without the token changes nothing
    status, _ = bs.http(server, 'POST', '/v1/heartbeat/%s' % node['uuid'],
                        {'callback_url': 'http://127.0.0.1:9'},
                        version='1.62')
    assert status == 401
    assert bs.node(server, node['uuid'])['provision_state'] == \
        'wait call-back'
    status, found = bs.http(server, 'GET', '/v1/lookup?node_uuid=%s'
                            % node['uuid'], version='1.62')
    assert status == 200, found
    status, _ = bs.http(server, 'POST', '/v1/heartbeat/%s' % node['uuid'],
                        {'callback_url': 'http://127.0.0.1:9',
                         'agent_token': found['config']['agent_token']},
                        version='1.62')
    assert status == 202
    bm.wait(node['uuid'], 'active')
    assert ran(node, 'deploy') == DEPLOY_ORDER


def test_failing_and_timed_out_deploy_steps(bm, node, tmp_path):
    _available(bm, node)
    steer(bm, node, fake_fail_steps=['deploy.prepare_instance_boot'])
    bm('node', 'deploy', node['uuid'])
    got = bm.wait_state(node['uuid'], 'deploy failed')
    assert 'deploy.prepare_instance_boot' in got['last_error']
    assert ran(node, 'deploy') == DEPLOY_ORDER[:3]

    steer(bm, node, fake_fail_steps=[],
          fake_async_steps=['deploy.boot_instance'])
    bm('node', 'deploy', node['uuid'])
    got = bm.wait_state(node['uuid'], 'deploy failed', timeout=30)
    assert 'Timeout' in got['last_error']


def test_deploy_template_through_a_trait(bm, node):
    bm('deploy', 'template', 'create', 'CUSTOM_STEPS_TEST', '--steps',
       json.dumps([{'interface': 'bios', 'step': 'apply_configuration',
                    'priority': 90, 'args': {'settings': [
                        {'name': 'SMT', 'value': 'off'}]}}]))
    try:
        _available(bm, node)
        bm('node', 'add', 'trait', node['uuid'], 'CUSTOM_STEPS_TEST')
        # the template applies through the instance's traits (Nova's)
        bm('node', 'set', node['uuid'], '--instance-info',
           'traits=["CUSTOM_STEPS_TEST"]')
        bm('node', 'deploy', node['uuid'])
        got = bm.wait(node['uuid'], 'active')
        assert ran(node, 'deploy') == [
            'deploy.deploy', 'bios.apply_configuration',
            'deploy.write_image', 'deploy.prepare_instance_boot',
            'deploy.boot_instance']
        assert got['driver_internal_info']['fake_bios'] == {'SMT': 'off'}
    finally:
        bm('deploy', 'template', 'delete', 'CUSTOM_STEPS_TEST')


def test_deploy_step_field_is_version_gated(server, node):
    status, body = bs.http(server, 'GET', '/v1/nodes/%s' % node['uuid'],
                           version='1.43')
    assert status == 200 and 'deploy_step' not in body
    status, body = bs.http(server, 'GET', '/v1/nodes/%s' % node['uuid'],
                           version='1.44')
    assert body['deploy_step'] == {}
    status, _ = bs.http(server, 'GET', '/v1/nodes?fields=deploy_step',
                        version='1.43')
    assert status == 406
