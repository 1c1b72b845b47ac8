"""/v1/deploy_templates (1.55): named step lists matched by node traits."""

import re

from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.conductor import steps as steps_mod
from baremetal.db import api as db

DT = db.T['deploy_templates']
DTS = db.T['deploy_template_steps']
_TRAIT_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')


def _steps_of(ids: list[int]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    if not ids:
        return out
    for r in db.query(DTS, (DTS.c.deploy_template_id.in_(ids),)):
        out.setdefault(r['deploy_template_id'], []).append({
            'interface': r['interface'], 'step': r['step'],
            'args': r['args'] or {}, 'priority': r['priority']})
    return out


def _derive(rows):
    steps = _steps_of([r['id'] for r in rows])
    return lambda r: {'steps': steps.get(r['id'], []),
                      'extra': r.get('extra') or {}}


RES = resource.Resource(
    name='deploy_templates', singular='deploy_template', table=DT,
    fields=('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at'),
    list_fields=('uuid', 'name'), field_versions={},
    not_found=exception.DeployTemplateNotFound, not_found_key='template',
    sort_keys=frozenset(('id', 'uuid', 'name', 'created_at',
                         'updated_at')),
    derive=_derive)


def _check_name(name) -> None:
    if not isinstance(name, str) or len(name) > 255 or \
            not _TRAIT_RE.match(name):
        raise exception.InvalidParameterValue(
            err='Deploy template name must be a valid custom trait '
                '(CUSTOM_ followed by A-Z, 0-9 or _), got %r' % (name,))


def _check_steps(value) -> list[dict]:
    if not isinstance(value, list) or not value:
        raise exception.InvalidParameterValue(
            err='"steps" must be a non-empty list')
    steps = steps_mod.check_request_shape(value, 'deploy',
                                          require_priority=True)
    seen = set()
    for s in steps:
        key = (s['interface'], s['step'])
        if key in seen:
            raise exception.InvalidParameterValue(
                err='Duplicate deploy step %s.%s in the template' % key)
        seen.add(key)
    return steps


def _save_steps(template_id: int, steps: list[dict]) -> None:
    with db.writer() as conn:
        conn.execute(DTS.delete().where(
            DTS.c.deploy_template_id == template_id))
        conn.execute(DTS.insert(), [dict(s, deploy_template_id=template_id,
                                         created_at=db.utcnow())
                                    for s in steps])


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
    _check_name(body.get('name'))
    steps = _check_steps(body.get('steps'))
    if body.get('extra') is not None and not isinstance(body['extra'],
                                                        dict):
        raise exception.InvalidParameterValue(err='extra must be an object')
    if body.get('uuid') is not None and not db.is_uuid_like(body['uuid']):
        raise exception.InvalidUUID(uuid=body['uuid'])
    row = db.create(DT, {'uuid': body.get('uuid'), 'name': body['name'],
                         'extra': body.get('extra') or {}})
    _save_steps(row['id'], steps)
    return RES.created(req, row)


@route('PATCH', '/v1/deploy_templates/{template}',
       min_version=versions.DEPLOY_TEMPLATES)
def patch_template(req, template):
    policy.authorize(req, 'baremetal:deploy_template:update')
    row = RES.get_row(req, template)
    changes = RES.patched(req, row, mandatory=('name', 'steps'))
    values = {}
    if 'name' in changes:
        _check_name(changes['name'])
        values['name'] = changes['name']
    if 'extra' in changes:
        if changes['extra'] is not None and \
                not isinstance(changes['extra'], dict):
            raise exception.InvalidParameterValue(
                err='extra must be an object')
        values['extra'] = changes['extra'] or {}
    steps = _check_steps(changes['steps']) if 'steps' in changes else None
    if values:
        db.update(DT, row['id'], values)
    if steps is not None:
        _save_steps(row['id'], steps)
    row = RES.get_row(req, row['uuid'])
    return RES.render(req, [row], RES.visible(req.version))[0]


@route('DELETE', '/v1/deploy_templates/{template}', status=204,
       min_version=versions.DEPLOY_TEMPLATES)
def delete_template(req, template):
    policy.authorize(req, 'baremetal:deploy_template:delete')
    row = RES.get_row(req, template)
    with db.writer() as conn:
        conn.execute(DTS.delete().where(
            DTS.c.deploy_template_id == row['id']))
        conn.execute(DT.delete().where(DT.c.id == row['id']))
