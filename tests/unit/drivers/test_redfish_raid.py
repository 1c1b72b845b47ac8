"""The redfish RAID interface: which volumes it asks the BMC for, how it
waits for a BMC's tasks or reset, what it records, what it refuses."""

import contextlib
import types

import pytest

from baremetal.common import exception
from baremetal.common import states
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import raid

GIB = 1 << 30
BASE = '/redfish/v1/Systems/1/Storage/C1'


class _Monitor:
    def __init__(self, uri):
        self.task_monitor_uri = uri


class _Volume:
    def __init__(self, ident, name, raid_type, size, drives, storage):
        self.identity, self.name = ident, name
        self.capacity_bytes = size
        self.path = '%s/Volumes/%s' % (BASE, ident)
        self.storage = storage
        self.json = {'RAIDType': raid_type, 'Links': {'Drives': [
            {'@odata.id': '%s/Drives/%s' % (BASE, d)} for d in drives]}}

    def delete(self, apply_time=None):
        self.storage.deleted.append((self.identity, apply_time))
        self.storage.vols.remove(self)
        return _Monitor('/tm/del') if self.storage.tasks else None


class _Volumes:
    def __init__(self, storage):
        self.storage = storage
        self.posted = []

    def get_members(self):
        return list(self.storage.vols)

    def create(self, payload, apply_time=None):
        self.posted.append((payload, apply_time))
        if self.storage.tasks:
            return _Monitor('/tm/%d' % len(self.posted))
        drives = [p['@odata.id'].rsplit('/', 1)[-1]
                  for p in payload['Links']['Drives']]
        vol = _Volume(str(len(self.storage.vols) + 10), payload['Name'],
                      payload['RAIDType'],
                      payload.get('CapacityBytes', 999 * GIB), drives,
                      self.storage)
        self.storage.vols.append(vol)
        return vol


class _Storage:
    identity = 'C1'

    def __init__(self, sizes, tasks=False):
        self.drives = [types.SimpleNamespace(
            identity='D%d' % i, capacity_bytes=s * GIB, media_type='HDD',
            protocol=types.SimpleNamespace(value='SAS'),
            path='%s/Drives/D%d' % (BASE, i)) for i, s in enumerate(sizes)]
        self.vols, self.deleted, self.tasks = [], [], tasks
        self.json = {'Volumes': {}}
        self.volumes = _Volumes(self)


@pytest.fixture
def bmc(monkeypatch):
    storage = _Storage([100, 100, 50, 100, 200])
    system = types.SimpleNamespace(storage=types.SimpleNamespace(
        get_members=lambda: [storage]))
    monkeypatch.setattr(client, 'get_system', lambda node, conf: system)
    monkeypatch.setattr(client, 'call',
                        lambda node, conf, what: contextlib.nullcontext())
    monkeypatch.setattr(client, 'is_task_monitor',
                        lambda obj: isinstance(obj, _Monitor))
    monkeypatch.setattr(client, 'on_reset_apply_time',
                        lambda collection: None)
    return storage


def _task(target, state=states.CLEANING):
    node = types.SimpleNamespace(
        uuid='abcdef12-0000', target_raid_config=target, raid_config={},
        properties={'cpus': 2}, driver_internal_info={},
        provision_state=state, power_state=states.POWER_OFF)
    return types.SimpleNamespace(node=node,
                                 conductor=types.SimpleNamespace(conf=None))


def test_create_posts_volumes_and_records_them(bmc):
    task = _task({'logical_disks': [
        {'size_gb': 'MAX', 'raid_level': '0', 'controller': 'C1',
         'physical_disks': ['D4', 'D0'], 'volume_name': 'data'},
        {'size_gb': 80, 'raid_level': '1', 'is_root_volume': True}]})
    assert raid.RedfishRAID().create_configuration(task) is None
    payloads = [p for p, _ in bmc.volumes.posted]
    # the logical disk naming its drives goes first and keeps them
    assert payloads == [
        {'RAIDType': 'RAID0', 'Name': 'data', 'Links': {'Drives': [
            {'@odata.id': BASE + '/Drives/D4'},
            {'@odata.id': BASE + '/Drives/D0'}]}},
        {'RAIDType': 'RAID1', 'Name': 'abcdef12-ld1',
         'CapacityBytes': 80 * GIB, 'Links': {'Drives': [
             # the smallest free drives that hold 80 GiB (D2 is 50)
             {'@odata.id': BASE + '/Drives/D1'},
             {'@odata.id': BASE + '/Drives/D3'}]}}]
    disks = task.node.raid_config['logical_disks']
    assert [(d['name'], d['raid_level'], d['size_gb'], d['physical_disks'],
             d.get('is_root_volume')) for d in disks] == [
        ('data', '0', 999, ['D0', 'D4'], None),
        ('abcdef12-ld1', '1', 80, ['D1', 'D3'], True)]
    assert task.node.properties == {'cpus': 2, 'local_gb': 80}


