"""Access policy (oslo.policy) with Ironic's rule names and defaults.

The defaults are Ironic's secure-RBAC ones (2023 onwards: scope and the
new defaults enforced): system-scoped admin, member and reader;
project-scoped admin, manager, member and reader acting on nodes their
project owns (``node.owner``) or leases (``node.lessee``); a ``service``
role.  ``tox -e genpolicy`` writes the sample file from the rules below;
``[oslo_policy]policy_file`` overrides any of them.

How a request is checked, as Ironic does:

* a node (or a port, port group, volume connector or target of one, or
  an allocation) the caller may not read is a 404, as if it did not
  exist; one it may read but not change as asked is a 403;
* a list is every row for those ``baremetal:<resource>:list_all``
  allows, else (``baremetal:<resource>:list``) the rows of the caller's
  project: nodes it owns or leases, ports and port groups of those
  nodes, allocations it owns -- one SQL condition (baremetal/db/projects);
* a node's ``driver_info``, ``driver_internal_info``, ``last_error`` and
  ``reservation`` are redacted for callers the ``baremetal:node:get:*``
  rules refuse (a lessee's users).

A handler asks ``authorize(req, rule)`` early; when the rule is about a
node's (or allocation's) project and the caller is project-scoped, the
check waits on the request until the handler loads the row
(``check_row``), which first checks that the caller may see it.  With
``auth_strategy = noauth`` (or ``http_basic``) the caller is a system
admin and every check passes without oslo.policy being asked.
"""

import sys
import threading

from oslo_config import cfg
from oslo_policy import policy

from baremetal.common import exception

# -- personas (check strings; the facts are Ironic's defaults)
SYSTEM_ADMIN = 'role:admin and system_scope:all'
SERVICE_ROLE = 'rule:service_role'
SYSTEM_MEMBER = '(role:member and system_scope:all) or ' + SERVICE_ROLE
SYSTEM_READER = ('(role:reader and system_scope:all) or '
                 '(role:service and system_scope:all) or ' + SERVICE_ROLE)
SYSTEM_SERVICE = 'role:service and system_scope:all'
PROJECT_SERVICE = 'role:service and project_id:%(node.owner)s'


def _owner(role: str) -> str:
    return 'role:%s and project_id:%%(node.owner)s' % role


def _lessee(role: str) -> str:
    return 'role:%s and project_id:%%(node.lessee)s' % role


def _project(role: str) -> str:
    return ('role:%s and (project_id:%%(node.owner)s or '
            'project_id:%%(node.lessee)s)' % role)


def _any(*checks: str) -> str:
    return ' or '.join('(%s)' % c for c in checks)


SYSTEM_OR_PROJECT_MEMBER = _any(SYSTEM_MEMBER, _project('member'),
                                SYSTEM_SERVICE)
SYSTEM_OR_PROJECT_READER = _any(SYSTEM_READER, _project('reader'),
                                PROJECT_SERVICE)
# provision verbs, maintenance, VIFs: the owner's members, the lessee's
# managers and admins
OWNER_MEMBER_OR_LESSEE_MANAGER = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, _owner('member'), _lessee('admin'),
    _lessee('manager'), PROJECT_SERVICE)
SYSTEM_ADMIN_OR_OWNER_MANAGER = _any(
    SYSTEM_ADMIN, SYSTEM_SERVICE, _owner('admin'), _owner('manager'),
    PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_MANAGER = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, _owner('admin'), _owner('manager'),
    PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_MEMBER = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, _owner('member'), PROJECT_SERVICE)
SYSTEM_OR_OWNER_READER = _any(
    SYSTEM_READER, SYSTEM_SERVICE, _owner('reader'), PROJECT_SERVICE)
SYSTEM_MEMBER_OR_PROJECT_MANAGER = _any(
    SYSTEM_MEMBER, SYSTEM_SERVICE, _owner('admin'), _owner('manager'),
    _lessee('admin'), _lessee('manager'), PROJECT_SERVICE)
