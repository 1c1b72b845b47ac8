"""/v1/nodes: list, show, create, update, delete."""

import re

from baremetal.api import collection
from baremetal.api import hardware
from baremetal.api import notify
from baremetal.api import patching
from baremetal.api import policy
from baremetal.api import schemas
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_json_sql
from baremetal.api.controllers.v1 import node_view
from baremetal.api.routing import route
from baremetal.api.schemas import nodes as node_schemas
from baremetal.common import exception
from baremetal.common import node_locks
from baremetal.common import retirement
from baremetal.common import state_machine
from baremetal.common import states
from baremetal.db import chassis as db_chassis
from baremetal.db import nodes as db_nodes
from baremetal.db import projects
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits
from baremetal import objects


_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]{1,255}$')
_OLD_NAME_RE = re.compile(r'^[a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?'
                          r'(\.[a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}'
                          r'[a-zA-Z0-9])?)*$')

SORT_KEYS = {'id', 'uuid', 'name', 'driver', 'provision_state',
             'power_state', 'target_provision_state', 'target_power_state',
             'created_at', 'updated_at', 'provision_updated_at',
             'maintenance', 'instance_uuid', 'resource_class',
             'conductor_group', 'owner', 'fault', 'retired', 'protected',
             'inspection_started_at', 'inspection_finished_at', 'reservation',
             'chassis_id', 'console_enabled', 'automated_clean',
             'description'} | {'%s_interface' % i
                               for i in hardware.INTERFACE_TYPES}

# filter param -> (min version, how it filters)
_FILTER_VERSIONS = {
    'provision_state': versions.PROVISION_STATE_FILTER,
    'driver': versions.DRIVER_FILTER,
    'resource_class': versions.RESOURCE_CLASS,
    'fault': versions.FAULT,
    'conductor_group': versions.CONDUCTOR_GROUP,
    'conductor': versions.CONDUCTORS,
    'owner': versions.OWNER,
    'description_contains': versions.DESCRIPTION,
    'retired': versions.RETIRED,
    'lessee': versions.LESSEE,
    'shard': versions.SHARDS,
    'sharded': versions.SHARDS,
    'parent_node': versions.CHILD_NODES,
    'include_children': versions.CHILD_NODES,
    'instance_name': versions.INSTANCE_NAME,
}

def check_name(req, name, node_uuid: str | None = None) -> None:
    """Ironic's words: on create ``Cannot create node with invalid name
    'x'``, on update ``Node <uuid>: Cannot change name to invalid name
    'x'``."""
    if name is None:
        return
    regex = (_NAME_RE if req.allows(versions.UNRESTRICTED_NAME)
             else _OLD_NAME_RE)
    if isinstance(name, str) and not db_rows.is_uuid_like(name) and \
            regex.match(name):
        return
    if node_uuid is None:
        raise exception.InvalidParameterValue(
            err="Cannot create node with invalid name '%s'" % name)
    raise exception.InvalidParameterValue(
        err="Node %s: Cannot change name to invalid name '%s'"
        % (node_uuid, name))


def _check_ident(req, ident: str) -> None:
    """Names identify nodes from 1.5 on; before, only UUIDs do."""
    if not req.allows(versions.NODE_NAME) and not db_rows.is_uuid_like(ident):
        raise exception.NodeNotFound(node=ident)


def get_row(req, ident: str, columns=None, extra_rules=()) -> dict:
    """A node by UUID, or by name from 1.5; 404 otherwise, or when the
    caller may not see it; 403 when a rule the handler asked for (or
    ``extra_rules``) refuses it."""
    _check_ident(req, ident)
    if columns is not None:
        columns = tuple(columns) + tuple(
            c for c in ('uuid', 'owner', 'lessee') if c not in columns)
    row = db_nodes.get_node(ident, columns)
    policy.check_node(req, 'baremetal:node:get', row, extra_rules)
    return row


def get_node(req, ident: str) -> objects.Node:
    return objects.Node(get_row(req, ident))