def test_create_skips_root_or_others_as_asked(bmc):
    target = {'logical_disks': [
        {'size_gb': 10, 'raid_level': '0', 'is_root_volume': True},
        {'size_gb': 10, 'raid_level': '0'}]}
    raid.RedfishRAID().create_configuration(_task(target),
                                            create_root_volume=False)
    assert [p['Name'] for p, _ in bmc.volumes.posted] == ['abcdef12-ld1']
    with pytest.raises(exception.MissingParameterValue,
                       match='empty target RAID configuration after '
                             'skipping root volume and skipping non-root'):
        raid.RedfishRAID().create_configuration(
            _task(target), create_root_volume=False,
            create_nonroot_volumes=False)


def test_tasks_are_polled_to_completion(bmc, monkeypatch):
    bmc.tasks = True
    task = _task({'logical_disks': [{'size_gb': 10, 'raid_level': '0'}]},
                 state=states.DEPLOYING)
    iface = raid.RedfishRAID()
    assert iface.create_configuration(task) == states.DEPLOYWAIT
    outcomes = {'/tm/1': [None, '']}
    monkeypatch.setattr(client, 'task_outcome',
                        lambda node, conf, uri: outcomes[uri].pop(0))
    assert iface.poll_step(task, {'step': 'create_configuration'}) is False
    bmc.vols.append(_Volume('7', 'abcdef12-ld0', 'RAID0', 10 * GIB, ['D2'],
                            bmc))
    assert iface.poll_step(task, {'step': 'create_configuration'}) is True
    assert raid._PENDING not in task.node.driver_internal_info
    assert task.node.raid_config['logical_disks'][0]['id'] == '7'


def test_a_failed_task_fails_the_step(bmc, monkeypatch):
    bmc.tasks = True
    task = _task({'logical_disks': [{'size_gb': 10, 'raid_level': '0'}]})
    iface = raid.RedfishRAID()
    assert iface.create_configuration(task) == states.CLEANWAIT
    monkeypatch.setattr(client, 'task_outcome',
                        lambda node, conf, uri: 'controller on fire')
    with pytest.raises(exception.RedfishError,
                       match='controller on fire'):
        iface.poll_step(task, {'step': 'create_configuration'})
    assert task.node.raid_config == {}


def test_on_reset_bmc_gets_the_node_rebooted(bmc, monkeypatch):
    monkeypatch.setattr(client, 'on_reset_apply_time',
                        lambda collection: 'OnReset')
    restarted = []
    bmc.vols.append(_Volume('3', 'old', 'RAID5', GIB, ['D0'], bmc))
    bmc.vols.append(_Volume('4', 'raw', None, GIB, [], bmc))
    task = _task({})

    def power_action(new_state):
        # the conductor's power action (task.power_action) reboots
        restarted.append(new_state)
        task.node.power_state = states.POWER_ON
    task.power_action = power_action
    assert raid.RedfishRAID().delete_configuration(task) is None
    assert bmc.deleted == [('3', 'OnReset')]
    assert restarted == [states.REBOOT]
    assert task.node.power_state == states.POWER_ON
    assert task.node.raid_config['logical_disks'] == []


@pytest.mark.parametrize('disk, message', [
    ({'size_gb': 10, 'raid_level': '2'},
     'RAID level 2 is not supported by the driver'),
    ({'size_gb': 10, 'raid_level': '0', 'controller': 'C9'},
     'has no RAID controller C9'),
    ({'size_gb': 10, 'raid_level': '1', 'controller': 'C1',
      'physical_disks': ['D0', 'D9']}, 'has no drive(s) D9'),
    ({'size_gb': 10, 'raid_level': '5', 'controller': 'C1',
      'physical_disks': ['D0', 'D1']},
     'RAID level 5 needs at least 3 physical disks'),
    ({'size_gb': 10, 'raid_level': '1', 'number_of_physical_disks': 3},
     'RAID level 1 cannot be built of 3 physical disks'),
    ({'size_gb': 150, 'raid_level': '1'},
     'no controller the BMC reports has 2 free physical disks'),
    ({'size_gb': 10, 'raid_level': '0', 'disk_type': 'ssd'},
     'no controller the BMC reports has 1 free physical disks'),
    ({'size_gb': '10', 'raid_level': '0'}, 'RAID config validation error'),
])
def test_refused_before_the_bmc_is_asked(bmc, disk, message):
    with pytest.raises(exception.InvalidParameterValue) as e:
        raid.RedfishRAID().create_configuration(
            _task({'logical_disks': [disk]}))
    assert message in str(e.value)
    assert bmc.volumes.posted == []


