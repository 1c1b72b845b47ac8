"""A BMC whose firmware updates and BIOS settings answer what no Redfish
service should: an UpdateService that is not JSON, not an object or has
no SimpleUpdate action (or one whose target is no link), a SimpleUpdate
answered without a task monitor, with one that is 100 KB, holds a NUL
or names another host, or with a body that is no task; a task that
ends oddly; a Bios resource with no settings object or no ResetBios
action, staged settings that are not JSON or no object, a PATCH or a
ResetBios answered with odd statuses and bodies - from the fleet's
Redfish double (tools/fleet_doubles.py: a system's
``odd_update_service``, ``odd_simple_update``, ``odd_task``,
``odd_bios``, ``odd_bios_settings``, ``odd_bios_patch`` and
``odd_bios_reset``).

Each node is driven through the API as an operator would: verification,
manual cleaning (no ramdisk) with ``firmware.update`` of the BIOS and
the BMC, then with ``bios.apply_configuration``, then with
``bios.factory_reset``, reading the firmware components and the BIOS
settings after each.  As for odd Systems (test_redfish_odd_systems):
every request is answered, no work ends in an unexpected exception, no
node is left locked or in a transient state, and a failure's last error
names the BMC, quoting what it sent only in part.  Each odd answer also
has the outcome it must have: what cannot be read fails its step naming
it, and the steps of the other kind run as they would."""

from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
_set, _drop, _text = odd_systems._set, odd_systems._drop, odd_systems._text
NO_RAMDISK = '1.70'
FIRMWARE = '/v1/nodes/%s/firmware'
BIOS = '/v1/nodes/%s/bios'
# the double makes a component's version of the image's file name
UPDATES = [{'component': 'bios', 'url': 'http://127.0.0.1:9/bios-2.0.bin'},
           {'component': 'bmc', 'url': 'http://127.0.0.1:9/bmc-3.0.bin'}]
UPDATED = {'bios': 'bios-2.0', 'bmc': 'bmc-3.0'}
AS_BEFORE = {'bios': fleet_doubles.BIOS_VERSION,
             'bmc': fleet_doubles.MANAGER_FIRMWARE}
SETTING = {'name': 'ProcTurboMode', 'value': 'Disabled'}

# the service as the odd Systems' sweep has it
api = odd_systems.api


class Odd:
    """What one of a BMC's update or BIOS resources answers (``key``:
    the fleet double's), and which step fails saying what: ``update``,
    ``apply`` and ``reset`` (None: the step did its work); ``steps``: the
    steps run (those the odd resource takes part in; all for the BMC as
    sent)."""

    def __init__(self, key, odd, update=None, apply=None, reset=None,
                 steps=('update', 'apply', 'reset')) -> None:
        self.key, self.odd = key, odd
        self.update, self.apply, self.reset = update, apply, reset
        self.steps = steps
        # the components after the update (an update that failed on the
        # BIOS left both as they were)
        self.versions = AS_BEFORE if update or 'update' not in steps \
            else UPDATED


FIRMWARE_STEPS = ('update',)
BIOS_STEPS = ('apply', 'reset')


def _kind(key: str, steps: tuple, field: str):
    """Odd answers of one resource (``key``) run through ``steps``: the
    answer, then the text ``field``'s step fails with (more as
    keywords)."""
    def made(odd, outcome=None, **more) -> Odd:
        return Odd(key, odd, steps=steps, **dict({field: outcome}, **more))
    return made


Service = _kind('odd_update_service', FIRMWARE_STEPS, 'update')
Update = _kind('odd_simple_update', FIRMWARE_STEPS, 'update')
Task = _kind('odd_task', FIRMWARE_STEPS, 'update')
Bios = _kind('odd_bios', BIOS_STEPS, 'apply')
Staged = _kind('odd_bios_settings', BIOS_STEPS, 'reset')
Patch = _kind('odd_bios_patch', BIOS_STEPS, 'apply')
Reset = _kind('odd_bios_reset', BIOS_STEPS, 'reset')


def _answer(status, body=None, *headers):
    return lambda answer: (status, body, headers)


def _located(where):
    """The SimpleUpdate's answer with its task monitor at ``where`` (a
    function of the one the BMC made)."""
    def odd(answer):
        made = dict(answer[2])['Location']
        return answer[0], answer[1], (('Location', where(made)),)
    return odd