def _filters(req) -> list:
    p = req.params
    out = []
    for name, minv in _FILTER_VERSIONS.items():
        if name in p and not req.allows(minv):
            raise exception.NotAcceptable(
                reason='filter %s needs API version 1.%d or later'
                % (name, minv))
    if p.get('fault') and p['fault'] not in states.FAULTS:
        raise exception.InvalidParameterValue(
            err='Unknown fault %r; the faults are: %s'
            % (p['fault'], ', '.join(states.FAULTS)))
    if p.get('instance_uuid'):
        out.append(db_nodes.equals('instance_uuid', p['instance_uuid']))
    if p.get('instance_name'):
        out.append(db_nodes.equals('instance_name', p['instance_name']))
    assoc = collection.parse_bool('associated', p.get('associated'))
    if assoc is not None:
        out.append(db_nodes.associated(assoc))
    maint = collection.parse_bool('maintenance', p.get('maintenance'))
    if maint is not None:
        out.append(db_nodes.in_maintenance(maint))
    retired = collection.parse_bool('retired', p.get('retired'))
    if retired is not None:
        out.append(db_nodes.retired(retired))
    for key in ('provision_state', 'driver', 'resource_class', 'fault',
                'owner', 'lessee'):
        if p.get(key):
            out.append(db_nodes.equals(key, p[key]))
    if p.get('shard'):
        out.append(db_nodes.in_shards(
            [s for s in p['shard'].split(',') if s]))
    sharded = collection.parse_bool('sharded', p.get('sharded'))
    if sharded is not None:
        out.append(db_nodes.sharded(sharded))
    if not collection.parse_bool('include_children',
                                 p.get('include_children')):
        # child nodes (1.83) are listed only under their parent or when
        # asked for
        if p.get('parent_node'):
            out.append(db_nodes.equals('parent_node', p['parent_node']))
        else:
            out.append(db_nodes.without_parent())
    if 'conductor_group' in p:
        out.append(db_nodes.equals('conductor_group',
                                   p['conductor_group'].lower()))
    if p.get('description_contains'):
        out.append(db_nodes.description_contains(
            p['description_contains']))
    if p.get('chassis_uuid'):
        ch = db_chassis.ROWS.get(p['chassis_uuid'])
        out.append(db_nodes.equals('chassis_id', ch['id']))
    # a project's nodes: those it owns or leases (any caller may ask for
    # them; a project-scoped one gets only its own)
    asked = p.get('project') or None
    project = policy.list_project(req, 'node', asked) or asked
    if project:
        out.append(projects.nodes_of(project))
    return out


def list_nodes(req, detail: bool, extra_filters=(), resource='nodes'
               ) -> dict:
    fields = collection.shown(req, detail,
                              node_view.visible_fields(req.version),
                              node_view.visible_set(req.version),
                              versions.NODE_FIELDS, node_view.LIST_FIELDS)
    limit = collection.limit(req)
    sort_key, sort_dir = collection.sort(req, SORT_KEYS,
                                         versions.NODE_FIELDS)
    filters = _filters(req) + list(extra_filters)
    marker = None
    marker_key = 'uuid'
    ident = req.params.get('marker')
    # sorted by id, a UUID marker is found by the page's statement (one
    # round trip to the database a page instead of two)
    folded = sort_key == 'id' and db_rows.is_uuid_like(ident)
    if folded:
        marker = db_nodes.after_uuid(ident)
    elif ident:
        marker = db_nodes.get_node(ident, ('id', sort_key))
    conductor = req.params.get('conductor')
    redact = policy.node_redactor(req)
    if not conductor and not redact and node_json_sql.usable():
        # the database writes the nodes' JSON (see node_json_sql)
        page = node_json_sql.page(req, fields, sub_links=detail)
        # a client walking the list gets the next page read ahead
        rows = db_nodes.list_page(filters, None, limit, marker, sort_key,
                                  sort_dir, json_as_text=page.raw_columns,
                                  select=page.columns, tuples=True,
                                  read_ahead=folded)
        marker_key = 1      # rows are (id, uuid, the node's text, ...)
        nodes = page.render_page(rows)
    else:
        cols = node_view.db_columns(list(fields) + [sort_key])
        if redact:
            cols = sorted(set(cols) | {'owner', 'lessee'})
        if conductor:
            cols = sorted(set(cols) | {'driver', 'conductor_group'})
            rows = [r for r in db_nodes.list_page(filters, cols, None,
                                                  marker, sort_key, sort_dir)
                    if node_view.conductor_of(r) == conductor][:limit]
        else:
            rows = db_nodes.list_page(
                filters, cols, limit, marker, sort_key, sort_dir,
                json_as_text=node_view.PASSED_THROUGH)
        render = node_view.Renderer(req, fields,
                                    node_view.Lookups(rows, fields),
                                    sub_links=detail, columns=cols)
        nodes = [render(r) for r in rows]
        if redact:
            for r, out in zip(rows, nodes, strict=True):
                redact(r, out)
    if folded and not rows:
        # an empty page: the end of the list, or a marker of no node
        db_nodes.get_node(ident, ('id',))
    result = {'nodes': nodes}
    result.update(collection.next_link(req, resource, rows, limit,
                                       marker_key))
    return result


