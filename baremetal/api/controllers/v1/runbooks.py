"""/v1/runbooks (API 1.92): named lists of steps an operator or a
project member may run on a node for manual cleaning or servicing,
instead of giving the steps.  From 1.112 a runbook has traits (see
runbook_traits.py) and a description, its name need not be a trait, and
it applies to a node that has one of its traits; before, it applies to
a node with a trait of the runbook's name."""

import re

from baremetal.api import patching
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import step_lists
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.api.schemas import runbooks as rb_schema
from baremetal.common import exception
from baremetal.db import runbooks as db_runbooks

STEPS = step_lists.StepTable(db_runbooks.STEPS, 'order', 'runbook')

# a name from 1.112 (and in any PATCH, as Ironic): what a URL can hold
# unescaped (RFC 3986 unreserved characters), 1 to 255 of them
_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]{1,255}$')
_DESCRIPTION_MAX = 255
_PATCHABLE = ('disable_ramdisk', 'extra', 'name', 'owner', 'public',
              'steps')


def _derive(rows):
    steps = STEPS.derive(rows)
    traits = db_runbooks.traits_of([r['id'] for r in rows])
    return lambda r: dict(steps(r), traits=traits.get(r['id'], []))


RES = resource.Resource(
    name='runbooks', singular='runbook', rows=db_runbooks.ROWS,
    fields=('uuid', 'name', 'description', 'steps', 'disable_ramdisk',
            'public', 'owner', 'extra', 'traits', 'created_at',
            'updated_at'),
    list_fields=('uuid', 'name'), field_versions=versions.RUNBOOK_FIELDS,
    sort_keys=frozenset(('id', 'uuid', 'name', 'created_at',
                         'updated_at')),
    derive=_derive)


def _check_name(req, name, relaxed: bool) -> None:
    """Before 1.112 a new runbook's name is a trait; from 1.112 (and in
    any PATCH) a short URL-safe string."""
    if not relaxed:
        STEPS.check_name(name)
    elif not isinstance(name, str) or not _NAME_RE.match(name):
        raise exception.InvalidParameterValue(
            err='Runbook name %r: 1 to 255 letters, digits, "-", ".", "_" '
                'or "~"' % (name,))


def _check_description(value) -> None:
    if value is not None and (not isinstance(value, str) or
                              len(value) > _DESCRIPTION_MAX):
        raise exception.InvalidParameterValue(
            err='description must be a string of at most %d characters'
            % _DESCRIPTION_MAX)


def _check_patch_paths(req) -> None:
    """As Ironic: only these fields (description from 1.112) may be
    patched; anything else is a 400."""
    allowed = _PATCHABLE + (('description',) if req.allows(
        versions.RUNBOOK_TRAITS) else ())
    for op in patching.parse(req.json()):
        patching.check_escapes(op['path'], req.version)
        root = patching.root(op['path'])
        if root not in allowed:
            raise exception.InvalidParameterValue(
                err='Cannot patch %s. Only the following can be updated: '
                    '%s' % (op['path'], ', '.join(allowed)))


def _check_flags(values: dict, changes: dict) -> None:
    for key in ('public', 'disable_ramdisk'):
        if key in changes:
            if not isinstance(changes[key], bool):
                raise exception.InvalidParameterValue(
                    err='%s must be a boolean, got %r'
                    % (key, changes[key]))
            values[key] = changes[key]
    if 'owner' in changes:
        if changes['owner'] is not None and (
                not isinstance(changes['owner'], str) or
                len(changes['owner']) > 255):
            raise exception.InvalidParameterValue(
                err='owner must be a string of at most 255 characters')
        values['owner'] = changes['owner']
    if 'extra' in changes:
        values['extra'] = resource.extra_of(changes['extra'])


def _check_public_owner(row: dict) -> None:
    if row.get('public') and row.get('owner'):
        raise exception.InvalidParameterValue(
            err='A public runbook cannot have an owner')


def _visible(req):
    """Project members see their project's and public runbooks."""
    try:
        policy.authorize(req, 'baremetal:runbook:list_all')
        return ()
    except exception.NotAuthorized:
        pass
    project = req.context.project_id
    return (db_runbooks.visible_to(project),)


@route('GET', '/v1/runbooks', min_version=versions.RUNBOOKS)
def list_runbooks(req):
    return RES.list(req, filters=_visible(req))


