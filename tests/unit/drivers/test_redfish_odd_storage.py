"""A BMC whose RAID resources answer what no Redfish service should: the
Storage collection, the controller, a drive, the Volumes collection, a
volume or the task of a volume's creation that is not JSON, not an
object, or has odd fields (ids that are numbers or 100 KB, sizes that
are words, negative or beyond 64 bits, RAID types no one knows, links
that are no links, task states and messages of every shape), from the
fleet's Redfish double (tools/fleet_doubles.py: a system's
``odd_storages``, ``odd_storage``, ``odd_drive``, ``odd_volumes``,
``odd_volume`` and ``odd_task``).

Each node is driven through the API as an operator would: a target RAID
configuration, verification, manual cleaning with
``raid.delete_configuration`` and ``raid.create_configuration`` (no
ramdisk), and, where it got back to ``manageable``, inspection (which
reads the volumes' sizes).  As for odd Systems
(test_redfish_odd_systems): every request is answered, no work ends in
an unexpected exception, no node is left locked or in a transient state,
and a failure's last error names the BMC, quoting what it sent only in
part.  Each odd answer also has the outcome it must have: where what the
BMC sent cannot be read, the step fails naming the resource; what it
sends that is merely unusual (a volume's odd name, a task with no
messages) is taken as it is."""



from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
GIB = 1 << 30
NO_RAMDISK = '1.70'
TARGET = {'logical_disks': [
    {'size_gb': 50, 'raid_level': '1', 'is_root_volume': True}]}
_set, _drop, _text = odd_systems._set, odd_systems._drop, odd_systems._text

# the service as the odd Systems' sweep has it (the redfish RAID and
# inspect interfaces enabled)
api = odd_systems.api


class Odd:
    """What one of a system's RAID resources answers (``key``: the
    fleet double's), whether the BMC works through tasks, and the
    outcome: ``None`` for a RAID volume built and inspected, else a
    text the node's last error holds."""

    def __init__(self, key, odd, outcome=None, tasks=False) -> None:
        self.key, self.odd, self.outcome = key, odd, outcome
        self.tasks = tasks


def Storages(odd, outcome=None):
    return Odd('odd_storages', odd, outcome)


def Storage(odd, outcome=None):
    return Odd('odd_storage', odd, outcome)


def Drive(odd, outcome=None):
    return Odd('odd_drive', odd, outcome)


def Volumes(odd, outcome=None):
    return Odd('odd_volumes', odd, outcome)


def Volume(odd, outcome=None):
    return Odd('odd_volume', odd, outcome)


def Task(odd, outcome=None):
    return Odd('odd_task', odd, outcome, tasks=True)


