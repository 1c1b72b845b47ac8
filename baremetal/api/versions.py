"""Microversions: constants, negotiation, field visibility.

The maximum advertised is the newest version whose every feature is
implemented (clients send every call at min(server max, client max)).
"""

import dataclasses
import re

from baremetal.common import exception

BASE = 1
MIN = 1

# One constant per microversion this service honours.
AVAILABLE_STATE = 2           # NOSTATE shown as 'available'
DRIVER_INTERNAL_INFO = 3
MANAGEABLE_STATE = 4          # manage / provide verbs
NODE_NAME = 5
INSPECT = 6
CLEAN_STEP = 7
FIELDS = 8                    # ?fields=
PROVISION_STATE_FILTER = 9
UNRESTRICTED_NAME = 10
ENROLL_STATE = 11             # new nodes start in enroll
RAID = 12
ABORT_VERB = 13
STATES_LINKS = 14
MANUAL_CLEAN = 15
DRIVER_FILTER = 16
ADOPT_VERB = 17
PORT_INTERNAL_INFO = 18
PORT_ADVANCED_NET = 19
NETWORK_INTERFACE = 20
RESOURCE_CLASS = 21
LOOKUP_HEARTBEAT = 22
PORTGROUPS = 23
PORTGROUP_SUBCONTROLLERS = 24
UNSET_CHASSIS = 25
PORTGROUP_MODE = 26
SOFT_POWER = 27
VIFS = 28
INJECT_NMI = 29
DYNAMIC_DRIVERS = 30
DYNAMIC_INTERFACES = 31
VOLUME = 32
STORAGE_INTERFACE = 33
PHYSICAL_NETWORK = 34
REBUILD_CONFIGDRIVE = 35
AGENT_VERSION = 36
TRAITS = 37
RESCUE = 38
INSPECT_WAIT = 39
BIOS = 40
INSPECT_ABORT = 41
FAULT = 42
DETAIL_QUERY = 43
DEPLOY_STEP = 44
RESET_INTERFACES = 45
CONDUCTOR_GROUP = 46
AUTOMATED_CLEAN = 47
PROTECTED = 48
CONDUCTORS = 49
OWNER = 50
DESCRIPTION = 51
ALLOCATIONS = 52
SMARTNIC = 53
EVENTS = 54
DEPLOY_TEMPLATES = 55
CONFIGDRIVE_JSON = 56
ALLOCATION_UPDATE = 57
ALLOCATION_BACKFILL = 58
CONFIGDRIVE_VENDOR_DATA = 59
ALLOCATION_OWNER = 60
RETIRED = 61
AGENT_TOKEN = 62              # lookup returns, heartbeat sends agent_token
INDICATORS = 63
LOCAL_LINK_NETWORK_TYPE = 64
LESSEE = 65
NETWORK_DATA = 66
VIF_PORT_UUID = 67
AGENT_VERIFY_CA = 68          # heartbeat may send the agent's TLS CA
DEPLOY_STEPS_ARG = 69         # deploy_steps with active/rebuild
DISABLE_RAMDISK = 70          # manual cleaning without the ramdisk
SCOPED_ROLES = 71             # a marker: nothing changes on the wire
AGENT_STATUS = 72             # heartbeat may send agent_status(_message)
DEPLOY_VERBS = 73             # deploy / undeploy verbs
BIOS_REGISTRY = 74
BOOT_MODE = 75                # boot_mode, secure_boot (read-only)
SET_BOOT_MODE = 76            # PUT states/boot_mode, states/secure_boot
DRIVER_FIELDS = 77            # ?fields= on driver list and show
NODE_HISTORY = 78
ALLOCATION_NAME_MATCH = 79    # allocations prefer a node named like them
SELF_SERVICE = 80             # a marker for project-scoped node creation
INVENTORY = 81
SHARDS = 82
CHILD_NODES = 83
CONTINUE_INSPECTION = 84
UNHOLD = 85
FIRMWARE = 86
SERVICE = 87
PORT_NAME = 88
VMEDIA = 89
OVN_VTEP = 90
NO_JSON_SUFFIX = 91           # .json ends no longer special
RUNBOOKS = 92
VMEDIA_GET = 93
PORT_NODE_NAME = 94
DISABLE_POWER_OFF = 95
INSPECTION_RULES = 96
PORT_DESCRIPTION = 97
PATCH_SPECIAL_KEYS = 98       # JSON pointer escapes ~0 ~1 in PATCH paths
PORT_CONDUCTOR_GROUP = 99     # ?conductor_groups= on port/portgroup lists
PORT_VENDOR = 100
PORT_CATEGORY = 101
PORTGROUP_PHYSICAL_NETWORK = 102
PORTGROUP_CATEGORY = 103
INSTANCE_NAME = 104
NO_OVN_VTEP = 105             # the 1.90 vtep keys refused again
PORTGROUP_SHARD = 106         # ?shard= on portgroup lists
REQUEST_ID = 107              # X-OpenStack-Request-Id on responses
SERVICE_DISABLE_RAMDISK = 108
NODE_HEALTH = 109
DEPLOYWAIT_ABORT = 110
DYNAMIC_PORTGROUP = 111
RUNBOOK_TRAITS = 112
NODE_HISTORY_PROJECT = 113    # history events name their project
FIRMWARE_IDENTITY = 114       # firmware vendor, model, serial_number
NODE_HISTORY_FIELDS = 115     # history state, target, duration_seconds