@route('GET', '/v1/runbooks/{runbook}', min_version=versions.RUNBOOKS)
def get_runbook(req, runbook):
    return RES.show(req, runbook)


@route('POST', '/v1/runbooks', status=201, min_version=versions.RUNBOOKS)
def create_runbook(req):
    policy.authorize(req, 'baremetal:runbook:create')
    body = req.json_object()
    allowed = {'uuid', 'name', 'steps', 'extra', 'public', 'owner',
               'disable_ramdisk'}
    new = req.allows(versions.RUNBOOK_TRAITS)
    if new:
        # traits are set through /traits, not here (a 400, as Ironic)
        allowed.add('description')
    rb_schema.body_for(req.version).check_create(body)
    RES.check_body(req, body, allowed)
    _check_name(req, body.get('name'), relaxed=new)
    steps = STEPS.check_steps(body.get('steps'), 'clean', ordered=True)
    _check_description(body.get('description'))
    values = {'uuid': body.get('uuid'), 'name': body['name'],
              'extra': {}, 'public': False, 'disable_ramdisk': False,
              'description': body.get('description')}
    _check_flags(values, body)
    _check_public_owner(values)
    row = db_runbooks.ROWS.create(values)
    STEPS.save(row['id'], steps)
    return RES.created(req, row)


@route('PATCH', '/v1/runbooks/{runbook}', min_version=versions.RUNBOOKS)
def patch_runbook(req, runbook):
    policy.authorize(req, 'baremetal:runbook:update')
    _check_patch_paths(req)
    row = RES.get_row(req, runbook)
    changes = RES.patched(req, row, mandatory=('name', 'steps'))
    values = {}
    if 'name' in changes:
        _check_name(req, changes['name'], relaxed=True)
        values['name'] = changes['name']
    if 'description' in changes:
        _check_description(changes['description'])
        values['description'] = changes['description']
    _check_flags(values, changes)
    _check_public_owner(dict(row, **values))
    steps = STEPS.check_steps(changes['steps'], 'clean', ordered=True) \
        if 'steps' in changes else None
    STEPS.update(row['id'], values, steps)
    row = RES.get_row(req, row['uuid'])
    return RES.view(req, row)


@route('DELETE', '/v1/runbooks/{runbook}', status=204,
       min_version=versions.RUNBOOKS)
def delete_runbook(req, runbook):
    policy.authorize(req, 'baremetal:runbook:delete')
    row = RES.get_row(req, runbook)
    db_runbooks.delete_traits(row['id'])
    STEPS.delete(row['id'])


def steps_for_node(req, ident: str, node: dict, traits: list[str]
                   ) -> tuple[list[dict], bool]:
    """The steps of runbook ``ident`` for a provision verb on ``node``
    (checked: the caller may use it, it applies to the node); returns
    (steps in order, disable_ramdisk)."""
    row = RES.get_row(req, ident)
    policy.authorize(req, 'baremetal:runbook:use',
                     target={'runbook.owner': row['owner'],
                             'runbook.public': row['public']})
    _check_applies(req, row, node, set(traits))
    steps = sorted(STEPS.steps_of([row['id']]).get(row['id'], []),
                   key=lambda s: s['order'])
    return ([{'interface': s['interface'], 'step': s['step'],
              'args': s['args']} for s in steps],
            bool(row['disable_ramdisk']))


def _check_applies(req, row: dict, node: dict, node_traits: set) -> None:
    """From 1.112 a node may use a runbook when it has at least one of
    the runbook's traits; before, when it has a trait of its name."""
    if not req.allows(versions.RUNBOOK_TRAITS):
        if row['name'] not in node_traits:
            raise exception.InvalidParameterValue(
                err='Runbook %s (%s) does not apply to node %s: the node '
                    'has no trait %s' % (row['uuid'], row['name'],
                                         node['uuid'], row['name']))
        return
    mine = set(db_runbooks.traits_of([row['id']]).get(row['id'], []))
    if not mine:
        raise exception.InvalidParameterValue(
            err='Runbook %s has no traits configured; an administrator '
                'adds them with PUT /v1/runbooks/%s/traits'
                % (row['uuid'], row['uuid']))
    if not mine & node_traits:
        raise exception.InvalidParameterValue(
            err='Runbook %s does not apply to node %s: the node has none '
                'of its traits %s' % (row['uuid'], node['uuid'],
                                      ', '.join(sorted(mine))))