@route('GET', '/v1/nodes')
def get_all(req):
    return list_nodes(req, collection.detail_flag(req))


@route('GET', '/v1/nodes/detail')
def get_detail(req):
    if 'detail' in req.params:
        raise exception.InvalidParameterValue(
            err="'detail' is not allowed on /v1/nodes/detail")
    return list_nodes(req, True, resource='nodes/detail')


@route('GET', '/v1/nodes/{node}')
def get_one(req, node):
    visible = node_view.visible_fields(req.version)
    fields = collection.fields(req, node_view.visible_set(req.version),
                               versions.NODE_FIELDS)
    # an empty ?fields= shows the links alone, as in Ironic
    shown = visible if fields is None else fields
    if 'traits' in shown:
        # the hot path of clients polling a node: one statement
        _check_ident(req, node)
        row, traits = db_traits.get_node_with_traits(node)
        policy.check_node(req, 'baremetal:node:get', row)
        lookups = node_view.Lookups([row], shown, {row['id']: traits})
    else:
        row = get_row(req, node)
        lookups = None
    out = node_view.render(req, row, shown, lookups,
                           sub_links=fields is None)
    redact = policy.node_redactor(req)
    if redact:
        redact(row, out)
    return out


def _check_version_fields(req, body: dict) -> None:
    too_new = [k for k in body
               if versions.NODE_FIELDS.get(k, 0) > req.version]
    if too_new:
        raise exception.NotAcceptable(
            reason='Field(s) %s need a newer API version'
            % ', '.join(sorted(too_new)))


@route('POST', '/v1/nodes', status=201)
def post(req):
    self_owned = not policy.allows(req, 'baremetal:node:create')
    if self_owned:
        _check_self_owned(req)
    body = req.json()
    schemas.validate(node_schemas.create_validator, body, 'node')
    if self_owned:
        project = req.context.project_id
        if body.get('owner') not in (None, project):
            raise exception.NotAuthorized(
                'Cannot create a node owned by another project')
        body['owner'] = project
    for field in node_schemas.UUID_FIELDS:
        schemas.check_uuid(field, body.get(field))
    _check_version_fields(req, body)
    driver = body['driver']
    if not driver:
        raise exception.MissingParameterValue(
            err='Mandatory field missing: "driver"')
    check_name(req, body.get('name'))
    values = patching.validate_node_fields(req, body)
    _check_disable_cleaning(req, values)
    values.update(hardware.check_interfaces(driver, values))
    if values.get('retired_reason') and not values.get('retired'):
        raise exception.InvalidParameterValue(
            err='Cannot set retired_reason if node is not retired')
    values['provision_state'] = (states.ENROLL if req.allows(
        versions.ENROLL_STATE) else states.AVAILABLE)
    values['power_state'] = None
    values['provision_updated_at'] = None
    if values.get('protected') and values['provision_state'] not in (
            states.ACTIVE, states.RESCUE):
        raise exception.InvalidState(
            reason='Protected can only be set in the active or rescue '
                   'state')
    with notify.crud(req, 'node', 'create', values) as n:
        row = n.done(db_nodes.ROWS.create(values))
    req.response_headers['Location'] = req.link('nodes', row['uuid'])[
        'href']
    visible = node_view.visible_fields(req.version)
    # a node just created has no traits yet: nothing to look up
    lookups = node_view.Lookups([row], visible, traits={})
    return node_view.render(req, row, visible, lookups, sub_links=True)


