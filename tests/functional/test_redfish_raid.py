"""The redfish RAID interface over the REST API: target RAID config,
manual cleaning with raid.delete_configuration and
raid.create_configuration, raid.apply_configuration in a deploy template,
the node's raid_config, against the sushy-tools emulator (its Storage and
Drives) with the test RAID volumes (tests/bmc/redfish_volumes.py),
answering at once or through tasks."""

import uuid

import pytest

from tests import agent_double
from tests.bmc import fixtures
from tests.functional import bmc_server as bs

GIB = 1 << 30
NO_RAMDISK = '1.70'
CONTROLLER = 'RAID.Integrated.1-1'


def _system(name, **extra):
    drives = [{'Id': 'Disk.%d' % i, 'CapacityBytes': 100 * GIB,
               'Protocol': 'SAS'} for i in range(4)]
    drives += [{'Id': 'Disk.%d' % i, 'CapacityBytes': 200 * GIB,
                'Protocol': 'SATA'} for i in (4, 5)]
    return dict({'uuid': str(uuid.uuid4()), 'name': name,
                 'power_state': 'Off', 'external_notifier': False,
                 'storage': [{'Id': CONTROLLER, 'drives': drives}]}, **extra)


SYNC = _system('raid-sync')
TASKS = _system('raid-tasks', raid_tasks=True)
ON_RESET = _system('raid-on-reset', raid_on_reset=True)
BAD = _system('raid-bad')
DEPLOY = _system('raid-deploy', raid_tasks=True)
DEPLOY_BAD = _system('raid-deploy-bad')
TARGET = {'logical_disks': [
    {'size_gb': 50, 'raid_level': '1', 'is_root_volume': True},
    {'size_gb': 'MAX', 'raid_level': '0', 'controller': CONTROLLER,
     'physical_disks': ['Disk.4', 'Disk.5'], 'volume_name': 'data'}]}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = bs.start(tmp_path_factory.mktemp('redfish-raid'))
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'),
                            [SYNC, TASKS, ON_RESET, BAD,
                             DEPLOY, DEPLOY_BAD])
    yield b
    b.stop()


def _volumes(bmc, system):
    path = '/redfish/v1/Systems/%s/Storage/%s/Volumes' % (system['uuid'],
                                                          CONTROLLER)
    return [bmc.get(m['@odata.id'])
            for m in bmc.get(path)['Members']]


def _clean(server, node, *steps):
    """Manual cleaning with those raid steps; the node at its end."""
    status, body = bs.http(
        server, 'PUT', '/v1/nodes/%s/states/provision' % node,
        {'target': 'clean', 'disable_ramdisk': True, 'clean_steps': [
            {'interface': 'raid', 'step': s} for s in steps]},
        version=NO_RAMDISK)
    assert status == 202, body

    def done(n):
        return n['provision_state'] in ('manageable', 'clean failed') \
            and not n['reservation']
    return bs.wait(server, node, done, timeout=90, what='end of cleaning')


def _node(server, bmc, system):
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(system['uuid']))
    assert node['raid_interface'] == 'redfish'
    bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node['uuid'],
            {'target': 'manage'})
    bs.wait_provision(server, node['uuid'], 'manageable')
    return node['uuid']


def test_logical_disk_properties(server):
    status, props = bs.http(
        server, 'GET', '/v1/drivers/redfish/raid/logical_disk_properties',
        version='1.12')
    assert status == 200, props
    assert {'size_gb', 'raid_level', 'physical_disks', 'controller',
            'is_root_volume'} <= set(props)


@pytest.mark.parametrize('system', [SYNC, TASKS, ON_RESET],
                         ids=['sync', 'tasks', 'on-reset'])