ACTION = ('Actions', '#UpdateService.SimpleUpdate')
SETTINGS = ('@Redfish.Settings', 'SettingsObject', '@odata.id')
ELSEWHERE = 'http://127.0.0.9:1'
NOT_REDFISH = 'answered with JSON that is not a Redfish resource'
NOT_JSON = 'answered with something that is not JSON'
UPDATE = 'update firmware from'
NO_SIMPLE_UPDATE = 'offers no SimpleUpdate action'
NO_URL = 'answered with a task monitor that is no URL'
NO_TASK = 'has no such task'
READ_ONLY = 'names no settings object (@Redfish.Settings)'
STAGE = 'stage BIOS settings'
RESET = 'reset BIOS'
ODD = {
    'as-sent': Odd(None, None),
    'service-not-json': Service(lambda doc: b'<html>', NOT_JSON),
    'service-a-list': Service(lambda doc: b'[]', NOT_REDFISH),
    'service-no-actions': Service(_drop('Actions'), 'Actions'),
    'service-no-simple-update': Service(_set(('Actions',), {}),
                                        NO_SIMPLE_UPDATE),
    'service-target-number': Service(_set(ACTION + ('target',), 5),
                                     NO_SIMPLE_UPDATE),
    'service-target-null': Service(_set(ACTION + ('target',), None),
                                   NO_SIMPLE_UPDATE),
    'service-target-elsewhere': Service(lambda doc: _set(
        ACTION + ('target',), ELSEWHERE + doc['Actions'][
            '#UpdateService.SimpleUpdate']['target'])(doc)),
    'service-protocols-ftp-only': Service(_set(
        ACTION + ('TransferProtocol@Redfish.AllowableValues',), ['FTP'])),
    'update-no-location': Update(_answer(202), 'Location'),
    'update-monitor-in-body': Update(lambda answer: (
        202, {'@odata.id': dict(answer[2])['Location']}, ())),
    'update-monitor-elsewhere': Update(_located(
        lambda made: ELSEWHERE + made)),
    'update-monitor-60k': Update(_located(
        lambda made: made + 'x' * 60000), NO_URL),
    'update-monitor-nul': Update(_located(lambda made: made + '\x00'),
                                 NO_URL),
    'update-monitor-space': Update(_located(lambda made: made + ' 1'),
                                   NO_URL),
    'update-monitor-relative': Update(_located(
        lambda made: made.rsplit('/', 1)[-1]), NO_TASK),
    'update-answer-400': Update(_answer(400, {'error': {}}), UPDATE),
    'update-answer-500': Update(_answer(500, b'oops'), UPDATE),
    'update-answer-503': Update(_answer(503), UPDATE),
    'update-answer-204': Update(_answer(204), 'Location'),
    'update-body-not-json': Update(lambda answer: (
        202, b'<html>', answer[2]), NOT_JSON),
    'update-body-a-list': Update(lambda answer: (
        202, b'[1]', answer[2]), NOT_REDFISH),
    'update-body-id-number': Update(lambda answer: (
        202, {'@odata.id': 5}, answer[2]), NOT_REDFISH),
    'task-exception': Task(_set(('TaskState',), 'Exception'),
                           'ended in state Exception'),
    'task-message-100k': Task(lambda doc: dict(
        doc, TaskState='Exception', Messages=[{'Message': 'm' * 100000}]),
        'mmmm'),
    'task-not-json': Task(lambda doc: b'done'),
    'task-gone': Task(lambda doc: (404, {'error': {}}, ())),
    'bios-no-settings': Bios(_drop('@Redfish.Settings'), apply=READ_ONLY),
    'bios-settings-link-number': Bios(_set(SETTINGS, 5), apply=READ_ONLY),
    'bios-settings-link-null': Bios(_set(SETTINGS, None), apply=READ_ONLY),
    'bios-settings-string': Bios(_set(('@Redfish.Settings',), 'S'),
                                 apply=NOT_REDFISH, reset=NOT_REDFISH),
    'bios-settings-elsewhere': Bios(lambda doc: _set(
        SETTINGS, ELSEWHERE + doc['@odata.id'] + '/Settings')(doc)),
    'bios-no-actions': Bios(_drop('Actions'), reset=RESET),
    'bios-reset-target-number': Bios(_set(
        ('Actions', '#Bios.ResetBios', 'target'), 5), reset=RESET),
    'bios-attributes-list': Bios(_set(('Attributes',), ['ProcTurboMode']),
                                 apply=NOT_REDFISH, reset=NOT_REDFISH),
    'staged-not-json': Staged(lambda doc: b'<html>', NOT_JSON),
    'staged-a-list': Staged(lambda doc: b'[]', NOT_REDFISH),
    'staged-attributes-null': Staged(_set(('Attributes',), None)),
    'staged-attributes-string': Staged(_set(('Attributes',), 'x'),
                                       NOT_REDFISH),
    'patch-answer-400': Patch(_answer(400, {'error': {}}), STAGE),
    'patch-answer-500': Patch(_answer(500, b'oops'), STAGE),
    'patch-answer-503': Patch(_answer(503), STAGE),
    'patch-answer-202-task': Patch(lambda answer: (
        202, None, (('Location', '/redfish/v1/TaskMonitors/none'),))),
    'patch-answer-not-json': Patch(_answer(200, b'<html>')),
    'reset-answer-400': Reset(_answer(400, {'error': {}}), RESET),
    'reset-answer-500': Reset(_answer(500, b'oops'), RESET),
    'reset-answer-not-json': Reset(_answer(200, b'ok')),
}


