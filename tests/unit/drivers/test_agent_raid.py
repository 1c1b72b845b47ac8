"""The ``agent`` RAID interface over HTTP: the target RAID configuration
checked as for software RAID, the agent's raid steps planned and run in
band at manual cleaning and servicing, what the agent built recorded as
raid_config; against the agent stand-in (tests/agent_double.py).  The
real agent builds the RAID on the VM in tests/vm/test_software_raid.py.
"""

import pytest

from baremetal.drivers import generic
from baremetal.drivers import ipmi
from baremetal.drivers import redfish

from tests import harness
from tests.unit.drivers import test_agent_deploy as agent_tests

RAID = '/v1/nodes/%s/states/raid'
RAID1_MAX = {'logical_disks': [
    {'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
     'is_root_volume': True}]}

agent = agent_tests.agent
api = agent_tests.api


def _raid_node(api, **fields):
    return agent_tests._agent_node(api, raid_interface='agent', **fields)


def _set_target(api, uuid, target, expect=204):
    status, body, _ = api.request('PUT', RAID % uuid, target,
                                  version='1.15')
    assert status == expect, (status, body)
    return body


def test_agent_is_an_enabled_raid_interface_of_the_hardware_types(api):
    status, body, _ = api.request('GET', '/v1/drivers/fake-hardware',
                                  version='1.30')
    assert status == 200, body
    assert 'agent' in body['enabled_raid_interfaces']
    for hw in (ipmi.IPMIHardware, redfish.RedfishHardware,
               generic.ManualManagementHardware):
        supported = hw().supported_raid_interfaces
        # not the default: as in Ironic, a node asks for it
        assert 'agent' in supported and supported[0] != 'agent', hw


@pytest.mark.parametrize('disks,message', [
    ([{'size_gb': 'MAX', 'raid_level': '0', 'controller': 'software'}],
     'Software RAID Configuration requires RAID-1 for the first logical '
     'disk'),
    ([{'size_gb': 10, 'raid_level': '1', 'controller': 'software'},
      {'size_gb': 'MAX', 'raid_level': '1', 'controller': 'hw-ctl'}],
     "requires all logical disks to have 'controller'='software'"),
    ([{'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software'},
      {'size_gb': 'MAX', 'raid_level': '0', 'controller': 'software'}],
     "Software RAID can have only one RAID device with size 'MAX'"),
    ([{'size_gb': 10, 'raid_level': '1', 'controller': 'software'},
      {'size_gb': 'MAX', 'raid_level': '5+0', 'controller': 'software'}],
     'Software RAID configuration does not support RAID level 5+0'),
    ([{'size_gb': 10, 'raid_level': '1', 'controller': 'software'}] * 3,
     'Software RAID configuration requires one or two logical disks'),
    ([{'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
       'physical_disks': ['sda', 'sdb']}],
     'must be a list of device hints (dictionaries)'),
    ([{'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
       'volume_name': 'root'},
      {'size_gb': 5, 'raid_level': '0', 'controller': 'software',
       'volume_name': 'root'}],
     'Duplicate software RAID device name root detected'),
    ([{'size_gb': 'MAX', 'raid_level': '7', 'controller': 'software'}],
     'RAID config validation error: '),
])
def test_a_software_raid_config_the_agent_would_refuse_is_a_400(
        api, disks, message):
    uuid = _raid_node(api)
    body = _set_target(api, uuid, {'logical_disks': disks}, expect=400)
    assert message in harness.error_message(body)
    assert api.node(uuid)['target_raid_config'] == {}


def test_software_raid_configs_the_agent_builds_are_accepted(api):
    uuid = _raid_node(api)
    for target in (RAID1_MAX, {'logical_disks': [
            {'size_gb': 20, 'raid_level': '1', 'controller': 'software',
             'physical_disks': [{'name': '/dev/vda'},
                                {'name': '/dev/vdb'}]},
            {'size_gb': 'MAX', 'raid_level': '1+0',
             'controller': 'software'}]},
            # a hardware RAID configuration is the hardware manager's
            {'logical_disks': [{'size_gb': 100, 'raid_level': '5'}]}):
        _set_target(api, uuid, target)
        assert api.node(uuid)['target_raid_config'] == target
    _set_target(api, uuid, {})
    assert api.node(uuid)['target_raid_config'] == {}