def test_clean_builds_the_target_raid_config(server, bmc, system):
    node = _node(server, bmc, system)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           TARGET, version='1.12')
    assert status == 204, body

    got = _clean(server, node, 'delete_configuration',
                 'create_configuration')
    assert got['provision_state'] == 'manageable', got['last_error']
    # a BMC answering with tasks: the step waits until they are done (as
    # the change feed tells: a wait can be shorter than a poll of the
    # node's state)
    waited = bs.steps_waited_in(server, node, 'clean wait', 'clean_step')
    assert bool(waited) == bool(
        system.get('raid_tasks') or system.get('raid_on_reset')), waited
    if system.get('raid_on_reset'):
        # the controller built the volumes while the machine restarted
        assert bmc.system(system['uuid'])['PowerState'] == 'On'
    disks = {d['name']: d for d in got['raid_config']['logical_disks']}
    root = disks.pop('%s-ld0' % node[:8])
    assert (root['raid_level'], root['size_gb'], root['controller'],
            root['is_root_volume']) == ('1', 50, CONTROLLER, True)
    # the smallest free drives of the controller
    assert root['physical_disks'] == ['Disk.0', 'Disk.1']
    data = disks.pop('data')
    assert (data['raid_level'], data['size_gb'], data['physical_disks']) \
        == ('0', 400, ['Disk.4', 'Disk.5'])
    assert 'is_root_volume' not in data and not disks
    assert got['raid_config']['last_updated']
    assert got['properties']['local_gb'] == 50
    # what the BMC holds
    on_bmc = sorted((v['Name'], v['RAIDType'], v['CapacityBytes'])
                    for v in _volumes(bmc, system))
    assert on_bmc == sorted([('%s-ld0' % node[:8], 'RAID1', 50 * GIB),
                             ('data', 'RAID0', 400 * GIB)])

    got = _clean(server, node, 'delete_configuration')
    assert got['provision_state'] == 'manageable', got['last_error']
    assert got['raid_config']['logical_disks'] == []
    assert _volumes(bmc, system) == []


@pytest.mark.parametrize('target, message', [
    ({'logical_disks': [{'size_gb': 10, 'raid_level': 'JBOD'}]},
     'RAID level JBOD is not supported by the driver'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'interface_type': 'scsi'}]},
     'interface type `scsi` not supported by Redfish RAID'),
    ({'logical_disks': [{'size_gb': 'MAX', 'raid_level': '0'}]},
     "'physical_disks' is missing from logical_disk while "
     "'size_gb'='MAX' was requested"),
    ({'logical_disks': [{'size_gb': 900, 'raid_level': '5'}]},
     'no controller the BMC reports has 3 free physical disks'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '1',
                         'controller': 'RAID.Other'}]},
     'has no RAID controller RAID.Other'),
])
def test_a_config_redfish_cannot_build_fails_the_step_untouched(
        server, bmc, target, message):
    node = _node(server, bmc, BAD)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           target, version='1.12')
    assert status == 204, body
    got = _clean(server, node, 'create_configuration')
    assert got['provision_state'] == 'clean failed'
    assert message in got['last_error'], got['last_error']
    assert _volumes(bmc, BAD) == []
    assert not got['raid_config']


@pytest.mark.parametrize('target, message', [
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'is_root_volume': True},
                        {'size_gb': 10, 'raid_level': '0',
                         'is_root_volume': True}]},
     'Raid config cannot have more than one root volume. 2 root volumes '
     'were specified'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '0',
                         'wheels': 4}]},
     'RAID config validation error: Additional properties are not '
     'allowed'),
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '1',
                         'physical_disks': ['Disk.0', 'Disk.1']}]},
     "RAID config validation error: 'controller' is a dependency of "
     "'physical_disks'"),
])
def test_a_target_breaking_the_schema_is_refused(server, bmc, target,
                                                 message):
    node = _node(server, bmc, BAD)
    status, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/raid' % node,
                           target, version='1.12')
    assert status == 400, body
    assert message in body['error_message']
    _, got = bs.http(server, 'GET', '/v1/nodes/%s' % node, version='1.12')
    assert got['target_raid_config'] == {}