# The newest version whose every feature is implemented.
MAX = NODE_HISTORY_FIELDS

MIN_STRING = '%d.%d' % (BASE, MIN)
MAX_STRING = '%d.%d' % (BASE, MAX)

# First version that shows each node field (absent: always shown).
NODE_FIELDS = {
    'name': NODE_NAME,
    'driver_internal_info': DRIVER_INTERNAL_INFO,
    'inspection_started_at': INSPECT,
    'inspection_finished_at': INSPECT,
    'clean_step': CLEAN_STEP,
    'raid_config': RAID,
    'target_raid_config': RAID,
    'network_interface': NETWORK_INTERFACE,
    'resource_class': RESOURCE_CLASS,
    'boot_interface': DYNAMIC_INTERFACES,
    'console_interface': DYNAMIC_INTERFACES,
    'deploy_interface': DYNAMIC_INTERFACES,
    'inspect_interface': DYNAMIC_INTERFACES,
    'management_interface': DYNAMIC_INTERFACES,
    'power_interface': DYNAMIC_INTERFACES,
    'raid_interface': DYNAMIC_INTERFACES,
    'vendor_interface': DYNAMIC_INTERFACES,
    'storage_interface': STORAGE_INTERFACE,
    'traits': TRAITS,
    'rescue_interface': RESCUE,
    'bios_interface': BIOS,
    'fault': FAULT,
    'deploy_step': DEPLOY_STEP,
    'conductor_group': CONDUCTOR_GROUP,
    'automated_clean': AUTOMATED_CLEAN,
    'protected': PROTECTED,
    'protected_reason': PROTECTED,
    'conductor': CONDUCTORS,
    'owner': OWNER,
    'description': DESCRIPTION,
    'allocation_uuid': ALLOCATIONS,
    'retired': RETIRED,
    'retired_reason': RETIRED,
    'lessee': LESSEE,
    'network_data': NETWORK_DATA,
    'boot_mode': BOOT_MODE,
    'secure_boot': BOOT_MODE,
    'shard': SHARDS,
    'parent_node': CHILD_NODES,
    'firmware_interface': FIRMWARE,
    'service_step': SERVICE,
    'disable_power_off': DISABLE_POWER_OFF,
    'instance_name': INSTANCE_NAME,
    'health': NODE_HEALTH,
}

# Interface types added after 1.30 (driver details, node validate):
# the first version that shows each.
INTERFACE_VERSIONS = {
    'storage': STORAGE_INTERFACE,
    'rescue': RESCUE,
    'bios': BIOS,
    'firmware': FIRMWARE,
}