def test_manual_clean_runs_the_agents_raid_steps_and_records_the_raid(
        api, agent):
    uuid = _raid_node(api, properties={'capabilities': 'boot_mode:uefi'})
    target = {'logical_disks': [
        {'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
         'is_root_volume': True},
        {'size_gb': 2, 'raid_level': '0', 'controller': 'software'}]}
    _set_target(api, uuid, target)
    # what IPA's create_configuration answers: the configuration built
    agent.results['create_configuration'] = {'clean_result': target}
    agent.polls_until_done = 2
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'delete_configuration'},
        {'interface': 'raid', 'step': 'create_configuration',
         'args': {'create_nonroot_volumes': False}}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'manageable')
    assert node['last_error'] is None, node['last_error']
    assert agent.names() == [
        'clean.get_clean_steps',
        'clean.execute_clean_step:delete_configuration',
        'clean.execute_clean_step:create_configuration']
    create = agent.received[2]['params']
    assert create['step']['interface'] == 'raid'
    # the agent's step takes no arguments: the configuration it is sent
    # is the target less what they left out
    assert create['step']['args'] == {}
    assert create['node']['target_raid_config'] == {
        'logical_disks': target['logical_disks'][:1]}
    assert 'target_raid_config' not in create['node'][
        'driver_internal_info']
    delete = agent.received[1]['params']
    assert delete['node']['target_raid_config'] == target
    raid = node['raid_config']
    assert raid['logical_disks'] == target['logical_disks']
    assert raid['last_updated']
    assert 'raid_level:1' in node['properties']['capabilities']
    assert 'boot_mode:uefi' in node['properties']['capabilities']
    assert 'target_raid_config' not in node['driver_internal_info']
    # the raid steps are listed with the agent's others
    status, body, _ = api.request('GET', agent_tests.STEPS % uuid)
    listed = {(s['interface'], s['step']): s for s in body['steps']}
    create_step = listed[('raid', 'create_configuration')]
    assert create_step['priority'] == 0
    assert {a['name'] for a in create_step['args']} == {
        'create_root_volume', 'create_nonroot_volumes'}


def test_delete_configuration_empties_raid_config(api, agent):
    uuid = _raid_node(api, properties={'root_device': {'name': '/dev/md0'}})
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'delete_configuration'}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'manageable')
    assert node['last_error'] is None
    assert node['raid_config'] == {}
    assert 'root_device' not in node['properties']


def test_create_without_a_target_fails_cleaning_before_the_agent_runs_it(
        api, agent):
    uuid = _raid_node(api)
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'create_configuration'}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'has no target RAID configuration' in node['last_error']
    assert agent.names() == ['clean.get_clean_steps']


def test_an_agent_that_builds_nothing_fails_the_step(api, agent):
    uuid = _raid_node(api)
    _set_target(api, uuid, RAID1_MAX)
    agent.results['create_configuration'] = {'clean_result': {}}
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'create_configuration'}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert "didn't return a proper command result" in node['last_error']
    assert 'raid.create_configuration' in node['last_error']
    assert node['raid_config'] == {}


def test_a_raid_step_the_agent_fails_fails_cleaning(api, agent):
    uuid = _raid_node(api)
    _set_target(api, uuid, RAID1_MAX)
    agent.fail = {'clean.execute_clean_step'}
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'create_configuration'}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'raid.create_configuration' in node['last_error']
    assert 'the double was told to fail' in node['last_error']


