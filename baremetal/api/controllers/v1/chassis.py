"""/v1/chassis."""

from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.api.schemas import chassis as chassis_schema
from baremetal.common import exception
from baremetal.db import chassis as db_chassis
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows

RES = resource.Resource(
    name='chassis', singular='chassis', rows=db_chassis.ROWS,
    fields=('uuid', 'description', 'extra', 'created_at', 'updated_at'),
    list_fields=('uuid', 'description'), field_versions={},
    sort_keys=frozenset(('id', 'uuid', 'description', 'created_at',
                         'updated_at')),
    derive=lambda rows: (lambda r: {'extra': r.get('extra') or {}}),
    sub_links=('nodes',), body_schema=chassis_schema.BODY)


def _check(values: dict) -> dict:
    if 'description' in values and values['description'] is not None and \
            (not isinstance(values['description'], str) or
             len(values['description']) > 255):
        raise exception.InvalidParameterValue(
            err='description must be a string of at most 255 characters')
    if 'extra' in values:
        values['extra'] = resource.extra_of(values['extra'])
    if 'uuid' in values and not db_rows.is_uuid_like(values['uuid']):
        raise exception.InvalidUUID(uuid=values['uuid'])
    return values


@route('GET', '/v1/chassis')
def list_chassis(req):
    return RES.list(req)


@route('GET', '/v1/chassis/detail')
def list_chassis_detail(req):
    return RES.list(req, detail=True, path='chassis/detail')


@route('GET', '/v1/chassis/{chassis}')
def get_chassis(req, chassis):
    return RES.show(req, chassis)


@route('GET', '/v1/chassis/{chassis}/nodes')
def chassis_nodes(req, chassis):
    row = RES.get_row(req, chassis)
    return nodes.list_nodes(req, False,
                            [db_nodes.equals('chassis_id', row['id'])],
                            resource='chassis/%s/nodes' % chassis)


@route('POST', '/v1/chassis', status=201)
def create_chassis(req):
    policy.authorize(req, 'baremetal:chassis:create')
    body = req.json_object()
    RES.check_body(req, body, {'uuid', 'description', 'extra'})
    values = _check(dict(body))
    with notify.crud(req, 'chassis', 'create', values) as n:
        row = n.done(db_chassis.ROWS.create(values))
    return RES.created(req, row)


@route('PATCH', '/v1/chassis/{chassis}')
def patch_chassis(req, chassis):
    policy.authorize(req, 'baremetal:chassis:update')
    row = RES.get_row(req, chassis)
    changes = RES.patched(req, row)
    if changes:
        values = _check(changes)
        with notify.crud(req, 'chassis', 'update', dict(row, **values)
                         ) as n:
            db_chassis.ROWS.update(row['id'], values)
            row = n.done(RES.get_row(req, row['uuid']))
    return RES.view(req, row)


@route('DELETE', '/v1/chassis/{chassis}', status=204)
def delete_chassis(req, chassis):
    policy.authorize(req, 'baremetal:chassis:delete')
    row = RES.get_row(req, chassis)
    if db_nodes.count_in_chassis(row['id']):
        raise exception.InvalidState(
            reason='Chassis %s contains nodes.' % row['uuid'])
    with notify.crud(req, 'chassis', 'delete', row):
        db_chassis.ROWS.delete(row['id'])