PORT_FIELDS = {
    'internal_info': PORT_INTERNAL_INFO,
    'local_link_connection': PORT_ADVANCED_NET,
    'pxe_enabled': PORT_ADVANCED_NET,
    'portgroup_uuid': PORTGROUP_SUBCONTROLLERS,
    'physical_network': PHYSICAL_NETWORK,
    'is_smartnic': SMARTNIC,
    'name': PORT_NAME,
    'description': PORT_DESCRIPTION,
    'vendor': PORT_VENDOR,
    'category': PORT_CATEGORY,
    'available_for_dynamic_portgroup': DYNAMIC_PORTGROUP,
}

PORTGROUP_FIELDS = {
    'mode': PORTGROUP_MODE,
    'properties': PORTGROUP_MODE,
    'physical_network': PORTGROUP_PHYSICAL_NETWORK,
    'category': PORTGROUP_CATEGORY,
    'dynamic_portgroup': DYNAMIC_PORTGROUP,
}

ALLOCATION_FIELDS = {
    'owner': ALLOCATION_OWNER,
}

# Provision verbs: the first version that accepts each.
VERB_VERSIONS = {
    'manage': MANAGEABLE_STATE,
    'provide': MANAGEABLE_STATE,
    'inspect': INSPECT,
    'abort': ABORT_VERB,
    'clean': MANUAL_CLEAN,
    'adopt': ADOPT_VERB,
    'rescue': RESCUE,
    'unrescue': RESCUE,
    'deploy': DEPLOY_VERBS,
    'undeploy': DEPLOY_VERBS,
    'unhold': UNHOLD,
    'service': SERVICE,
}

# Runbook fields newer than the runbooks themselves (1.92)
RUNBOOK_FIELDS = {
    'description': RUNBOOK_TRAITS,
    'traits': RUNBOOK_TRAITS,
}



@dataclasses.dataclass(frozen=True)
class Gate:
    """Ironic's answer to a request for a resource (or one method of it)
    newer than the version asked for.  ``plain``: a plain HTTP error
    (``code``, ``title``, ``description``) without the version headers;
    otherwise the fault envelope with them."""
    status: int = 404
    message: str = ''
    plain: bool = True


_NOT_FOUND = Gate()                                   # pecan's abort(404)
_NOT_SUPPORTED = Gate(404, 'The API is not supported for this version',
                      plain=False)
_PARENT_405 = Gate(405)     # Ironic's parent controller has no such method


def _get_404_else_405(what: str, plain: bool) -> dict[str, Gate]:
    msg = 'The API version does not allow %s' % what
    return {'GET': Gate(404, msg, plain), '*': Gate(405, msg, plain)}


