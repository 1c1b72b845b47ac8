"""Deployment as deploy steps, driven over the API."""

import time

import pytest

from baremetal.common import exception
from baremetal.conductor import periodics
from baremetal.conductor import task_manager
from baremetal.conductor import deployments
from baremetal.conductor import steps as steps_mod
from baremetal.db import models
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits
from tests import harness

TEMPLATE_STEPS = models.TABLES['deploy_template_steps']
TEMPLATES = models.TABLES['deploy_templates']
DEFAULT_PLAN = [('deploy', 'deploy', 100), ('deploy', 'write_image', 80),
                ('deploy', 'prepare_instance_boot', 60),
                ('deploy', 'boot_instance', 20)]


def _plan(node):
    return [(s['interface'], s['step'], s['priority'])
            for s in node['driver_internal_info']['deploy_steps']]


def test_default_deploy_steps_in_order_with_async_step(api):
    n = api.make_available(driver_info={
        'fake_async_steps': ['deploy.write_image']})
    api.provision(n['uuid'], 'active')
    node = api.wait_for(n['uuid'], 'wait call-back')
    assert _plan(node) == DEFAULT_PLAN
    assert node['deploy_step']['step'] == 'write_image'
    assert node['driver_internal_info']['deploy_step_index'] == 1
    assert node['power_state'] != 'power on'
    status, _, _ = api.heartbeat(n['uuid'])
    assert status == 202
    node = api.wait_for(n['uuid'], 'active')
    assert node['deploy_step'] == {}
    assert node['power_state'] == 'power on'
    assert 'deploy_steps' not in node['driver_internal_info']


def test_failing_deploy_step(api):
    n = api.make_available(driver_info={
        'fake_fail_steps': ['deploy.prepare_instance_boot']})
    api.provision(n['uuid'], 'active')
    node = api.wait_for(n['uuid'], 'deploy failed')
    assert 'deploy.prepare_instance_boot' in node['last_error']
    assert node['deploy_step']['step'] == 'prepare_instance_boot'
    assert node['target_provision_state'] == 'active'
    # fix the node and deploy again
    api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'remove', 'path': '/driver_info/fake_fail_steps'}])
    api.provision(n['uuid'], 'active')
    assert api.wait_for(n['uuid'], 'active')['last_error'] is None


def test_priority_override_reorders_and_disables(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'conductor.deploy_step_priority_override': [
            'deploy.write_image:0', 'bios.factory_reset:90']})
    try:
        n = h.make_available(driver_info={
            'fake_async_steps': ['deploy.boot_instance']})
        h.provision(n['uuid'], 'active')
        node = h.wait_for(n['uuid'], 'wait call-back')
        assert _plan(node) == [
            ('deploy', 'deploy', 100), ('bios', 'factory_reset', 90),
            ('deploy', 'prepare_instance_boot', 60),
            ('deploy', 'boot_instance', 20)]
    finally:
        h.close()


def test_deploy_wait_timeout(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'conductor.deploy_callback_timeout': 1})
    try:
        n = h.make_available(driver_info={
            'fake_async_steps': ['deploy.deploy']})
        h.provision(n['uuid'], 'active')
        h.wait_for(n['uuid'], 'wait call-back')
        time.sleep(1.1)
        assert periodics.check_timeouts(h.conductor) == 1
        node = h.wait_for(n['uuid'], 'deploy failed')
        assert 'Timeout' in node['last_error']
        assert 'deploy.deploy' in node['last_error']
    finally:
        h.close()


def test_deleted_from_deploy_wait_tears_down_and_cleans(api):
    n = api.make_available(driver_info={
        'fake_async_steps': ['deploy.deploy']})
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'wait call-back')
    api.provision(n['uuid'], 'deleted')
    node = api.wait_for(n['uuid'], 'available')
    assert node['deploy_step'] == {}
    assert node['instance_info'] == {}


def test_rebuild_runs_the_steps_again_without_cleaning(api):
    n = api.make_available()
    api.provision(n['uuid'], 'active')
    api.wait_for(n['uuid'], 'active')
    # any cleaning would now fail; rebuild must not clean
    api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/driver_info/fake_fail_steps',
         'value': ['deploy.erase_devices_metadata']},
        {'op': 'add', 'path': '/driver_info/fake_async_steps',
         'value': ['deploy.boot_instance']}])
    api.provision(n['uuid'], 'rebuild')
    node = api.wait_for(n['uuid'], 'wait call-back')
    assert _plan(node) == DEFAULT_PLAN
    assert node['driver_internal_info'].get('clean_steps') is None