def _deploy_with_template(server, bmc, system, template, agent=None,
                          **fields):
    """Deploy a ramdisk-deploy node whose instance asks for the trait of
    ``template`` (a deploy template); a stand-in (``agent``, or a new
    one) answers for the agent once the ramdisk is booted.  Returns
    (node, the (state, step) pairs seen, the node at the end)."""
    status, body = bs.http(server, 'POST', '/v1/deploy_templates',
                           template)
    assert status == 201, body
    trait = template['name']
    node = bs.create(server, driver='redfish', deploy_interface='ramdisk',
                     driver_info=bmc.driver_info(system['uuid']),
                     # API 1.47; the BMC is under test, not the agent
                     automated_clean=False, **fields)['uuid']
    bs.http(server, 'PUT', '/v1/nodes/%s/traits' % node,
            {'traits': [trait]})
    # what Nova passes from the flavor's required traits
    bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'add', 'path': '/instance_info/traits', 'value': [trait]}])
    for verb, state in (('manage', 'manageable'), ('provide', 'available')):
        bs.http(server, 'PUT', '/v1/nodes/%s/states/provision' % node,
                {'target': verb})
        bs.wait_provision(server, node, state)
    status, body = bs.http(server, 'PUT',
                           '/v1/nodes/%s/states/provision' % node,
                           {'target': 'active'})
    assert status == 202, body
    seen: set = set()

    def step_of(n):
        seen.add((n['provision_state'], (n['deploy_step'] or {}).get(
            'step')))
        return n['provision_state'] == 'deploy failed' or (
            n['provision_state'] == 'wait call-back'
            and (n['deploy_step'] or {}).get('step') == 'deploy')
    got = bs.wait(server, node, step_of, timeout=60,
                  what='the RAID step and the ramdisk boot')
    if got['provision_state'] == 'deploy failed':
        return node, seen, got
    agent = agent or agent_double.AgentDouble()
    try:
        bs.agent_checks_in(server, node, agent)
        got = bs.wait(server, node, lambda n: n['provision_state'] in (
            'active', 'deploy failed'), timeout=60,
            what='end of deployment')
    finally:
        agent.stop()
    return node, seen, got


def test_deploy_template_applies_a_raid_config(server, bmc):
    """raid.apply_configuration in a deploy template, before the ramdisk
    boots (priority 150 > deploy.deploy's 100): the BMC builds the
    volumes (through tasks: the node waits in wait call-back), the
    configuration becomes the node's target, what was built its
    raid_config."""
    config = {'logical_disks': [
        {'size_gb': 50, 'raid_level': '1', 'is_root_volume': True,
         'volume_name': 'root'},
        {'size_gb': 'MAX', 'raid_level': '0', 'controller': CONTROLLER,
         'physical_disks': ['Disk.4', 'Disk.5'], 'volume_name': 'scratch'}]}
    node, seen, got = _deploy_with_template(server, bmc, DEPLOY, {
        'name': 'CUSTOM_RAID1_ROOT', 'steps': [
            {'interface': 'raid', 'step': 'apply_configuration',
             'priority': 150,
             'args': {'raid_config': config, 'delete_existing': True}}]})
    assert got['provision_state'] == 'active', got['last_error']
    # from the change feed (the wait can be shorter than a poll)
    assert 'apply_configuration' in bs.steps_waited_in(server, node), seen
    assert got['target_raid_config'] == config
    disks = {d['name']: d for d in got['raid_config']['logical_disks']}
    assert (disks['root']['raid_level'], disks['root']['size_gb'],
            disks['root']['is_root_volume'],
            disks['root']['physical_disks']) == \
        ('1', 50, True, ['Disk.0', 'Disk.1'])
    assert (disks['scratch']['raid_level'], disks['scratch']['size_gb']) \
        == ('0', 400)
    assert got['properties']['local_gb'] == 50
    on_bmc = sorted((v['Name'], v['RAIDType'], v['CapacityBytes'])
                    for v in _volumes(bmc, DEPLOY))
    assert on_bmc == [('root', 'RAID1', 50 * GIB),
                      ('scratch', 'RAID0', 400 * GIB)]

    # the deploy steps the node ran, as the API lists them afterwards
    status, body = bs.http(server, 'GET', '/v1/deploy_templates/'
                           'CUSTOM_RAID1_ROOT', version='1.55')
    assert status == 200 and body['steps'][0]['args']['raid_config'] == \
        config


