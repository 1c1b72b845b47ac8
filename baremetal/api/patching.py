"""JSON PATCH (RFC 6902, via jsonpatch) and field validation."""

import re
from typing import Any

import jsonpatch

from baremetal.api import versions
from baremetal.common import exception
from baremetal.db import chassis as db_chassis
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

_OPS = ('add', 'replace', 'remove')

NODE_READONLY = frozenset((
    'uuid', 'provision_state', 'target_provision_state', 'power_state',
    'target_power_state', 'provision_updated_at', 'reservation',
    'created_at', 'updated_at', 'clean_step', 'deploy_step',
    'driver_internal_info', 'last_error', 'console_enabled',
    'inspection_started_at', 'inspection_finished_at', 'raid_config',
    'target_raid_config', 'traits', 'conductor', 'allocation_uuid',
    'links', 'ports', 'portgroups', 'states', 'volume', 'fault',
    'boot_mode', 'secure_boot', 'service_step', 'health'))

_DICT = ('driver_info', 'extra', 'instance_info', 'properties',
         'network_data', 'target_raid_config')
_BOOL = ('automated_clean', 'protected', 'maintenance', 'retired',
         'disable_power_off', 'console_enabled', 'secure_boot')
# null leaves them unknown (the others' null is false)
_NULL_BOOL = frozenset(('automated_clean', 'secure_boot'))
_STR = {'name': 255, 'resource_class': 80, 'conductor_group': 255,
        'owner': 255, 'lessee': 255, 'description': 4096,
        'protected_reason': 65535, 'maintenance_reason': 65535,
        'retired_reason': 65535, 'driver': 255, 'shard': 255,
        'instance_name': 255}
# null clears them; an empty string is refused (as Ironic's schema)
_NOT_EMPTY = frozenset(('instance_name',))
_GROUP_RE = re.compile(r'^[a-zA-Z0-9_\-\.]*$')


def parse(body: Any) -> list[dict]:
    if not isinstance(body, list) or not body:
        raise exception.InvalidParameterValue(
            err='A JSON PATCH body must be a non-empty list of operations')
    for op in body:
        if not isinstance(op, dict) or op.get('op') not in _OPS or \
                not isinstance(op.get('path'), str) or \
                not op['path'].startswith('/'):
            raise exception.InvalidParameterValue(
                err='Invalid patch operation %r: each needs "op" (one of '
                    '%s) and a "path" starting with "/"'
                % (op, ', '.join(_OPS)))
        if op['op'] != 'remove' and 'value' not in op:
            raise exception.InvalidParameterValue(
                err="'add' and 'replace' operations need a value: %r" % op)
    return body


# a "~" in a JSON pointer starts an escape: "~0" is "~", "~1" is "/"
_ESCAPE_RE = re.compile(r'~(?![01])')


def _unescape(segment: str) -> str:
    return segment.replace('~1', '/').replace('~0', '~')


def root(path: str) -> str:
    """The top-level field a patch path names (escapes decoded)."""
    return _unescape(path.lstrip('/').split('/', 1)[0])


def check_escapes(path: str, version: int) -> None:
    """Keys holding "~" or "/" are reached with the JSON pointer escapes
    "~0" and "~1" from API 1.98; before, a path holds no "~" at all."""
    if '~' not in path:
        return
    if version < versions.PATCH_SPECIAL_KEYS:
        raise exception.InvalidParameterValue(
            err="Invalid patch path %r: '~' (the JSON pointer escapes ~0 "
                "and ~1) needs API version 1.%d or later"
            % (path, versions.PATCH_SPECIAL_KEYS))
    if _ESCAPE_RE.search(path):
        raise exception.InvalidParameterValue(
            err="Invalid patch path %r: '~' must be followed by 0 (for "
                "'~') or 1 (for '/')" % path)