ALLOCATION_MEMBER = _any(SYSTEM_MEMBER,
                         'role:member and project_id:%(allocation.owner)s')
ALLOCATION_READER = _any(SYSTEM_READER,
                         'role:reader and project_id:%(allocation.owner)s')
ALLOCATION_CREATOR = _any(SYSTEM_MEMBER, 'role:member')
# a list narrowed to the caller's project
API_READER = '(role:reader) or (role:service)'
RUNBOOK_ADMIN = _any(SYSTEM_MEMBER,
                     'role:manager and project_id:%(runbook.owner)s',
                     'role:service')
RUNBOOK_READER = _any(SYSTEM_READER,
                      'role:reader and project_id:%(runbook.owner)s',
                      'role:service')
RUNBOOK_CREATOR = _any(SYSTEM_MEMBER, 'role:manager', 'role:service')

SYSTEM = ['system']
BOTH = ['system', 'project']

# name: (check, scope types, description)
_NODE_RULES = {
    'create': (_any(SYSTEM_ADMIN, SYSTEM_SERVICE), SYSTEM,
               'Create a node'),
    'create:self_owned_node': ('(role:admin) or (role:service)', BOTH,
                               'Create a node owned by the caller\'s '
                               'project'),
    'list': (API_READER, BOTH, 'List the nodes the project owns or '
             'leases'),
    'list_all': (SYSTEM_READER, BOTH, 'List every node'),
    'get': (SYSTEM_OR_PROJECT_READER, BOTH, 'Show a node'),
    'get:filter_threshold': (SYSTEM_READER, BOTH, 'Callers this rule '
                             'allows see a node\'s fields without the '
                             'get:* checks below'),
    'get:last_error': (SYSTEM_OR_OWNER_READER, BOTH,
                       'See a node\'s last_error'),
    'get:reservation': (SYSTEM_OR_OWNER_READER, BOTH,
                        'See which conductor holds a node\'s lock'),
    'get:driver_internal_info': (SYSTEM_OR_OWNER_READER, BOTH,
                                 'See a node\'s driver_internal_info'),
    'get:driver_info': (SYSTEM_OR_OWNER_READER, BOTH,
                        'See a node\'s driver_info (secrets stay masked)'),
    'update': (SYSTEM_OR_PROJECT_MEMBER, BOTH, 'Change a node\'s fields '
               'no update:* rule names'),
    'update_extra': (SYSTEM_OR_PROJECT_MEMBER, BOTH, 'Change extra'),
    'update_instance_info': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH,
                             'Change instance_info or instance_name'),
    'update_owner_provisioned': (SYSTEM_ADMIN, SYSTEM,
                                 'Change the owner of a provisioned node'),
    'update:driver_info': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                           'Change driver_info'),
    'update:properties': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                          'Change properties'),
    'update:chassis_uuid': (SYSTEM_ADMIN, BOTH, 'Change chassis_uuid'),
    'update:instance_uuid': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                             'Change instance_uuid'),
    'update:lessee': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                      'Change lessee'),
    'update:owner': (SYSTEM_MEMBER, BOTH, 'Change owner'),
    'update:driver_interfaces': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH,
                                 'Change driver or an *_interface'),
    'update:network_data': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                            'Change network_data'),
    'update:conductor_group': (SYSTEM_MEMBER, BOTH,
                               'Change conductor_group'),
    'update:name': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH, 'Change name'),
    'update:retired': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                       'Change retired'),
    'update:shard': (SYSTEM_ADMIN, BOTH, 'Change shard'),
    'update:parent_node': (SYSTEM_MEMBER, BOTH, 'Change parent_node'),
    'update:disable_power_off': (SYSTEM_ADMIN, BOTH,
                                 'Change disable_power_off'),
    'delete': (SYSTEM_ADMIN, BOTH, 'Delete a node'),
    'delete:self_owned_node': ('role:admin and project_id:%(node.owner)s',
                               BOTH, 'Delete a node the project owns'),
    'validate': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH,
                 'Validate a node\'s interfaces'),
    'set_maintenance': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH,
                        'Put a node in maintenance'),
    'clear_maintenance': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH,
                          'Take a node out of maintenance'),
    'get_boot_device': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH,
                        'Show the boot device'),
    'get_supported_boot_devices': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH,
                                   'List the supported boot devices'),
    'set_boot_device': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH,
                        'Set the boot device'),
    'get_indicator_state': (SYSTEM_OR_PROJECT_READER, BOTH,
                            'Show indicators'),
    'set_indicator_state': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                            'Set an indicator'),
    'inject_nmi': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH, 'Inject an NMI'),
    'get_states': (SYSTEM_OR_PROJECT_READER, BOTH, 'Show states'),
    'set_power_state': (SYSTEM_OR_PROJECT_MEMBER, BOTH,
                        'Change the power state'),
    'set_boot_mode': (SYSTEM_OR_PROJECT_MEMBER, BOTH,
                      'Change the boot mode'),
    'set_secure_boot': (SYSTEM_OR_PROJECT_MEMBER, BOTH,
                        'Change secure boot'),
    'set_provision_state': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH,
                            'Change the provision state'),
    'set_provision_state:clean_steps': (OWNER_MEMBER_OR_LESSEE_MANAGER,
                                        BOTH, 'Clean with given steps'),
    'set_provision_state:service_steps': (OWNER_MEMBER_OR_LESSEE_MANAGER,
                                          BOTH,
                                          'Service with given steps'),
    'set_raid_state': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                       'Set the target RAID configuration'),
    'get_console': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                    'Show the console'),
    'set_console_state': (SYSTEM_MEMBER_OR_OWNER_MEMBER, BOTH,
                          'Enable or disable the console'),
    'vif:list': (SYSTEM_OR_PROJECT_READER, BOTH, 'List VIFs'),
    'vif:attach': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH, 'Attach a VIF'),
    'vif:detach': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH, 'Detach a VIF'),
    'traits:list': (SYSTEM_OR_PROJECT_READER, BOTH, 'List traits'),
    'traits:set': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH, 'Set traits'),
    'traits:delete': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH,
                      'Remove traits'),
    'bios:get': (SYSTEM_OR_PROJECT_READER, BOTH, 'Show BIOS settings'),
    'clean_steps:get': (SYSTEM_OR_OWNER_READER, BOTH,
                        'Show the clean steps a node would run'),
    'disable_cleaning': (SYSTEM_ADMIN, BOTH, 'Set automated_clean to '
                         'false (no cleaning between workloads)'),
    'history:get': (SYSTEM_OR_OWNER_READER, BOTH, 'Show history'),
    'inventory:get': (SYSTEM_OR_OWNER_READER, BOTH, 'Show inventory'),
    'firmware:get': (SYSTEM_OR_PROJECT_READER, BOTH,
                     'Show firmware components'),
    'vmedia:attach': (SYSTEM_OR_PROJECT_MEMBER, BOTH,
                      'Attach virtual media'),
    'vmedia:detach': (SYSTEM_OR_PROJECT_MEMBER, BOTH,
                      'Detach virtual media'),
    'vmedia:get': (SYSTEM_OR_PROJECT_READER, BOTH,
                   'Show virtual media'),
    'vendor_passthru': (SYSTEM_ADMIN, BOTH, 'Node vendor passthru'),
    'ipa_heartbeat': ('', BOTH, 'Agent heartbeat'),
}