def _check_self_owned(req) -> None:
    """A project-scoped caller whom node:create refuses may still create
    nodes its project owns (node:create:self_owned_node)."""
    rule = 'baremetal:node:create:self_owned_node'
    if not policy.project_scoped(req) or not policy.allows(req, rule):
        raise exception.NotAuthorized(
            'Access was denied to the following resource: '
            'baremetal:node:create')


# PATCH paths (by prefix) and the rule each needs, as Ironic's defaults
_PATCH_RULES = (
    ('/instance_info', 'update_instance_info'),
    ('/extra', 'update_extra'),
    ('/driver_info', 'update:driver_info'),
    ('/properties', 'update:properties'),
    ('/chassis_uuid', 'update:chassis_uuid'),
    ('/instance_uuid', 'update:instance_uuid'),
    ('/instance_name', 'update_instance_info'),
    ('/lessee', 'update:lessee'),
    ('/owner', 'update:owner'),
    ('/driver', 'update:driver_interfaces'),
    ('/network_data', 'update:network_data'),
    ('/conductor_group', 'update:conductor_group'),
    ('/name', 'update:name'),
    ('/retired', 'update:retired'),
    ('/shard', 'update:shard'),
    ('/parent_node', 'update:parent_node'),
    ('/disable_power_off', 'update:disable_power_off'),
)
_INTERFACE_PATHS = frozenset('/%s_interface' % i
                             for i in hardware.INTERFACE_TYPES)


def _is_false(value) -> bool:
    try:
        return collection.parse_bool('automated_clean', value) is False
    except exception.Invalid:
        return False     # the PATCH itself says what is wrong with it


def patch_rules(ops: list) -> list[str]:
    """The rules a node PATCH needs: one per path it touches, and
    node:update for any path without a rule of its own (or none)."""
    rules: list[str] = []
    generic = False
    for op in ops:
        path = op.get('path') or ''
        rule = next((r for prefix, r in _PATCH_RULES
                     if path.startswith(prefix)), None)
        if rule is None and path in _INTERFACE_PATHS:
            rule = 'update:driver_interfaces'
        if rule is None and path.startswith('/automated_clean') and \
                _is_false(op.get('value')):
            rule = 'disable_cleaning'
        if rule is None:
            generic = True
        elif 'baremetal:node:' + rule not in rules:
            rules.append('baremetal:node:' + rule)
    if generic or not rules:
        rules.append('baremetal:node:update')
    return rules


def _check_patchable(req, obj, ops) -> None:
    """As Ironic: no update while a state transition is in progress,
    except in the states that allow it (and removing instance_uuid from a
    node in maintenance); none while inspecting (from 1.39)."""
    if obj.maintenance and ops == [{'op': 'remove',
                                    'path': '/instance_uuid'}]:
        return
    if {op.get('path') for op in ops} <= {'/retired', '/retired_reason'}:
        return      # retiring is allowed in any state (retirement spec)
    if obj.target_provision_state and obj.provision_state not in \
            state_machine.UPDATE_ALLOWED_STATES:
        raise exception.Conflict(
            'Node %s can not be updated while a state transition is in '
            'progress.' % obj.uuid)
    if obj.provision_state == states.INSPECTING and \
            req.allows(versions.INSPECT_WAIT):
        raise exception.Conflict(
            'Cannot update node "%s" while it is in state "%s".'
            % (obj.uuid, states.INSPECTING))


@route('PATCH', '/v1/nodes/{node}')
def patch(req, node):
    ops = patching.parse(req.json())
    node_schemas.check_patch_paths(ops, req.version)
    reset = collection.parse_bool('reset_interfaces',
                                  req.params.get('reset_interfaces'))
    if reset is not None and not req.allows(versions.RESET_INTERFACES):
        raise exception.NotAcceptable(
            reason='reset_interfaces needs API version 1.45 or later')
    obj = objects.Node(get_row(req, node, extra_rules=patch_rules(ops)))
    _check_patchable(req, obj, ops)
    visible = node_view.visible_fields(req.version)
    current = node_view.render(req, obj.as_dict(), visible, links=False)
    # patch the unmasked values, not what the API shows
    for f in ('driver_info', 'instance_info'):
        current[f] = obj.as_dict().get(f) or {}
    # a removed driver is the schema's "required property" (as Ironic)
    updated = patching.apply(current, ops, req.version, mandatory=())
    if updated.get('name') != current.get('name'):
        check_name(req, updated.get('name'), obj.uuid)
    _validate_patched(current, updated, ops)
    changes = patching.node_changes(req, obj, current, updated)
    if not changes:
        return _patched_view(req, obj.as_dict(), visible)
    _check_disable_cleaning(req, changes, obj.as_dict())
    _check_update(req, obj, changes, bool(reset))
    _name_from_display_name(obj, changes)
    for k, v in changes.items():
        setattr(obj, k, v)

    def check(stored):
        """The node changed before the save: still patchable?"""
        _check_patchable(req, stored, ops)
        _check_update(req, stored, dict(changes), bool(reset))
    with notify.crud(req, 'node', 'update', obj):
        obj.save_unlocked(state.CONF, check=check)
    return _patched_view(req, obj.as_dict(), visible)


