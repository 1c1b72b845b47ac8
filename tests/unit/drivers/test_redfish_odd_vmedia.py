"""A BMC whose Manager or virtual media answer what no Redfish service
should: a Manager, a VirtualMedia collection or device that is not
JSON, not an object, or has odd fields (firmware versions, models and
image URLs that are 100 KB, hold a NUL character or a lone surrogate,
or are numbers or objects; media types of every shape; no actions),
from the fleet's Redfish double (tools/fleet_doubles.py: a system's
``odd_manager``, ``odd_vmedia_list`` and ``odd_vmedia``).

Each node is driven through the API as an operator would: verification
(which reads the BMC's firmware version from its Manager), the firmware
components (API 1.86), the virtual media listed, attached, listed again
and detached (API 1.89, 1.93).  As for odd Systems
(test_redfish_odd_systems): every request is answered, an error names
the BMC (never "An internal error occurred"), no work ends in an
unexpected exception, no node is left locked or in a transient state.
Each odd answer also has the outcome it must have."""



from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
_set, _drop, _text = odd_systems._set, odd_systems._drop, odd_systems._text
IMAGE = 'http://127.0.0.1:9/boot.iso'
VMEDIA = '/v1/nodes/%s/vmedia'
FIRMWARE = '/v1/nodes/%s/firmware'

# the service as the odd Systems' sweep has it
api = odd_systems.api


class Odd:
    """What a system's Manager (``key``: the fleet double's) answers,
    and the outcome: ``ATTACHED`` (the image attached and detached, the
    devices then listed holding ``listed``, then ``ended``: what the BMC
    reports), or a
    text the attach's error holds; ``bmc``: the BMC firmware version
    the node's components then show (None: no ``bmc`` component)."""

    def __init__(self, key, odd, outcome, bmc=fleet_doubles.MANAGER_FIRMWARE,
                 listed=(IMAGE,), ended=()) -> None:
        self.key, self.odd, self.outcome, self.bmc = key, odd, outcome, bmc
        self.listed, self.ended = list(listed), list(ended)


ATTACHED = 'attached'
NO_DEVICE = 'the BMC offers no cdrom virtual media device'
NOT_REDFISH = 'answered with JSON that is not a Redfish resource'
NOT_JSON = 'answered with something that is not JSON'


def Manager(odd, outcome=ATTACHED, bmc=None):
    return Odd('odd_manager', odd, outcome, bmc)


def Devices(odd, outcome=NO_DEVICE):
    return Odd('odd_vmedia_list', odd, outcome)


def Device(odd, outcome=ATTACHED, listed=(IMAGE,), ended=()):
    return Odd('odd_vmedia', odd, outcome, listed=listed, ended=ended)


ODD = {
    'as-sent': Odd(None, None, ATTACHED),
    'manager-not-json': Manager(lambda doc: b'<html>', NOT_JSON),
    'manager-a-list': Manager(lambda doc: b'[]', NOT_REDFISH),
    'manager-firmware-100k': Manager(_set(('FirmwareVersion',), 'f' * 100000),
                                     bmc='f' * 252 + '...'),
    'manager-firmware-nul': Manager(_set(('FirmwareVersion',), '2.5\u0000'),
                                    bmc='2.5\\x00'),
    'manager-firmware-surrogate': Manager(
        _text(rb'"FirmwareVersion": "[^"]*"',
              b'"FirmwareVersion": "\\ud800"'), bmc='\\ud800'),
    'manager-firmware-number': Manager(_set(('FirmwareVersion',), 2.5),
                                       bmc='2.5'),
    'manager-firmware-object': Manager(_set(('FirmwareVersion',), {'v': 2}),
                                       bmc="{'v': 2}"),
    'manager-model-nul': Manager(_set(('Model',), 'BMC\u0000'),
                                 bmc=fleet_doubles.MANAGER_FIRMWARE),
    'manager-no-vmedia': Manager(_drop('VirtualMedia'), NO_DEVICE,
                                 bmc=fleet_doubles.MANAGER_FIRMWARE),
    'manager-vmedia-string': Manager(_set(('VirtualMedia',), 'CD1'),
                                     NO_DEVICE,
                                     bmc=fleet_doubles.MANAGER_FIRMWARE),
    'devices-not-json': Devices(lambda doc: b'<none/>'),
    'devices-members-string': Devices(_set(('Members',), 'CD1')),
    'devices-member-number': Devices(_set(('Members',), [{'@odata.id': 1}])),
    'devices-none': Devices(_set(('Members',), [])),
    'device-not-json': Device(lambda doc: b'CD', NO_DEVICE),
    'device-types-string': Device(_set(('MediaTypes',), 'CD'), NO_DEVICE),
    'device-types-null': Device(_set(('MediaTypes',), None), NO_DEVICE),
    'device-types-numbers': Device(_set(('MediaTypes',), [1, 2]),
                                   NO_DEVICE),
    'device-types-nested': Device(_set(('MediaTypes',), [['CD']]),
                                  NO_DEVICE),
    # what the BMC reports is shown: escaped, cut, as it is
    'device-image-100k': Device(_set(('Image',), 'i' * 100000),
                                listed=['i' * 2045 + '...']),
    'device-image-nul': Device(_set(('Image',), 'http://x/\u0000'),
                               listed=['http://x/\\x00']),
    'device-image-surrogate': Device(_text(rb'"Image": [^,]*,',
                                           b'"Image": "\\udfff",'),
                                     listed=['\\udfff']),
    'device-image-number': Device(_set(('Image',), 7), listed=[7]),
    'device-image-big-int': Device(_set(('Image',), 2 ** 70),
                                   listed=[2 ** 70]),
    'device-image-object': Device(_set(('Image',), {'url': IMAGE}),
                                  listed=[{'url': IMAGE}]),
    # every device says 'yes', holding an image or not
    'device-inserted-word': Device(_set(('Inserted',), 'yes'),
                                   listed=[IMAGE, None], ended=[None, None]),
    'device-inserted-null': Device(_set(('Inserted',), None), listed=[]),
    'device-no-actions': Device(_drop('Actions'), 'insert virtual media'),
    'device-insert-target-null': Device(_set(
        ('Actions', '#VirtualMedia.InsertMedia', 'target'), None),
        'insert virtual media'),
    'device-id-number': Device(_set(('Id',), 1)),
}


