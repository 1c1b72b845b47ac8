"""/v1/deploy_templates (1.55): named step lists matched by node traits."""


from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import step_lists
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.api.schemas import deploy_templates as dt_schema
from baremetal.db import deploy_templates as db_deploy_templates

STEPS = step_lists.StepTable(db_deploy_templates.STEPS, 'priority',
                             'deploy template')


RES = resource.Resource(
    name='deploy_templates', singular='deploy_template',
    rows=db_deploy_templates.ROWS,
    fields=('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at'),
    list_fields=('uuid', 'name'), field_versions={},
    sort_keys=frozenset(('id', 'uuid', 'name', 'created_at',
                         'updated_at')),
    derive=STEPS.derive, body_schema=dt_schema.BODY)


@route('GET', '/v1/deploy_templates', min_version=versions.DEPLOY_TEMPLATES)
def list_templates(req):
    return RES.list(req)


@route('GET', '/v1/deploy_templates/{template}',
       min_version=versions.DEPLOY_TEMPLATES)
def get_template(req, template):
    return RES.show(req, template)


@route('POST', '/v1/deploy_templates', status=201,
       min_version=versions.DEPLOY_TEMPLATES)
def create_template(req):
    policy.authorize(req, 'baremetal:deploy_template:create')
    body = req.json_object()
    RES.check_body(req, body, {'uuid', 'name', 'steps', 'extra'})
    STEPS.check_name(body.get('name'))
    steps = STEPS.check_steps(body.get('steps'), 'deploy',
                              require_priority=True)
    extra = resource.extra_of(body.get('extra'))
    values = {'uuid': body.get('uuid'), 'name': body['name'],
              'extra': extra}
    with notify.crud(req, 'deploy_template', 'create', values,
                     _given(steps)) as n:
        row = n.done(db_deploy_templates.ROWS.create(values))
        STEPS.save(row['id'], steps)
    return RES.created(req, row)


def _given(steps: list[dict]):
    """A ``derive`` showing ``steps`` (not yet stored) as the steps."""
    return lambda rows: lambda r: {'steps': steps}


@route('PATCH', '/v1/deploy_templates/{template}',
       min_version=versions.DEPLOY_TEMPLATES)
def patch_template(req, template):
    policy.authorize(req, 'baremetal:deploy_template:update')
    row = RES.get_row(req, template)
    changes = RES.patched(req, row, mandatory=('name', 'steps'))
    values = {}
    if 'name' in changes:
        STEPS.check_name(changes['name'])
        values['name'] = changes['name']
    if 'extra' in changes:
        values['extra'] = resource.extra_of(changes['extra'])
    steps = STEPS.check_steps(changes['steps'], 'deploy',
                              require_priority=True) \
        if 'steps' in changes else None
    with notify.crud(req, 'deploy_template', 'update', dict(row, **values),
                     STEPS.derive if steps is None else _given(steps)
                     ) as n:
        STEPS.update(row['id'], values, steps)
        row = n.done(RES.get_row(req, row['uuid']))
    return RES.view(req, row)


@route('DELETE', '/v1/deploy_templates/{template}', status=204,
       min_version=versions.DEPLOY_TEMPLATES)
def delete_template(req, template):
    policy.authorize(req, 'baremetal:deploy_template:delete')
    row = RES.get_row(req, template)
    with notify.crud(req, 'deploy_template', 'delete', row, STEPS.derive):
        STEPS.delete(row['id'])