def _validate_patched(current: dict, updated: dict,
                      ops: list[dict]) -> None:
    """The patched node checked with the node schema, as Ironic does (a
    field a patch removes is absent, not null). Only what the patch
    changed (and the required driver) is checked: the rest was checked
    when it was written, and the result is the same for a fraction of
    the cost on the hot path."""
    doc = node_schemas.patched_document(current, updated, ops)
    description = doc.get('description')
    if isinstance(description, str) and len(description) > 4096:
        raise exception.InvalidParameterValue(
            err='Cannot update node with description exceeding 4096 '
                'characters')
    schemas.validate(node_schemas.patched_validator, doc, 'patch')
    for field in ('chassis_uuid', 'instance_uuid'):
        schemas.check_uuid(field, doc.get(field))


def _patched_view(req, row: dict, visible) -> dict:
    """The node a PATCH answers, redacted as a GET would be."""
    out = node_view.render(req, row, visible, sub_links=True)
    redact = policy.node_redactor(req)
    if redact:
        redact(row, out)
    return out


def _check_disable_cleaning(req, values: dict,
                            row: dict | None = None) -> None:
    """automated_clean false skips cleaning whatever the conductors'
    [conductor]automated_clean says: a policy of its own (as Ironic's)."""
    if values.get('automated_clean') is False:
        policy.authorize(req, 'baremetal:node:disable_cleaning',
                         {'node.owner': (row or values).get('owner'),
                          'node.lessee': (row or values).get('lessee')})


def _name_from_display_name(obj, changes: dict) -> None:
    """As Ironic (1.104): a change to instance_info naming a
    ``display_name`` (what Nova puts there) gives a node without an
    instance_name that name."""
    info = changes.get('instance_info')
    if 'instance_info' not in changes or not isinstance(info, dict):
        return
    name = info.get('display_name')
    current = changes.get('instance_name', obj.instance_name)
    if name and not current and isinstance(name, str):
        changes['instance_name'] = name[:255]


_IFACE_FIELDS = {'%s_interface' % i for i in hardware.INTERFACE_TYPES}
DRIVER_CHANGE_STATES = states.DRIVER_CHANGE_STATES