_PORTISH = {     # ports and port groups: by their node's project
    'get': (SYSTEM_OR_PROJECT_READER, BOTH, 'Show'),
    'list': (API_READER, BOTH, 'List those of the project\'s nodes'),
    'list_all': (SYSTEM_READER, BOTH, 'List all'),
    'create': (SYSTEM_ADMIN_OR_OWNER_MANAGER, BOTH, 'Create'),
    'delete': (SYSTEM_ADMIN_OR_OWNER_MANAGER, BOTH, 'Delete'),
    'update': (SYSTEM_MEMBER_OR_OWNER_MANAGER, BOTH, 'Change'),
}

_OTHER_RULES = {
    'volume': {
        'get': (SYSTEM_OR_PROJECT_READER, BOTH, 'Show'),
        'list': (API_READER, BOTH, 'List those of the project\'s nodes'),
        'list_all': (SYSTEM_READER, BOTH, 'List all'),
        'create': (SYSTEM_MEMBER_OR_PROJECT_MANAGER, BOTH, 'Create'),
        'delete': (SYSTEM_MEMBER_OR_PROJECT_MANAGER, BOTH, 'Delete'),
        'update': (OWNER_MEMBER_OR_LESSEE_MANAGER, BOTH, 'Change'),
        'view_target_properties': (_any(SYSTEM_READER, 'role:admin'),
                                   BOTH, 'See volume target properties'),
    },
    'allocation': {
        'get': (ALLOCATION_READER, BOTH, 'Show'),
        'list': (API_READER, BOTH, 'List the project\'s'),
        'list_all': (SYSTEM_READER, BOTH, 'List all'),
        'create': (ALLOCATION_CREATOR, BOTH, 'Create'),
        'create_restricted': (SYSTEM_MEMBER, BOTH,
                              'Create with another owner'),
        'delete': (ALLOCATION_MEMBER, BOTH, 'Delete'),
        'update': (ALLOCATION_MEMBER, BOTH, 'Change'),
    },
    'runbook': {
        'get': (RUNBOOK_READER, BOTH, 'Show'),
        'list': (API_READER, BOTH, 'List the project\'s and public ones'),
        'list_all': (SYSTEM_READER, BOTH, 'List all'),
        'create': (RUNBOOK_CREATOR, BOTH, 'Create'),
        'delete': (RUNBOOK_ADMIN, BOTH, 'Delete'),
        'update': (RUNBOOK_ADMIN, BOTH, 'Change'),
        'update:public': (SYSTEM_MEMBER, BOTH, 'Make public or private'),
        'update:owner': (SYSTEM_MEMBER, BOTH, 'Change the owner'),
        'use': (RUNBOOK_ADMIN + ' or %(runbook.public)s:True', BOTH,
                'Run on a node (manual cleaning or servicing)'),
    },
}