NOT_REDFISH = 'answered with JSON that is not a Redfish resource'
# built, but the BMC reports it as no RAID volume: not in raid_config
UNLISTED = 'unlisted'
NO_ID = 'that is no Redfish identifier'
NOT_JSON = 'answered with something that is not JSON'
READ = 'read the storage'
CAPACITY = rb'"CapacityBytes": [0-9]+'
ODD = {
    'as-sent': Odd(None, None),
    'as-sent-tasks': Odd(None, None, tasks=True),
    'storages-not-json': Storages(lambda doc: b'<html>', NOT_JSON),
    'storages-a-list': Storages(lambda doc: b'[]', NOT_REDFISH),
    'storages-members-string': Storages(_set(('Members',), 'RAID.1'),
                                        READ),
    'storages-member-number': Storages(_set(('Members',),
                                            [{'@odata.id': 5}]), READ),
    'storages-none': Storages(_set(('Members',), []),
                              'has no RAID controller; the BMC reports'),
    'storage-not-json': Storage(lambda doc: b'RAID', NOT_JSON),
    'storage-empty-object': Storage(lambda doc: b'{}', READ),
    'storage-id-number': Storage(_set(('Id',), 5), NO_ID),
    'storage-id-100k': Storage(_set(('Id',), 'c' * 100000), NO_ID),
    'storage-id-nul': Storage(_set(('Id',), 'RAID\u0000'), NO_ID),
    'storage-id-surrogate': Storage(_text(rb'"Id": "RAID.1"',
                                          b'"Id": "\\ud800"'), NO_ID),
    'storage-drives-string': Storage(_set(('Drives',), 'D0'), READ),
    'storage-drives-null': Storage(_set(('Drives',), None), READ),
    'storage-drive-link-number': Storage(_set(('Drives',),
                                              [{'@odata.id': 7}]), READ),
    'storage-no-volumes': Storage(_drop('Volumes'),
                                  'has no RAID controller; the BMC reports'),
    'storage-volumes-string': Storage(_set(('Volumes',), 'V'), READ),
    'drive-not-json': Drive(lambda doc: b'disk', NOT_JSON),
    'drive-capacity-word': Drive(_set(('CapacityBytes',), 'big'), READ),
    'drive-capacity-negative': Drive(
        _set(('CapacityBytes',), -GIB),
        'no controller the BMC reports has 2 free physical disks'),
    'drive-capacity-huge': Drive(_set(('CapacityBytes',), 2 ** 70)),
    'drive-capacity-5000-digits': Drive(_text(
        CAPACITY, b'"CapacityBytes": ' + b'9' * 5000), READ),
    'drive-capacity-infinity': Drive(_text(
        CAPACITY, b'"CapacityBytes": Infinity'), READ),
    'drive-capacity-nan': Drive(_text(
        CAPACITY, b'"CapacityBytes": NaN'), READ),
    'drive-media-number': Drive(_set(('MediaType',), 5)),
    'drive-protocol-unknown': Drive(_set(('Protocol',), 'Carrier pigeon')),
    'drive-protocol-list': Drive(_set(('Protocol',), ['SAS'])),
    'drive-no-id': Drive(_drop('Id'), READ),
    'volumes-not-json': Volumes(lambda doc: b'<none/>', NOT_JSON),
    'volumes-members-string': Volumes(_set(('Members',), 'V1'), READ),
    'volumes-member-null': Volumes(_set(('Members',), [None]), READ),
    'volume-not-json': Volume(lambda doc: b'volume', NOT_JSON),
    'volume-raid-unknown': Volume(_set(('RAIDType',), 'RAID99'), UNLISTED),
    'volume-raid-number': Volume(_set(('RAIDType',), 1), UNLISTED),
    'volume-links-string': Volume(_set(('Links',), 'D0'), NOT_REDFISH),
    'volume-drives-string': Volume(_set(('Links', 'Drives'), 'D0')),
    'volume-drive-link-number': Volume(_set(('Links', 'Drives'),
                                            [{'@odata.id': 7}])),
    'volume-drive-link-null': Volume(_set(('Links', 'Drives'),
                                          [{'@odata.id': None}, None])),
    'volume-capacity-word': Volume(_set(('CapacityBytes',), 'half'),
                                   'CapacityBytes is malformed'),
    'volume-capacity-negative': Volume(_set(('CapacityBytes',), -GIB)),
    'volume-capacity-huge': Volume(_set(('CapacityBytes',), 2 ** 70)),
    'volume-name-100k': Volume(_set(('Name',), 'v' * 100000)),
    'volume-name-nul': Volume(_set(('Name',), 'root\u0000')),
    'volume-name-surrogate': Volume(_text(rb'"Name": "[^"]*"',
                                          b'"Name": "\\udfff"')),
    'volume-name-object': Volume(_set(('Name',), {'deep': [1]})),
    'volume-id-number': Volume(_set(('Id',), 10), NO_ID),
    'task-monitor-60k': Odd('odd_raid_task', lambda answer: (
        answer[0], None, (('Location', dict(answer[2])['Location'] +
                           'x' * 60000),)),
        'answered with a task monitor that is no URL', tasks=True),
    'task-monitor-nul': Odd('odd_raid_task', lambda answer: (
        answer[0], None, (('Location', dict(answer[2])['Location'] +
                           '\x00'),)),
        'answered with a task monitor that is no URL', tasks=True),
    'task-not-json': Task(lambda doc: b'done'),
    'task-a-list': Task(lambda doc: b'["Completed"]'),
    'task-empty-body': Task(lambda doc: b''),
    'task-state-unknown': Task(_set(('TaskState',), 'Exploded')),
    'task-state-list': Task(_set(('TaskState',), ['Completed'])),
    'task-exception': Task(_set(('TaskState',), 'Exception'),
                           'ended in state Exception'),
    'task-critical': Task(_set(('TaskStatus',), 'Critical'),
                          'state Completed, status Critical'),
    'task-messages-string': Task(_set(('Messages',), 'oops')),
    'task-messages-number': Task(_set(('Messages',), 5)),
    'task-message-number': Task(lambda doc: dict(
        doc, TaskState='Exception', Messages=[{'Message': 42}]),
        'failed on the BMC: 42'),
    'task-message-100k': Task(lambda doc: dict(
        doc, TaskState='Exception', Messages=[{'Message': 'm' * 100000}]),
        'mmmm'),
    'task-message-nul': Task(lambda doc: dict(
        doc, TaskState='Exception', Messages=[{'Message': 'bad\u0000'}]),
        'bad\\x00'),
}


