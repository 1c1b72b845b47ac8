"""/v1/runbooks (API 1.92): named lists of steps an operator or a
project member may run on a node for manual cleaning or servicing,
instead of giving the steps.  A runbook applies to a node that has a
trait of the runbook's name."""


from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import step_lists
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import api as db

RB = db.T['runbooks']
RBS = db.T['runbook_steps']
STEPS = step_lists.StepTable(RBS, RB, 'runbook_id', 'order', 'runbook')


RES = resource.Resource(
    name='runbooks', singular='runbook', table=RB,
    fields=('uuid', 'name', 'steps', 'disable_ramdisk', 'public', 'owner',
            'extra', 'created_at', 'updated_at'),
    list_fields=('uuid', 'name'), field_versions={},
    not_found=exception.RunbookNotFound, not_found_key='runbook',
    sort_keys=frozenset(('id', 'uuid', 'name', 'created_at',
                         'updated_at')),
    derive=STEPS.derive)


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
    return ((RB.c.owner == project) | RB.c.public.is_(True),)


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
    RES.check_body(req, body, {'uuid', 'name', 'steps', 'extra', 'public',
                               'owner', 'disable_ramdisk'})
    STEPS.check_name(body.get('name'))
    steps = STEPS.check_steps(body.get('steps'), 'clean', ordered=True)
    values = {'uuid': body.get('uuid'), 'name': body['name'],
              'extra': {}, 'public': False, 'disable_ramdisk': False}
    _check_flags(values, body)
    _check_public_owner(values)
    if body.get('uuid') is not None and not db.is_uuid_like(body['uuid']):
        raise exception.InvalidUUID(uuid=body['uuid'])
    row = db.create(RB, values)
    STEPS.save(row['id'], steps)
    return RES.created(req, row)


@route('PATCH', '/v1/runbooks/{runbook}', min_version=versions.RUNBOOKS)
def patch_runbook(req, runbook):
    policy.authorize(req, 'baremetal:runbook:update')
    row = RES.get_row(req, runbook)
    changes = RES.patched(req, row, mandatory=('name', 'steps'))
    values = {}
    if 'name' in changes:
        STEPS.check_name(changes['name'])
        values['name'] = changes['name']
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
    STEPS.delete(row['id'])


def steps_for_node(req, ident: str, node: dict, traits: list[str]
                   ) -> tuple[list[dict], bool]:
    """The steps of runbook ``ident`` for a provision verb on ``node``
    (checked: the caller may use it, the node has its trait); returns
    (steps in order, disable_ramdisk)."""
    row = RES.get_row(req, ident)
    policy.authorize(req, 'baremetal:runbook:use',
                     target={'runbook.owner': row['owner'],
                             'runbook.public': row['public']})
    if row['name'] not in traits:
        raise exception.InvalidParameterValue(
            err='Runbook %s (%s) does not apply to node %s: the node has '
                'no trait %s' % (row['uuid'], row['name'], node['uuid'],
                                 row['name']))
    steps = sorted(STEPS.steps_of([row['id']]).get(row['id'], []),
                   key=lambda s: s['order'])
    return ([{'interface': s['interface'], 'step': s['step'],
              'args': s['args']} for s in steps],
            bool(row['disable_ramdisk']))