# system-only resources: read by system readers, changed by admins
_SYSTEM_RESOURCES = {
    'chassis': ('get', 'list', 'list_all', 'create', 'delete', 'update'),
    'deploy_template': ('get', 'list', 'list_all', 'create', 'delete',
                        'update'),
    'inspection_rule': ('get', 'list', 'list_all', 'create', 'delete',
                        'update'),
    'conductor': ('get', 'list', 'list_all'),
    'driver': ('get', 'get_properties',
               'get_raid_logical_disk_properties'),
    'events': ('create',),
}
# where Ironic lets system members (not only admins) change
_SYSTEM_MEMBER_CHANGES = {'baremetal:chassis:update'}


def _rules() -> list[policy.RuleDefault]:
    rules = [
        policy.RuleDefault(
            'service_role',
            'role:service and project_name:%(config.service_project_name)s',
            description='A service user of the service project (with '
                        '[DEFAULT]rbac_service_role_elevated_access): '
                        'system-member rights'),
        policy.RuleDefault('show_password', '!',
                           description='Show secrets in driver_info'),
        policy.RuleDefault('show_instance_secrets', '!',
                           description='Show secrets in instance_info'),
    ]
    tables = [('node', _NODE_RULES), ('port', _PORTISH),
              ('portgroup', _PORTISH)] + list(_OTHER_RULES.items())
    for res, table in tables:
        for action, (check, scopes, desc) in table.items():
            rules.append(policy.RuleDefault(
                'baremetal:%s:%s' % (res, action), check,
                description='%s (%s)' % (desc, res), scope_types=scopes))
    for res, actions in _SYSTEM_RESOURCES.items():
        for action in actions:
            name = 'baremetal:%s:%s' % (res, action)
            read = action.startswith(('get', 'list'))
            check = (SYSTEM_READER if read else SYSTEM_MEMBER
                     if name in _SYSTEM_MEMBER_CHANGES else SYSTEM_ADMIN)
            rules.append(policy.RuleDefault(
                name, check, scope_types=SYSTEM,
                description='%s %s' % ('Read' if read else 'Change', res)))
    rules += [
        policy.RuleDefault('baremetal:shards:get', SYSTEM_READER,
                           scope_types=SYSTEM, description='List shards'),
        policy.RuleDefault('baremetal:metrics:get', SYSTEM_READER,
                           scope_types=SYSTEM,
                           description='Read the Prometheus metrics'),
        # the change feed (GET /events): any reader; a project-scoped
        # one sees only the events of nodes its project owns or leases
        policy.RuleDefault('baremetal:events:get',
                           _any(SYSTEM_READER, 'role:reader'),
                           scope_types=BOTH,
                           description='Read the change feed of nodes '
                                       '(GET /events)'),
        policy.RuleDefault('baremetal:driver:vendor_passthru',
                           SYSTEM_ADMIN, scope_types=SYSTEM,
                           description='Driver vendor passthru'),
        policy.RuleDefault('baremetal:driver:ipa_lookup', '',
                           description='Agent lookup'),
    ]
    return rules