def test_no_target_is_missing(bmc):
    with pytest.raises(exception.InvalidParameterValue):
        raid.RedfishRAID().create_configuration(_task({}))


def test_apply_configuration_is_a_deploy_step_taking_the_config():
    steps = {s['step']: s for s in raid.RedfishRAID().get_deploy_steps(None)}
    apply = steps['apply_configuration']
    assert apply['priority'] == 0
    assert apply['argsinfo']['raid_config']['required'] is True
    assert {'create_root_volume', 'create_nonroot_volumes',
            'delete_existing'} <= set(apply['argsinfo'])
    assert steps['delete_configuration']['priority'] == 0
    assert 'apply_configuration' not in {
        s['step'] for s in raid.RedfishRAID().get_clean_steps(None)}


def test_apply_configuration_builds_it_and_makes_it_the_target(bmc):
    bmc.vols.append(_Volume('3', 'old', 'RAID0', 10 * GIB, ['D4'], bmc))
    task = _task({'logical_disks': [{'size_gb': 5, 'raid_level': '0'}]},
                 state=states.DEPLOYING)
    config = {'logical_disks': [
        {'size_gb': 80, 'raid_level': '1', 'is_root_volume': True}]}
    step = {'interface': 'raid', 'step': 'apply_configuration',
            'args': {'raid_config': config, 'delete_existing': True}}
    assert raid.RedfishRAID().execute_deploy_step(task, step) is None
    assert bmc.deleted == [('3', None)]
    assert [p['Name'] for p, _ in bmc.volumes.posted] == ['abcdef12-ld0']
    assert task.node.target_raid_config == config
    assert [(d['raid_level'], d['size_gb'], d.get('is_root_volume'))
            for d in task.node.raid_config['logical_disks']] == \
        [('1', 80, True)]
    assert task.node.properties['local_gb'] == 80


@pytest.mark.parametrize('config, message', [
    ({'logical_disks': [{'size_gb': 10, 'raid_level': '2'}]},
     'RAID level 2 is not supported by the driver'),
    ({'disks': []}, 'RAID config validation error'),
    ('RAID1', 'RAID config validation error'),
    # the drives cannot hold it: found while planning
    ({'logical_disks': [{'size_gb': 150, 'raid_level': '1'}]},
     'no controller the BMC reports has 2 free physical disks'),
])
def test_apply_configuration_refused_keeps_the_target(bmc, config,
                                                      message):
    before = {'logical_disks': [{'size_gb': 5, 'raid_level': '0'}]}
    task = _task(before, state=states.DEPLOYING)
    with pytest.raises(exception.InvalidParameterValue, match=message):
        raid.RedfishRAID().apply_configuration(task, config)
    assert task.node.target_raid_config is before
    assert bmc.volumes.posted == [] and bmc.deleted == []


def test_root_volume_by_name_else_by_its_drives():
    disks = [{'name': 'other', 'physical_disks': ['D0', 'D1']},
             {'name': 'Virtual Disk 1', 'physical_disks': ['D2', 'D3']}]
    asked = {'name': 'abc-ld0', 'drives': ['D2', 'D3']}
    # a BMC that named the volume its own way: the drives asked for
    assert raid._roots('n', disks, [asked]) == [disks[1]]
    # the name asked for wins
    assert raid._roots('n', disks, [dict(asked, name='other')]) == \
        [disks[0]]
    # a step pending from an earlier version: names only
    assert raid._roots('n', disks, ['other']) == [disks[0]]
    assert raid._roots('n', disks, ['abc-ld0']) == []
    # two volumes on the drives asked for: none is taken for the root
    shared = disks + [{'name': 'x', 'physical_disks': ['D2', 'D3']}]
    assert raid._roots('n', shared, [asked]) == []