def test_no_raid_interface_offers_no_agent_raid_step(api, agent):
    uuid = agent_tests._agent_node(api, raid_interface='no-raid')
    api.provision(uuid, 'clean', clean_steps=[
        {'interface': 'raid', 'step': 'delete_configuration'}])
    api.wait_for(uuid, 'clean wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'clean failed')
    assert 'raid.delete_configuration is not supported' in \
        node['last_error']


def test_servicing_runs_the_agents_raid_step(api, agent):
    uuid = agent_tests._active_agent_node(api, agent,
                                          raid_interface='agent')
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'service', 'service_steps': [
            {'interface': 'raid', 'step': 'delete_configuration'}]},
        version='1.87')
    assert status == 202, body
    api.wait_for(uuid, 'service wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None
    assert agent.names() == [
        'service.get_service_steps',
        'service.execute_service_step:delete_configuration']
    assert node['raid_config'] == {}


def _deploy_harness(tmp_path):
    """An in-process service whose direct deploys need no erase step and
    serve images on a port of their own."""
    return harness.Harness(tmp_path, overrides={
        'deploy.erase_devices_priority': 0,
        'deploy.http_server_port': 0})


def _raw_image_node(h, agent, **fields) -> str:
    """An available node (the agent double's) with a raw whole-disk
    image to deploy; its UUID."""
    from tests.unit.drivers import test_direct_deploy as direct
    return direct._available(
        h, agent, image_source='http://127.0.0.1:9/disk.raw',
        image_os_hash_algo='sha256', image_os_hash_value=direct.SHA,
        image_disk_format='raw', **fields)


def test_deploy_on_software_raid_has_the_agent_install_the_boot_loader(
        tmp_path, agent):
    """As in Ironic: the whole-disk image went onto the md device, which
    no firmware boots; the agent sets up the boot loader (in UEFI mode:
    ESPs on the holder disks) once the image is written."""
    h = _deploy_harness(tmp_path)
    try:
        uuid = _raw_image_node(h, agent)
        assert h.request('PATCH', '/v1/nodes/%s' % uuid, [
            {'op': 'add', 'path': '/raid_interface', 'value': 'agent'},
            {'op': 'add', 'path': '/properties/capabilities',
             'value': 'boot_mode:uefi'}])[0] == 200
        _set_target(h, uuid, RAID1_MAX)
        agent.polls_until_done = 2
        h.provision(uuid, 'active')
        h.wait_for(uuid, 'wait call-back')
        agent_tests._boot_agent(h, agent, uuid)
        node = h.wait_for(uuid, 'active')
        assert node['last_error'] is None
        assert agent.names() == ['standby.prepare_image',
                                 'image.install_bootloader', 'standby.sync']
        params = agent.received[1]['params']
        assert params == {'root_uuid': None, 'efi_system_part_uuid': None,
                          'prep_boot_part_uuid': None,
                          'target_boot_mode': 'uefi'}
        # no software RAID: the image's own boot loader boots, and in
        # UEFI mode the agent adds its NVRAM entry (set_efi_boot_entry),
        # once, not a second time for RAID
        _set_target(h, uuid, {})
        h.provision(uuid, 'rebuild')
        h.wait_for(uuid, 'wait call-back')
        agent.received.clear()
        agent_tests._boot_agent(h, agent, uuid)
        h.wait_for(uuid, 'active')
        assert agent.names() == ['standby.prepare_image',
                                 'image.install_bootloader', 'standby.sync']
    finally:
        h.close()


def _deploy_with_template(api, agent, template, end='active', **fields):
    """A ramdisk-deploy node whose instance asks for the trait of
    ``template``, deployed; the agent boots once, when deploy.deploy
    booted the ramdisk.  Returns the node once it rests in ``end``."""
    status, body, _ = api.request('POST', '/v1/deploy_templates', template,
                                  version='1.55')
    assert status == 201, body
    uuid = _raid_node(api, automated_clean=False, **fields)
    assert api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info/traits',
         'value': [template['name']]}])[0] == 200
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'available')
    api.provision(uuid, 'active')
    node = api.wait_for(uuid, 'wait call-back')
    assert node['deploy_step']['step'] == 'deploy', node['deploy_step']
    agent_tests._boot_agent(api, agent, uuid)
    return api.wait_for(uuid, end)


def _apply_template(name, config, priority=90, **args):
    return {'name': name, 'steps': [
        {'interface': 'raid', 'step': 'apply_configuration',
         'priority': priority, 'args': dict(raid_config=config, **args)}]}


def test_deploy_template_has_the_agent_apply_a_raid_config(api, agent):
    """raid.apply_configuration in a deploy template, between the
    ramdisk's boot (deploy.deploy, 100) and the image (80): the agent's
    own deploy step builds the configuration the template carries, and
    what it built becomes the node's raid_config."""
    built = {'logical_disks': [dict(RAID1_MAX['logical_disks'][0],
                                    root_device_hint={'name': '/dev/md0'})]}
    agent.results['apply_configuration'] = {'deploy_result': built}
    agent.polls_until_done = 2
    node = _deploy_with_template(
        api, agent, _apply_template('CUSTOM_SOFTWARE_RAID1', RAID1_MAX,
                                    delete_existing=False))
    assert node['provision_state'] == 'active', node['last_error']
    assert agent.names() == [
        'deploy.execute_deploy_step:apply_configuration']
    sent = agent.received[0]['params']
    assert sent['step'] == {
        'interface': 'raid', 'step': 'apply_configuration', 'priority': 90,
        'args': {'raid_config': RAID1_MAX, 'delete_existing': False},
        'abortable': False}
    # the agent's versions are not checked: it was not asked for its
    # steps this boot (IPA skips the check given None)
    assert sent['deploy_version'] is None
    assert node['raid_config']['logical_disks'] == built['logical_disks']
    assert node['properties']['root_device'] == {'name': '/dev/md0'}
    assert 'raid_level:1' in node['properties']['capabilities']