fleet = odd_systems.sized_fleet(len(ODD))


def _drive(api, fleet, name: str, index: int) -> odd_systems.Sweep:
    odd = ODD[name]
    sweep = odd_systems.odd_node(api, fleet, index, name, odd.key, odd.odd,
                                 system={'manager': True})
    if sweep.call('PUT', '/v1/nodes/%s/states/provision',
                  {'target': 'manage'})[0] == 202:
        sweep.settle()
    sweep.firmware = sweep.call('GET', FIRMWARE, version='1.86')[1]
    sweep.before = sweep.call('GET', VMEDIA, version='1.93')[1]
    # attaching and detaching run in the conductor's workers (204 once
    # the node is locked); what fails is the node's last error
    sweep.attach = sweep.call('POST', VMEDIA, {
        'device_type': 'cdrom', 'image_url': IMAGE,
        'image_download_source': 'http'}, version='1.89')
    sweep.attached = sweep.settle()['last_error']
    sweep.after = sweep.call('GET', VMEDIA, version='1.93')[1]
    sweep.detach = sweep.call('DELETE', VMEDIA, version='1.89')
    sweep.detached = sweep.settle()['last_error']
    sweep.end = sweep.call('GET', VMEDIA, version='1.93')[1]
    return sweep


def _images(listed) -> list:
    """The images of the devices listed that hold one."""
    if not isinstance(listed, list):
        return ['not a listing: %r' % (listed,)]
    return [d['image'] for d in listed if d.get('inserted')]


def _outcome(name: str, sweep) -> list[str]:
    """What differs from the outcome this odd answer must have."""
    odd, out = ODD[name], []
    components = {c['component']: c['current_version']
                  for c in (sweep.firmware or {}).get('firmware', [])}
    if components.get('bmc') != odd.bmc:
        out.append('%s: bmc firmware %r' % (name, components.get('bmc')))
    if odd.outcome == ATTACHED:
        if (sweep.attach[0], sweep.detach[0]) != (204, 204) or \
                sweep.attached or sweep.detached or \
                _images(sweep.after) != odd.listed or \
                _images(sweep.end) != odd.ended:
            out.append('%s: attach %s %s, listed %s then %s' % (
                name, sweep.attached, sweep.detached,
                _images(sweep.after), _images(sweep.end)))
    elif odd.outcome not in (sweep.attached or ''):
        out.append('%s: attach %s' % (name, sweep.attached))
    return out


def test_odd_managers_and_virtual_media_are_answered_naming_the_bmc(
        api, fleet):
    """One test per database: every odd answer on SQLite; on PostgreSQL
    and MariaDB those whose texts may reach a column (the firmware
    version, the model)."""
    odd_systems.check(api, fleet, ODD, ODD if api.db_kind == 'sqlite' else [
        n for n in ODD if n == 'as-sent' or n.startswith('manager-')],
        _drive, _outcome)