# How Ironic answers below a resource's first version, by route template
# (the longest template prefix wins; within it the method, else '*').
# Unlisted templates get a plain 404, as Ironic's node sub-resources.
TOO_OLD: dict[str, dict[str, Gate]] = {
    '/v1/allocations': _get_404_else_405('allocations', plain=False),
    '/v1/allocations/{ident}': {'PATCH': Gate(
        405, 'The API version does not allow updating allocations',
        plain=False)},
    '/v1/deploy_templates': _get_404_else_405('deploy templates',
                                              plain=True),
    '/v1/runbooks': _get_404_else_405('runbooks', plain=True),
    '/v1/runbooks/{runbook}/traits': {'*': Gate(
        404, 'The API version does not allow runbook traits')},
    '/v1/inspection_rules': _get_404_else_405('inspection rules',
                                              plain=False),
    '/v1/conductors': {'*': _NOT_SUPPORTED},
    '/v1/events': {'*': _NOT_SUPPORTED},
    '/v1/portgroups': {'*': _NOT_SUPPORTED},
    '/v1/portgroups/{pg}/ports': {'*': _NOT_FOUND},
    '/v1/volume': {'*': _NOT_SUPPORTED},
    '/v1/volume/connectors': {'*': _NOT_FOUND},
    '/v1/volume/targets': {'*': _NOT_FOUND},
    '/v1/nodes/{node}/volume': {'*': _NOT_SUPPORTED},
    '/v1/nodes/{node}/volume/connectors': {'*': _NOT_FOUND},
    '/v1/nodes/{node}/volume/targets': {'*': _NOT_FOUND},
    '/v1/shards': {'*': Gate(404, 'The API version does not allow shards',
                             plain=False)},
    '/v1/lookup': {'*': Gate(404, 'Resource could not be found.',
                             plain=False)},
    '/v1/heartbeat': {'*': Gate(404, 'Resource could not be found.',
                                plain=False)},
    # below 1.37 Ironic's node controller answers for .../traits itself
    '/v1/nodes/{node}/traits': {
        'GET': Gate(406, 'Request not acceptable.', plain=False),
        'DELETE': Gate(404, 'Resource could not be found.', plain=False),
        '*': _PARENT_405},
    '/v1/nodes/{node}/states/raid': {
        'PUT': Gate(406, 'Request not acceptable.', plain=False),
        '*': _PARENT_405},
    '/v1/drivers/{name}/raid': {
        'GET': Gate(406, 'Request not acceptable.', plain=False),
        '*': _PARENT_405},
    '/v1/nodes/{node}/management/inject_nmi': {
        'PUT': Gate(404, 'Resource could not be found.', plain=False),
        '*': _PARENT_405},
}


def _gate_prefix(template: str, method: str | None = None) -> str | None:
    """The longest TOO_OLD prefix of ``template`` with an answer for
    ``method`` (no method: with an answer for every method, the whole
    resource's prefix)."""
    best = None
    for prefix, by_method in TOO_OLD.items():
        if (template == prefix or template.startswith(prefix + '/')) and (
                best is None or len(prefix) > len(best)) and (
                method in by_method or '*' in by_method):
            best = prefix
    return best


def too_old(template: str, method: str) -> Gate:
    """How to answer ``method`` on ``template`` below its version."""
    best = _gate_prefix(template, method)
    if best is None:
        return _NOT_FOUND
    by_method = TOO_OLD[best]
    return by_method.get(method) or by_method['*']


def same_resource(template: str, other: str) -> bool:
    """Whether two route templates fall under the same TOO_OLD entry
    (one Ironic controller)."""
    mine = _gate_prefix(template)
    return mine is not None and _gate_prefix(other) == mine


_HEADER_RE = re.compile(r'^\s*(\d+)\.(\d+)\s*$')


def parse(headers) -> int:
    """The requested minor version: OpenStack-API-Version first, then
    X-OpenStack-Ironic-API-Version; none means the minimum."""
    value = None
    generic = headers.get('OpenStack-API-Version')
    if generic:
        for part in generic.split(','):
            service, _, ver = part.strip().partition(' ')
            if service.lower() == 'baremetal':
                value = ver.strip()
                break
    if value is None:
        value = headers.get('X-OpenStack-Ironic-API-Version')
    if value is None or not value.strip():
        # as Ironic: an empty header asks for nothing in particular
        return MIN
    if value.strip().lower() == 'latest':
        return MAX
    m = _HEADER_RE.match(value)
    if not m:
        raise exception.NotAcceptable(
            'Invalid value for X-OpenStack-Ironic-API-Version header: %r; '
            'expected "1.N" or "latest" with N in [%s, %s]'
            % (value, MIN_STRING, MAX_STRING))
    major, minor = int(m.group(1)), int(m.group(2))
    if major != BASE or minor < MIN or minor > MAX:
        raise exception.NotAcceptable(
            'Version %s was requested but the minor version is not '
            'supported by this service. The supported version range is: '
            '[%s, %s].' % (value, MIN_STRING, MAX_STRING))
    return minor


def hidden_fields(table: dict, version: int) -> frozenset[str]:
    """Fields of ``table`` newer than ``version``."""
    return frozenset(f for f, v in table.items() if v > version)