def test_deploy_template_raid_config_the_bmc_cannot_build(server, bmc):
    """A RAID 5 of three 400 GiB disks' worth: no controller holds it;
    the deployment fails on the step, nothing is built, the node's
    target RAID configuration is the one it had."""
    node, seen, got = _deploy_with_template(server, bmc, DEPLOY_BAD, {
        'name': 'CUSTOM_RAID5_HUGE', 'steps': [
            {'interface': 'raid', 'step': 'apply_configuration',
             'priority': 150, 'args': {'raid_config': {'logical_disks': [
                 {'size_gb': 900, 'raid_level': '5'}]}}}]})
    assert got['provision_state'] == 'deploy failed'
    assert 'no controller the BMC reports has 3 free physical disks' in \
        got['last_error'], got['last_error']
    assert got['deploy_step']['step'] == 'apply_configuration'
    assert got['target_raid_config'] == {}
    assert not got['raid_config']
    assert _volumes(bmc, DEPLOY_BAD) == []


def test_deploy_template_raid_step_without_its_config_is_refused(server,
                                                                 bmc):
    """raid_config is a required argument: the deployment does not
    start its steps."""
    node, seen, got = _deploy_with_template(server, bmc, DEPLOY_BAD, {
        'name': 'CUSTOM_RAID_NOCONFIG', 'steps': [
            {'interface': 'raid', 'step': 'apply_configuration',
             'priority': 150, 'args': {'delete_existing': True}}]})
    assert got['provision_state'] == 'deploy failed'
    assert 'missing required argument(s) raid_config' in \
        got['last_error'], got['last_error']
    assert _volumes(bmc, DEPLOY_BAD) == []


def test_deploy_template_has_the_agent_raid_interface_build_it(server, bmc):
    """raid_interface agent: the template's raid.apply_configuration
    (priority 90, once deploy.deploy has booted the ramdisk) is the
    agent's deploy step (deploy.execute_deploy_step); what the agent
    reports built becomes raid_config.  The BMC is sushy-tools, the agent
    a stand-in (tests/vm/test_software_raid.py runs the real one at
    cleaning)."""
    config = {'logical_disks': [
        {'size_gb': 'MAX', 'raid_level': '1', 'controller': 'software',
         'is_root_volume': True}]}
    agent = agent_double.AgentDouble()
    agent.results['apply_configuration'] = {'deploy_result': config}
    node, seen, got = _deploy_with_template(server, bmc, DEPLOY_BAD, {
        'name': 'CUSTOM_SOFTWARE_RAID1', 'steps': [
            {'interface': 'raid', 'step': 'apply_configuration',
             'priority': 90, 'args': {'raid_config': config}}]},
        agent=agent, raid_interface='agent')
    assert got['provision_state'] == 'active', got['last_error']
    assert agent.names() == [
        'deploy.execute_deploy_step:apply_configuration']
    step = agent.received[0]['params']['step']
    assert step['args'] == {'raid_config': config, 'delete_existing': True}
    assert got['raid_config']['logical_disks'] == config['logical_disks']
    assert 'raid_level:1' in got['properties']['capabilities']
    # out of band, nothing was asked of the BMC's storage
    assert _volumes(bmc, DEPLOY_BAD) == []
