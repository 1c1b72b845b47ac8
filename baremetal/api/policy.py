"""Access policy (oslo.policy) with Ironic's rule names and roles.

Defaults live in code; ``tox -e genpolicy`` writes the sample file.
System admins and the ``service`` role may do everything; project
members act on nodes their project owns or leases; readers may only
read.  With ``auth_strategy = noauth`` every caller is an admin.
"""

import threading

from oslo_config import cfg
from oslo_policy import policy

from baremetal.common import exception
from baremetal.db import api as db

ADMIN = 'role:admin or role:service'
SYSTEM_READER = '(role:reader and system_scope:all) or ' + ADMIN
PROJECT_MEMBER = ('(role:member and project_id:%(node.owner)s) or '
                  '(role:member and project_id:%(node.lessee)s)')
PROJECT_READER = ('(role:reader and project_id:%(node.owner)s) or '
                  '(role:reader and project_id:%(node.lessee)s)')
READ = '%s or %s' % (SYSTEM_READER, PROJECT_READER)
WRITE = '%s or %s' % (ADMIN, PROJECT_MEMBER)


def _rules():
    rules = [
        policy.RuleDefault('is_admin', ADMIN, 'Full access'),
    ]
    read = ('get', 'list', 'list_all', 'validate', 'get_boot_device',
            'get_supported_boot_devices', 'get_states', 'get_console',
            'vif:list', 'traits:list', 'bios:get', 'get_bios',
            'clean_steps:get', 'vendor_passthru', 'get_indicator_state',
            'history:get', 'inventory:get', 'vmedia:get', 'firmware:get')
    write = ('update', 'set_power_state', 'set_provision_state',
             'set_raid_state', 'set_console_state', 'set_boot_device',
             'inject_nmi', 'vif:attach', 'vif:detach', 'traits:set',
             'traits:delete', 'set_maintenance', 'clear_maintenance',
             'update_instance_info', 'update_extra', 'set_indicator_state',
             'set_boot_mode', 'set_secure_boot', 'vmedia:attach',
             'vmedia:detach')
    for name in read:
        rules.append(policy.RuleDefault('baremetal:node:%s' % name, READ,
                                        'Read a node (%s)' % name))
    for name in write:
        rules.append(policy.RuleDefault('baremetal:node:%s' % name, WRITE,
                                        'Change a node (%s)' % name))
    for name in ('create', 'delete'):
        rules.append(policy.RuleDefault('baremetal:node:%s' % name, ADMIN,
                                        'Create or delete nodes'))
    # a node whose automated_clean is false is not cleaned between
    # workloads: its owner or lessee may not decide that
    rules.append(policy.RuleDefault(
        'baremetal:node:disable_cleaning',
        '(role:member and system_scope:all) or ' + ADMIN,
        'Set a node\'s automated_clean to false (no cleaning between '
        'workloads)'))
    # the change feed (GET /events): any reader; a project-scoped one
    # sees only the events of nodes its project owns or leases
    rules.append(policy.RuleDefault(
        'baremetal:events:get', 'role:reader or ' + SYSTEM_READER,
        'Read the change feed of nodes (GET /events)'))
    for res in ('port', 'portgroup', 'chassis', 'driver', 'conductor',
                'allocation', 'deploy_template', 'volume', 'events',
                'runbook', 'inspection_rule'):
        for action in ('get', 'list', 'list_all'):
            if (res, action) == ('events', 'get'):
                continue
            rules.append(policy.RuleDefault(
                'baremetal:%s:%s' % (res, action), SYSTEM_READER,
                'Read %s' % res))
        for action in ('create', 'update', 'delete'):
            rules.append(policy.RuleDefault(
                'baremetal:%s:%s' % (res, action), ADMIN,
                'Change %s' % res))
    rules.append(policy.RuleDefault(
        'baremetal:runbook:use', ADMIN + ' or (role:member and '
        'project_id:%(runbook.owner)s) or (role:member and '
        '%(runbook.public)s:True)',
        'Run a runbook on a node (manual cleaning or servicing)'))
    rules.append(policy.RuleDefault('baremetal:shards:get', SYSTEM_READER,
                                    'List shards'))
    rules.append(policy.RuleDefault('baremetal:driver:get_properties',
                                    SYSTEM_READER, 'Driver properties'))
    rules.append(policy.RuleDefault('baremetal:driver:vendor_passthru',
                                    ADMIN, 'Driver vendor passthru'))
    rules.append(policy.RuleDefault('baremetal:driver:ipa_lookup',
                                    '@', 'Agent lookup'))
    rules.append(policy.RuleDefault('baremetal:node:ipa_heartbeat',
                                    '@', 'Agent heartbeat'))
    return rules


def list_rules():
    return _rules()


_enforcer: policy.Enforcer | None = None
_lock = threading.Lock()


def enforcer() -> policy.Enforcer:
    global _enforcer
    with _lock:
        if _enforcer is None:
            _enforcer = policy.Enforcer(cfg.CONF)
            _enforcer.register_defaults(_rules())
        return _enforcer


def _is_admin(ctx) -> bool:
    return ctx is not None and getattr(ctx, 'is_admin', False) and \
        'admin' in (ctx.roles or [])


def authorize(req, rule: str, target: dict | None = None) -> None:
    ctx = req.context
    if ctx is None or _is_admin(ctx):
        return
    creds = ctx.to_policy_values()
    if not enforcer().enforce(rule, target or {}, creds):
        raise exception.NotAuthorized(
            'Access was denied to the following resource: %s' % rule)


def check_node(req, rule: str, row: dict) -> None:
    ctx = req.context
    if ctx is None or _is_admin(ctx):
        return
    target = {'node.owner': row.get('owner'),
              'node.lessee': row.get('lessee')}
    try:
        authorize(req, rule, target)
    except exception.NotAuthorized:
        # do not reveal nodes of other projects
        raise exception.NodeNotFound(node=row.get('uuid')) from None


def _scoped_project(req) -> str | None:
    """The project a caller sees the nodes of (None: all nodes)."""
    ctx = req.context
    if ctx is None or _is_admin(ctx) or getattr(ctx, 'system_scope', None):
        return None
    project = getattr(ctx, 'project_id', None)
    if not project:
        raise exception.NotAuthorized('A project scope is required')
    return project


def events_project(req) -> str | None:
    """The change feed as the node list: a project-scoped caller sees
    only the events of nodes its project owned or leased at the time."""
    return _scoped_project(req)


def node_list_filters(req) -> list:
    """Project-scoped callers see only nodes they own or lease."""
    project = _scoped_project(req)
    if project is None:
        return []
    n = db.NODES
    from sqlalchemy import or_
    return [or_(n.c.owner == project, n.c.lessee == project)]