fleet = odd_systems.sized_fleet(len(ODD))


def _drive(api, fleet, name: str, index: int) -> odd_systems.Sweep:
    odd = ODD[name]
    sweep = odd_systems.odd_node(
        api, fleet, index, name, odd.key, odd.odd,
        system={'storage': True, 'raid_tasks': odd.tasks},
        raid_interface='redfish', inspect_interface='redfish')
    sweep.call('PUT', '/v1/nodes/%s/states/raid', TARGET, version='1.12')
    provision = '/v1/nodes/%s/states/provision'
    if sweep.call('PUT', provision, {'target': 'manage'})[0] == 202:
        sweep.settle()
    if sweep.call('PUT', provision, {
            'target': 'clean', 'disable_ramdisk': True, 'clean_steps': [
                {'interface': 'raid', 'step': 'delete_configuration'},
                {'interface': 'raid', 'step': 'create_configuration'}]},
            version=NO_RAMDISK)[0] == 202 and \
            sweep.settle()['provision_state'] == 'clean failed' and \
            sweep.call('PUT', provision, {'target': 'manage'})[0] == 202:
        sweep.settle()
    if sweep.call('PUT', provision, {'target': 'inspect'})[0] == 202:
        sweep.settle()
    return sweep


def _built(api, fleet, name: str, sweep) -> list[str]:
    """What is wrong with a node whose RAID was built and inspected:
    its root volume recorded (or, ``UNLISTED``, no volume)."""
    node = api.node(sweep.uuid)
    if sweep.errors or node['provision_state'] != 'manageable':
        return ['%s: %s, %s' % (name, node['provision_state'],
                                sweep.errors)]
    disks = [(d['raid_level'], d.get('is_root_volume'), d['controller'])
             for d in node['raid_config']['logical_disks']]
    if disks != ([] if ODD[name].outcome == UNLISTED else
                 [('1', True, fleet_doubles.STORAGE)]):
        return ['%s: raid_config %s' % (name, disks)]
    if name.startswith('as-sent') and \
            node['properties'].get('local_gb') != 49:
        # inspection: the root volume of 50 GiB, less 1 for partitions
        return ['%s: properties %s' % (name, node['properties'])]
    return []


def test_odd_raid_resources_fail_the_step_naming_the_bmc(api, fleet):
    """One test per database: every odd answer on SQLite; on PostgreSQL
    and MariaDB those whose texts or numbers reach a column (a volume's
    name and size in raid_config, a task's message in last_error; odd
    ids are refused before anything is stored)."""
    stored = [n for n in ODD if n.startswith(('as-sent', 'volume-name-',
                                              'task-message-',
                                              'task-monitor-'))
              or n == 'volume-capacity-huge']

    def outcome(name: str, sweep) -> list[str]:
        expected = ODD[name].outcome
        if expected in (None, UNLISTED):
            return _built(api, fleet, name, sweep)
        if not any(expected in e for e in sweep.errors):
            return ['%s: expected %r in %s' % (name, expected, sweep.errors)]
        return []
    odd_systems.check(api, fleet, ODD, ODD if api.db_kind == 'sqlite'
                      else stored, _drive, outcome)
