"""Loading enabled plugins; the step priority conflict rule, also for
out-of-tree interfaces (tests/vendor_plugin, installed via entry
points)."""

import pytest

from baremetal.common import exception
from baremetal.drivers import base
from baremetal.drivers import registry
from tests import harness

VENDOR = {
    'enabled_hardware_types': ['fake-hardware', 'vendor-hardware'],
    'enabled_deploy_interfaces': ['fake', 'vendor-deploy'],
}


@pytest.fixture
def conf():
    harness.configure()
    yield harness.CONF
    harness.CONF.reset()


def _set(conf, values):
    for k, v in values.items():
        group = None
        if '.' in k:
            group, k = k.split('.')
        conf.set_override(k, v, group=group)


def test_conflicting_out_of_tree_interface_is_refused(conf):
    _set(conf, {'enabled_management_interfaces': ['fake',
                                                  'vendor-conflict']})
    with pytest.raises(exception.StepConflict) as e:
        registry.Registry(conf)
    msg = str(e.value)
    for word in ('management', 'vendor-conflict', 'clear_job_queue',
                 'reset_idrac', '42'):
        assert word in msg


def test_override_resolves_the_conflict(conf):
    _set(conf, {'enabled_management_interfaces': ['fake', 'noop',
                                                  'vendor-conflict'],
                'conductor.clean_step_priority_override': [
                    'management.clear_job_queue:41']})
    reg = registry.Registry(conf)
    prios = reg.interfaces['management']['vendor-conflict'].step_priorities
    assert prios['clean']['clear_job_queue'] == 41
    assert prios['clean']['reset_idrac'] == 42


def test_override_can_create_a_conflict(conf):
    _set(conf, {'conductor.deploy_step_priority_override': [
        'deploy.write_image:100']})
    with pytest.raises(exception.StepConflict, match='deploy.write_image'):
        registry.Registry(conf)


def test_priority_zero_never_conflicts(conf):
    _set(conf, {'conductor.clean_step_priority_override': [
        'deploy.erase_devices:0', 'deploy.erase_devices_metadata:0']})
    registry.Registry(conf)


def test_malformed_override_is_a_config_error(conf):
    _set(conf, {'conductor.clean_step_priority_override': ['nonsense']})
    with pytest.raises(exception.ConfigInvalid, match='nonsense'):
        registry.Registry(conf)


def test_missing_enabled_plugin_names_it_and_the_option(conf):
    _set(conf, {'enabled_raid_interfaces': ['no-raid', 'megaraid-x']})
    with pytest.raises(exception.DriverLoadError) as e:
        registry.Registry(conf)
    assert 'megaraid-x' in str(e.value)
    assert 'enabled_raid_interfaces' in str(e.value)


def test_vendor_hardware_type_and_steps_load(conf):
    _set(conf, VENDOR)
    reg = registry.Registry(conf)
    assert reg.default_interface('vendor-hardware', 'deploy') == \
        'vendor-deploy'
    steps = reg.interfaces['deploy']['vendor-deploy'].get_deploy_steps(None)
    assert {'tune_vendor_firmware': 70}.items() <= {
        s['step']: s['priority'] for s in steps}.items()


def test_decorators_check_their_arguments():
    with pytest.raises(ValueError):
        base.clean_step(priority=-1)
    with pytest.raises(ValueError):
        base.clean_step(priority=1, abortable='yes')
    with pytest.raises(ValueError):
        base.deploy_step(priority=1, argsinfo={'x': 'not a dict'})
    with pytest.raises(ValueError):
        base.deploy_step(priority=1, argsinfo={'x': {'required': True}})


def test_vendor_deploy_step_runs_in_a_deployment(tmp_path):
    h = harness.Harness(tmp_path, overrides=VENDOR)
    try:
        n = h.make_available(driver='vendor-hardware')
        assert n['deploy_interface'] == 'vendor-deploy'
        assert n['driver_internal_info']['vendor_burn_in'] == 1
        h.provision(n['uuid'], 'active')
        node = h.wait_for(n['uuid'], 'active')
        assert node['driver_internal_info']['vendor_tuned'] == 'fast'
    finally:
        h.close()