def _check_update(req, obj, changes: dict, reset: bool) -> None:
    node = obj
    if 'name' in changes:
        check_name(req, changes['name'], obj.uuid)
    touched = set(changes) & (_IFACE_FIELDS | {'driver'})
    if touched:
        if node.provision_state not in DRIVER_CHANGE_STATES and \
                not node.maintenance:
            raise exception.InvalidState(
                reason='Cannot change %s of node %s in state "%s"; it must '
                       'be in one of %s or in maintenance'
                % (', '.join(sorted(touched)), node.uuid,
                   node.provision_state, ', '.join(DRIVER_CHANGE_STATES)))
        driver = changes.get('driver', node.driver)
        # reset_interfaces: every interface not named in the patch goes
        # back to the (new) driver's default; otherwise they must suit it
        merged = {k: changes[k] if k in changes else
                  (None if reset else getattr(node, k))
                  for k in _IFACE_FIELDS}
        checked = hardware.check_interfaces(driver, merged)
        # a removed interface (null) goes back to the default too
        changes.update({k: v for k, v in checked.items()
                        if k in changes or v != getattr(node, k)})
    if 'instance_uuid' in changes:
        new = changes['instance_uuid']
        if new is not None and node.instance_uuid and \
                node.instance_uuid != new:
            raise exception.NodeAssociated(node=node.uuid,
                                           instance=node.instance_uuid)
    if 'maintenance' in changes and not changes['maintenance']:
        changes.setdefault('maintenance_reason', None)
        changes.setdefault('fault', None)
    if 'protected' in changes or 'protected_reason' in changes:
        prot = changes.get('protected', node.protected)
        if prot and 'protected' in changes and node.provision_state not in (
                states.ACTIVE, states.RESCUE):
            raise exception.InvalidState(
                reason='Protected can only be set in the active or rescue '
                       'state; node %s is "%s"'
                % (node.uuid, node.provision_state))
        if not prot:
            if changes.get('protected_reason'):
                raise exception.InvalidParameterValue(
                    err='Cannot set protected_reason without protected')
            changes['protected_reason'] = None
    if 'retired' in changes or 'retired_reason' in changes:
        retired = changes.get('retired', node.retired)
        if retired and changes.get('retired') and not node.retired:
            retirement.check_can_retire(node)
        if not retired:
            if changes.get('retired_reason'):
                raise exception.InvalidParameterValue(
                    err='Cannot set retired_reason if node is not retired')
            changes['retired_reason'] = None
    if 'chassis_uuid' in changes:
        cu = changes.pop('chassis_uuid')
        if cu is None:
            if not req.allows(versions.UNSET_CHASSIS):
                raise exception.NotAcceptable(
                    reason='unsetting chassis_uuid needs 1.25 or later')
            changes['chassis_id'] = None
        else:
            ch = db_chassis.ROWS.get(cu)
            changes['chassis_id'] = ch['id']


@route('DELETE', '/v1/nodes/{node}', status=204)
def delete(req, node):
    # the node first (404), then the rule (403), as Ironic; a project
    # admin may delete the nodes its project owns
    row = get_row(req, node)
    if not policy.allows(req, 'baremetal:node:delete') and \
            not policy.allows(req, 'baremetal:node:delete:self_owned_node',
                              policy.node_target(row)):
        raise exception.NotAuthorized(
            'Access was denied to the following resource: '
            'baremetal:node:delete')
    if row['protected']:
        raise exception.NodeProtected(node=row['uuid'])
    if row['instance_uuid']:
        raise exception.NodeAssociated(node=row['uuid'],
                                       instance=row['instance_uuid'])
    if row['provision_state'] not in state_machine.DELETE_ALLOWED_STATES \
            and not row['maintenance']:
        raise exception.InvalidState(
            reason='Can not delete node "%s" while it is in provision '
                   'state "%s". Valid provision states to perform deletion '
                   'are: %s, or set the node into maintenance mode'
            % (row['uuid'], row['provision_state'],
               ', '.join(sorted(state_machine.DELETE_ALLOWED_STATES))))
    with notify.crud(req, 'node', 'delete', row):
        node_locks.retrying(state.CONF, _destroy_unreserved, row)
    return None


def unlocked_row(node_id: int, columns=('uuid',)) -> dict:
    """The node's ``columns`` once no task holds it, waiting a little
    for one that does (common/node_locks.py); NodeLocked (409) else."""
    return node_locks.retrying(state.CONF, _unreserved_row, node_id,
                               tuple(columns))


def _unreserved_row(node_id: int, columns: tuple) -> dict:
    row = db_nodes.get_node(node_id, ('uuid', 'reservation') + columns)
    if row['reservation']:
        raise exception.NodeLocked(node=row['uuid'],
                                   host=row['reservation'])
    return row


def _destroy_unreserved(row) -> None:
    if not db_nodes.destroy_node(row['id'], only_unreserved=True):
        fresh = db_nodes.get_node(row['id'], ('uuid', 'reservation'))
        raise exception.NodeLocked(node=fresh['uuid'],
                                   host=fresh['reservation'])


@route('GET', '/v1/nodes/{node}/children', min_version=versions.CHILD_NODES)
def list_children(req, node):
    """The UUIDs of the nodes whose parent_node is this one (1.83)."""
    row = get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    kids = db_nodes.children(row['uuid'])
    return {'children': [k['uuid'] for k in kids],
            # one link, not a list (as Ironic has it)
            'links': {'href': '%s/v1/nodes?parent_node=%s'
                      % (req.host_url, row['uuid']), 'rel': 'children'}}