def test_deploy_template_agent_raid_step_before_the_ramdisk_fails(api,
                                                                  agent):
    """At priority 150 the step would run before deploy.deploy boots the
    agent: the deployment fails saying so, nothing is sent."""
    status, body, _ = api.request(
        'POST', '/v1/deploy_templates',
        _apply_template('CUSTOM_EARLY_RAID', RAID1_MAX, priority=150),
        version='1.55')
    assert status == 201, body
    uuid = _raid_node(api, automated_clean=False)
    api.request('PATCH', '/v1/nodes/%s' % uuid, [
        {'op': 'add', 'path': '/instance_info/traits',
         'value': ['CUSTOM_EARLY_RAID']}])
    api.provision(uuid, 'provide')
    api.wait_for(uuid, 'available')
    api.provision(uuid, 'active')
    node = api.wait_for(uuid, 'deploy failed')
    assert 'runs in the agent ramdisk, which is not up at priority 150' \
        in node['last_error'], node['last_error']
    assert node['raid_config'] == {}
    assert agent.received == []


def test_deploy_template_software_raid_the_agent_would_refuse(api, agent):
    node = _deploy_with_template(api, agent, _apply_template(
        'CUSTOM_BAD_RAID', {'logical_disks': [
            {'size_gb': 'MAX', 'raid_level': '0',
             'controller': 'software'}]}), end='deploy failed')
    assert 'Software RAID Configuration requires RAID-1 for the first ' \
        'logical disk' in node['last_error'], node['last_error']
    assert agent.received == []
    assert node['raid_config'] == {}


def test_deploy_template_software_raid_then_the_image_on_it(tmp_path,
                                                            agent):
    """The direct deploy: the template's apply_configuration (90) runs
    once the agent is up, before the image (80); what the agent built
    names the software controller, so the boot loader is installed on
    the RAID after the image, as when it was built at cleaning."""
    h = _deploy_harness(tmp_path)
    try:
        uuid = _raw_image_node(h, agent, traits=['CUSTOM_SOFTWARE_RAID1'])
        status, body, _ = h.request(
            'POST', '/v1/deploy_templates',
            _apply_template('CUSTOM_SOFTWARE_RAID1', RAID1_MAX),
            version='1.55')
        assert status == 201, body
        assert h.request('PATCH', '/v1/nodes/%s' % uuid, [
            {'op': 'add', 'path': '/raid_interface', 'value': 'agent'},
            {'op': 'add', 'path': '/properties/capabilities',
             'value': 'boot_mode:uefi'}])[0] == 200
        agent.results['apply_configuration'] = {'deploy_result': RAID1_MAX}
        h.provision(uuid, 'active')
        h.wait_for(uuid, 'wait call-back')
        agent_tests._boot_agent(h, agent, uuid)
        node = h.wait_for(uuid, 'active')
        assert node['last_error'] is None, node['last_error']
        assert agent.names() == [
            'deploy.execute_deploy_step:apply_configuration',
            'standby.prepare_image', 'image.install_bootloader',
            'standby.sync']
        assert node['raid_config']['logical_disks'] == \
            RAID1_MAX['logical_disks']
    finally:
        h.close()


def test_servicing_with_the_agents_apply_configuration_records_it(api,
                                                                  agent):
    """IPA offers apply_configuration as a service step too: what it
    built becomes raid_config, as for create_configuration."""
    uuid = agent_tests._active_agent_node(api, agent,
                                          raid_interface='agent')
    agent.service_steps.append(
        {'step': 'apply_configuration', 'priority': 0, 'interface': 'raid',
         'reboot_requested': False, 'argsinfo': {
             'raid_config': {'description': 'x', 'required': True},
             'delete_existing': {'description': 'y', 'required': False}}})
    agent.results['apply_configuration'] = {'service_result': RAID1_MAX}
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/states/provision' % uuid,
        {'target': 'service', 'service_steps': [
            {'interface': 'raid', 'step': 'apply_configuration',
             'args': {'raid_config': RAID1_MAX}}]}, version='1.87')
    assert status == 202, body
    api.wait_for(uuid, 'service wait')
    agent_tests._boot_agent(api, agent, uuid)
    node = api.wait_for(uuid, 'active')
    assert node['last_error'] is None, node['last_error']
    assert agent.names() == [
        'service.get_service_steps',
        'service.execute_service_step:apply_configuration']
    assert agent.received[1]['params']['step']['args'] == {
        'raid_config': RAID1_MAX}
    assert node['raid_config']['logical_disks'] == \
        RAID1_MAX['logical_disks']