fleet = odd_systems.sized_fleet(len(ODD))


def _clean(sweep, interface: str, step: str, **args) -> str | None:
    """Manual cleaning with one step (no ramdisk): the node's last error
    once it ended (back to manageable where it failed)."""
    provision = '/v1/nodes/%s/states/provision'
    if sweep.call('PUT', provision, {
            'target': 'clean', 'disable_ramdisk': True, 'clean_steps': [
                dict(interface=interface, step=step, args=args)]},
            version=NO_RAMDISK)[0] != 202:
        return 'not accepted: %s' % (sweep.answers[-1],)
    node = odd_systems._settled(sweep.api, sweep.uuid)
    error = node['last_error']
    if error:
        sweep.errors.append(error)
    if node['provision_state'] == 'clean failed' and \
            sweep.call('PUT', provision, {'target': 'manage'})[0] == 202:
        sweep.settle()
    return error


def _drive(api, fleet, name: str, index: int) -> odd_systems.Sweep:
    odd = ODD[name]
    sweep = odd_systems.odd_node(
        api, fleet, index, name, odd.key, odd.odd,
        system={'manager': True}, bios_interface='redfish')
    if sweep.call('PUT', '/v1/nodes/%s/states/provision',
                  {'target': 'manage'})[0] == 202:
        sweep.settle()
    if 'update' in odd.steps:
        sweep.update = _clean(sweep, 'firmware', 'update', settings=UPDATES)
    sweep.firmware = sweep.call('GET', FIRMWARE, version='1.86')[1]
    if 'apply' in odd.steps:
        sweep.apply = _clean(sweep, 'bios', 'apply_configuration',
                             settings=[SETTING])
        sweep.applied = sweep.call('GET', BIOS)[1]
        sweep.reset = _clean(sweep, 'bios', 'factory_reset')
        sweep.reset_to = sweep.call('GET', BIOS)[1]
    return sweep


def _setting(listed) -> object:
    """ProcTurboMode as the node's BIOS settings show it."""
    if not isinstance(listed, dict):
        return 'not a listing: %r' % (listed,)
    return {s['name']: s['value'] for s in listed.get('bios', [])}.get(
        SETTING['name'])


def _outcome(name: str, sweep) -> list[str]:
    """What differs from the outcome this odd answer must have."""
    odd, out = ODD[name], []
    for step in odd.steps:
        expected, got = getattr(odd, step), getattr(sweep, step)
        if expected is None and got is not None or \
                expected is not None and expected not in (got or ''):
            out.append('%s: %s: %r' % (name, step, got))
    components = {c['component']: c['current_version']
                  for c in (sweep.firmware or {}).get('firmware', [])}
    if components != odd.versions:
        out.append('%s: components %s' % (name, components))
    if 'apply' not in odd.steps:
        return out
    if odd.apply is None and _setting(sweep.applied) != SETTING['value']:
        out.append('%s: applied %r' % (name, _setting(sweep.applied)))
    if odd.apply is None and odd.reset is None and \
            _setting(sweep.reset_to) != fleet_doubles.BIOS[SETTING['name']]:
        out.append('%s: reset to %r' % (name, _setting(sweep.reset_to)))
    return out


def test_odd_updates_and_bios_settings_fail_their_step_naming_the_bmc(
        api, fleet):
    """One test per database: every odd answer on SQLite; on PostgreSQL
    and MariaDB those whose texts reach a column (a task monitor's URI
    in driver_internal_info, a task's message in last_error)."""
    stored = [n for n in ODD if n == 'as-sent' or n.endswith(
        ('-nul', '-space', '-60k', '-100k'))]
    odd_systems.check(api, fleet, ODD, ODD if api.db_kind == 'sqlite'
                      else stored, _drive, _outcome)