def list_rules():
    """The oslo.policy.policies entry point (sample generator)."""
    return _rules()


_enforcer: policy.Enforcer | None = None
_lock = threading.Lock()
# rules whose check names a row's project: checked against the row
_ROW_RULES = frozenset(r.name for r in _rules() if '%(' in r.check_str
                       and not r.name.startswith('service_role'))


def enforcer() -> policy.Enforcer:
    global _enforcer
    with _lock:
        if _enforcer is None:
            _enforcer = policy.Enforcer(cfg.CONF)
            _enforcer.register_defaults(_rules())
        return _enforcer


def _config_args(argv: list[str]) -> list[str]:
    """The ``--config-file`` and ``--config-dir`` arguments of a command
    line (``--name value`` or ``--name=value``), nothing else."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        name, eq, _ = arg.partition('=')
        if name in ('--config-file', '--config-dir'):
            out.append(arg)
            if not eq:
                out.append(next(args, ''))
    return out


def get_enforcer() -> policy.Enforcer:
    """The oslo.policy.enforcer entry point: the enforcer this service
    uses, for oslo.policy's tools (``oslopolicy-policy-generator
    --namespace baremetal.api [--config-file baremetal.conf]``).  The
    configuration is read as the service reads it (the files named on
    the tool's command line, else the default ones), so
    ``[oslo_policy]policy_file`` and its overrides are those in force."""
    cfg.CONF(_config_args(sys.argv[1:]), project='baremetal')
    return enforcer()


def _is_admin(ctx) -> bool:
    """noauth and http_basic callers: every check passes."""
    return ctx is not None and getattr(ctx, 'is_admin', False) and \
        'admin' in (ctx.roles or [])


def _creds(ctx) -> dict:
    creds = ctx.to_policy_values()
    creds['project_name'] = getattr(ctx, 'project_name', None)
    conf = cfg.CONF
    if conf.rbac_service_role_elevated_access and \
            conf.rbac_service_project_name:
        creds['config.service_project_name'] = \
            conf.rbac_service_project_name
    return creds


def allows(req, rule: str, target: dict | None = None) -> bool:
    ctx = req.context
    if ctx is None or _is_admin(ctx):
        return True
    creds = _creds(ctx)
    full = dict(creds)
    full.update(target or {})
    try:
        return bool(enforcer().enforce(rule, full, creds))
    except policy.InvalidScope:
        return False


def _denied(rule: str) -> exception.NotAuthorized:
    return exception.NotAuthorized(
        'Access was denied to the following resource: %s' % rule)


def project_scoped(req) -> bool:
    ctx = req.context
    return bool(ctx is not None and not _is_admin(ctx)
                and getattr(ctx, 'project_id', None))


def authorize(req, rule: str, target: dict | None = None) -> None:
    """403 unless ``rule`` allows the caller.  A row rule without its
    target, asked by a project-scoped caller, waits for ``check_row``."""
    if target is None and rule in _ROW_RULES and project_scoped(req):
        req.pending_rules.append(rule)
        return
    if not allows(req, rule, target):
        raise _denied(rule)


def node_target(row: dict) -> dict:
    return {'node.owner': row.get('owner'), 'node.lessee': row.get('lessee')}


def _sees_every_row(req) -> bool:
    """No credentials (noauth) or an admin's: every row is visible and
    every rule waiting on the request allows it."""
    ctx = req.context
    if ctx is None or _is_admin(ctx):
        req.pending_rules.clear()
        return True
    return False


def check_row(req, get_rule: str, target: dict,
              not_found: Exception, extra_rules=()) -> None:
    """The row is hidden (``not_found``) unless ``get_rule`` allows the
    caller; then every rule waiting on the request and ``extra_rules``
    must allow it (403)."""
    if _sees_every_row(req):
        return
    if not allows(req, get_rule, target):
        raise not_found
    # the waiting rules about this kind of row (a node's for a node,
    # port, port group or volume row; an allocation's for an allocation)
    kind = 'allocation' if 'allocation.owner' in target else 'node'
    mine = [r for r in req.pending_rules
            if (r.startswith('baremetal:allocation:')) == (
                kind == 'allocation')]
    req.pending_rules[:] = [r for r in req.pending_rules if r not in mine]
    pending = mine + list(extra_rules)
    for rule in pending:
        if not allows(req, rule, target):
            raise _denied(rule)


def check_node(req, rule: str, row: dict, extra_rules=()) -> None:
    """A node row: 404 unless the caller may see it, then 403 unless the
    waiting rules (and ``extra_rules``) allow it."""
    if _sees_every_row(req):
        return      # without building the target and the 404
    check_row(req, rule, node_target(row),
              exception.NodeNotFound(node=row.get('uuid')), extra_rules)


def list_project(req, resource: str, asked: str | None = None
                 ) -> str | None:
    """None: the caller lists every row; else the project whose rows it
    lists (``asked``: a project filter in the query, which may only name
    the caller's own)."""
    if allows(req, 'baremetal:%s:list_all' % resource):
        return None
    project = getattr(req.context, 'project_id', None)
    rule = 'baremetal:%s:list' % resource
    if not project or (asked and asked != project):
        raise _denied('baremetal:%s:list_all' % resource)
    if not allows(req, rule):
        raise _denied(rule)
    return project


_REDACTED = {
    'driver_info': {'content': '** Redacted - requires baremetal:node:get:'
                               'driver_info permission. **'},
    'driver_internal_info': {'content': '** Redacted - Requires '
                                        'baremetal:node:get:'
                                        'driver_internal_info '
                                        'permission. **'},
    'last_error': '** Value Redacted - Requires baremetal:node:get:'
                  'last_error permission. **',
    'reservation': '** Redacted - requires baremetal:node:get:'
                   'reservation permission. **',
}


def node_redactor(req):
    """None when the caller sees every node field; else a function
    (row, rendered node) -> None hiding what the node:get:* rules refuse
    for that node (the row needs ``owner`` and ``lessee``)."""
    if not project_scoped(req) or \
            allows(req, 'baremetal:node:get:filter_threshold'):
        return None

    def redact(row: dict, out: dict) -> None:
        target = node_target(row)
        for field, hidden in _REDACTED.items():
            if field in out and not allows(
                    req, 'baremetal:node:get:%s' % field, target):
                out[field] = hidden
    return redact


def events_project(req) -> str | None:
    """The change feed as the node list: None, the caller sees every
    node's events; else the project whose owned or leased nodes' events
    it sees (as they were owned or leased at the time)."""
    return list_project(req, 'node')