def test_deploy_step_field_is_gated_at_1_44(api):
    n = api.create_node()
    _, body, _ = api.request('GET', '/v1/nodes/%s' % n['uuid'],
                             version='1.43')
    assert 'deploy_step' not in body
    _, body, _ = api.request('GET', '/v1/nodes/%s' % n['uuid'],
                             version='1.44')
    assert body['deploy_step'] == {}
    status, _, _ = api.request('GET', '/v1/nodes?fields=deploy_step',
                               version='1.43')
    assert status == 406


def _add_template(name, steps):
    t = db_rows.create(TEMPLATES, {'name': name, 'extra': {}})
    for s in steps:
        db_rows.create(TEMPLATE_STEPS,
                       dict(s, deploy_template_id=t['id']))


def test_deploy_template_applied_through_the_instance_traits(api):
    """As Ironic: the templates named in instance_info['traits'] (what
    Nova passes from the flavor) run; a trait on the node alone does
    not."""
    _add_template('CUSTOM_HYPERTHREADING_ON', [
        {'interface': 'bios', 'step': 'apply_configuration', 'priority': 90,
         'args': {'settings': [{'name': 'HT', 'value': 'on'}]}}])
    n = api.make_available()
    api.request('PUT', '/v1/nodes/%s/traits' % n['uuid'],
                {'traits': ['CUSTOM_HYPERTHREADING_ON']})
    api.provision(n['uuid'], 'active')
    node = api.wait_for(n['uuid'], 'active')
    assert 'fake_bios' not in node['driver_internal_info']
    api.provision(n['uuid'], 'deleted')
    api.wait_for(n['uuid'], 'available')
    api.request('PATCH', '/v1/nodes/%s' % n['uuid'], [
        {'op': 'add', 'path': '/instance_info/traits',
         'value': ['CUSTOM_HYPERTHREADING_ON']}])
    api.provision(n['uuid'], 'active')
    node = api.wait_for(n['uuid'], 'active')
    assert node['driver_internal_info']['fake_bios'] == {'HT': 'on'}


def test_user_deploy_steps_merge_and_validate(api):
    """User deploy steps (API 1.69, validated by the conductor)."""
    n = api.make_available()
    with task_manager.acquire(api.conductor, n['uuid']) as task:
        user = steps_mod.resolve_requested(task, 'deploy', [
            {'interface': 'bios', 'step': 'apply_configuration',
             'priority': 70, 'args': {'settings': []}},
            {'interface': 'deploy', 'step': 'write_image',
             'priority': 0, 'args': {}}])
        plan = steps_mod.merge_deploy_steps(task, user)
        assert [(s['interface'], s['step']) for s in plan] == [
            ('deploy', 'deploy'), ('bios', 'apply_configuration'),
            ('deploy', 'prepare_instance_boot'), ('deploy', 'boot_instance')]
        with pytest.raises(exception.InvalidStepArgs, match='settings'):
            steps_mod.resolve_requested(task, 'deploy', [
                {'interface': 'bios', 'step': 'apply_configuration',
                 'priority': 70}])
        with pytest.raises(exception.InvalidStepArgs, match='not supported'):
            steps_mod.resolve_requested(task, 'deploy', [
                {'interface': 'deploy', 'step': 'nope', 'priority': 1}])


def test_user_deploy_steps_are_refused_below_1_69(api):
    n = api.make_available()
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
        {'target': 'active', 'deploy_steps': [
            {'interface': 'deploy', 'step': 'deploy', 'priority': 1}]})
    assert status == 406
    assert api.node(n['uuid'])['provision_state'] == 'available'


def test_template_steps_read_from_the_instance_traits(api):
    _add_template('CUSTOM_X', [{'interface': 'raid',
                                'step': 'delete_configuration',
                                'priority': 50, 'args': {}}])
    n = api.create_node(instance_info={'traits': ['CUSTOM_X', 'CUSTOM_Y']})
    db_traits.set_node_traits(db_nodes.get_node(n['uuid'])['id'], ['CUSTOM_Z'])
    with task_manager.acquire(api.conductor, n['uuid'],
                              shared=True) as task:
        assert deployments.template_steps(task) == [
            {'interface': 'raid', 'step': 'delete_configuration',
             'args': {}, 'priority': 50}]


def test_a_large_config_drive_is_kept_on_every_database(any_db_api):
    """A config drive of 160 KB (Nova's with a large user_data) is kept in
    instance_info until the deploy writes it: on MariaDB, whose TEXT
    holds 64 KB, the deployment failed before migration 0012."""
    import base64
    import os
    api = any_db_api
    n = api.make_available()
    drive = base64.b64encode(os.urandom(120000)).decode()
    api.provision(n['uuid'], 'active', configdrive=drive)
    node = api.wait_for(n['uuid'], 'active')
    assert node['last_error'] is None
    assert db_nodes.get_node(n['uuid'])['instance_info']['configdrive'] \
        == drive