def apply(doc: dict, ops: list[dict], version: int,
          readonly: frozenset = NODE_READONLY,
          field_versions: dict = versions.NODE_FIELDS,
          mandatory: tuple = ('driver',)) -> dict:
    for op in ops:
        check_escapes(op['path'], version)
        field = root(op['path'])
        # as Ironic: a field no version lets a PATCH change is a 400
        # first, a newer field a 406
        if field in readonly:
            raise exception.InvalidParameterValue(
                err="'/%s' is an internal attribute and can not be "
                    "updated" % field)
        if field_versions.get(field, 0) > version:
            raise exception.NotAcceptable(
                reason='Field %s needs API version 1.%d or later'
                % (field, field_versions[field]))
        if field not in doc:
            raise exception.PatchError(
                patch=op, reason='unknown attribute %s' % field)
        if op['op'] == 'remove' and op['path'] == '/' + field and \
                field in mandatory:
            raise exception.InvalidParameterValue(
                err="'/%s' is a mandatory attribute and can not be "
                    "removed" % field)
    # 'add' on an existing top-level key behaves as replace; 'remove' of a
    # top-level attribute resets it to None
    normal = []
    for op in ops:
        if op['op'] == 'remove' and op['path'].count('/') == 1:
            normal.append({'op': 'replace', 'path': op['path'],
                           'value': None})
        else:
            normal.append(op)
    try:
        return jsonpatch.apply_patch(doc, normal)
    except (jsonpatch.JsonPatchException,
            jsonpatch.JsonPointerException, KeyError, IndexError,
            TypeError) as e:
        raise exception.PatchError(patch=ops, reason=str(e)) from None


def to_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ('true', '1', 'yes', 'on', 't', 'y'):
            return True
        if v in ('false', '0', 'no', 'off', 'f', 'n'):
            return False
    # Ironic's words (oslo.utils' strict bool_from_string)
    raise exception.InvalidParameterValue(
        err="Invalid %s: Unrecognized value '%s', acceptable values are: "
            "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', "
            "'y', 'yes'" % (name, value))


def check_types(values: dict) -> dict:
    """Validate common field types; returns cleaned values."""
    out = dict(values)
    for k, v in values.items():
        if k in _DICT:
            if v is None:
                out[k] = {} if k != 'target_raid_config' else None
            elif not isinstance(v, dict):
                raise exception.InvalidParameterValue(
                    err='%s must be a JSON object, got %r' % (k, v))
        elif k in _BOOL:
            if v is None and k in _NULL_BOOL:
                continue
            # clients (python-ironicclient) send "True"/"false" strings;
            # Ironic accepts them, so do we
            out[k] = False if v is None else to_bool(k, v)
        elif k in _STR:
            if v is None:
                continue
            if not isinstance(v, str) or len(v) > _STR[k] or \
                    (k in _NOT_EMPTY and not v):
                raise exception.InvalidParameterValue(
                    err='%s must be a string of %s characters'
                    % (k, ('1 to %d' if k in _NOT_EMPTY else 'at most %d')
                       % _STR[k]))
        elif k == 'instance_uuid' and v is not None:
            if not db_rows.is_uuid_like(v):
                raise exception.InvalidUUID(uuid=v)
        elif k.endswith('_interface') and v is not None and \
                not isinstance(v, str):
            raise exception.InvalidParameterValue(
                err='%s must be a string' % k)
    if 'conductor_group' in out and out['conductor_group'] is None:
        out['conductor_group'] = ''
    if out.get('conductor_group') is not None:
        if not _GROUP_RE.match(out['conductor_group']):
            raise exception.InvalidParameterValue(
                err='Invalid conductor_group %r: letters, digits, "_", '
                    '"-" and "." only' % out['conductor_group'])
        out['conductor_group'] = out['conductor_group'].lower()
    return out


def validate_node_fields(req, body: dict) -> dict:
    values = check_types(body)
    values.pop('chassis_uuid', None)
    if body.get('chassis_uuid'):
        values['chassis_id'] = db_chassis.ROWS.get(
            body['chassis_uuid'])['id']
    if body.get('parent_node') is not None:
        values['parent_node'] = parent_uuid(body['parent_node'])
    return values


def parent_uuid(ident: Any, node_uuid: str | None = None) -> str | None:
    """The UUID of the node named or identified by ``ident`` (a node's
    parent_node, API 1.83); 400 if there is none."""
    if ident is None:
        return None
    if not isinstance(ident, str) or len(ident) > 255:
        raise exception.InvalidParameterValue(
            err='parent_node must be a node UUID or name, got %r' % ident)
    try:
        row = db_nodes.get_node(ident, ('uuid',))
    except exception.NodeNotFound:
        raise exception.InvalidParameterValue(
            err='parent_node %s: no such node' % ident) from None
    if row['uuid'] == node_uuid:
        raise exception.InvalidParameterValue(
            err='a node cannot be its own parent_node')
    return row['uuid']


def node_changes(req, obj, before: dict, after: dict) -> dict:
    changes = {k: v for k, v in after.items() if before.get(k) != v}
    unknown = set(after) - set(before)
    if unknown:
        raise exception.PatchError(patch=sorted(unknown),
                                   reason='unknown attribute')
    changes = check_types(changes)
    if changes.get('parent_node') is not None:
        changes['parent_node'] = parent_uuid(changes['parent_node'],
                                             obj.uuid)
    return changes
