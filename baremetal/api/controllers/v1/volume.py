"""/v1/volume (1.32): volume connectors and targets, also under
/v1/nodes/{node}/volume."""


from baremetal.api import notify
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import versions
from baremetal.api.controllers.v1 import nodes
from baremetal.api.routing import route
from baremetal.api.schemas import volume as volume_schema
from baremetal.common import exception
from baremetal.common import states
from baremetal.db import rows as db_rows
from baremetal.db import volume as db_volume

_CONNECTOR_TYPES = ('iqn', 'ip', 'mac', 'wwnn', 'wwpn', 'port', 'portgroup')
# a target's boot_index is a 32-bit column in PostgreSQL and MySQL
BOOT_INDEX_MAX = 2 ** 31 - 1


def _derive(rows):
    by_id = resource.node_uuid_map(rows)

    def extra(r):
        out = {'node_uuid': by_id.get(r.get('node_id')),
               'extra': r.get('extra') or {}}
        if 'properties' in r:
            out['properties'] = r.get('properties') or {}
        return out
    return extra


# Ironic 39's volume resources refuse ?detail=true with ?fields= so
VOLUME_DETAIL_AND_FIELDS = "Can't fetch a subset of fields with 'detail' set"

CONNECTORS = resource.Resource(
    project_scope='node',
    name='volume/connectors', singular='volume',
    rows=db_volume.CONNECTORS,
    fields=('uuid', 'type', 'connector_id', 'node_uuid', 'extra',
            'created_at', 'updated_at'),
    list_fields=('uuid', 'type', 'connector_id', 'node_uuid'),
    field_versions={}, ident_label='connector', derive=_derive,
    collection_key='connectors',
    detail_since=versions.VOLUME,
    detail_and_fields=VOLUME_DETAIL_AND_FIELDS,
    sort_keys=frozenset(('id', 'uuid', 'type', 'connector_id',
                         'created_at', 'updated_at')),
    body_schema=volume_schema.CONNECTOR_BODY)
TARGETS = resource.Resource(
    project_scope='node',
    name='volume/targets', singular='volume', rows=db_volume.TARGETS,
    fields=('uuid', 'volume_type', 'properties', 'boot_index', 'volume_id',
            'node_uuid', 'extra', 'created_at', 'updated_at'),
    list_fields=('uuid', 'volume_type', 'boot_index', 'volume_id',
                 'node_uuid'),
    field_versions={}, ident_label='target', derive=_derive,
    collection_key='targets',
    detail_since=versions.VOLUME,
    detail_and_fields=VOLUME_DETAIL_AND_FIELDS,
    sort_keys=frozenset(('id', 'uuid', 'volume_type', 'boot_index',
                         'volume_id', 'created_at', 'updated_at')),
    body_schema=volume_schema.TARGET_BODY)


# Ironic's: a node whose volume information may be deleted powered on
_DELETE_POWERED_ON = frozenset((states.MANAGEABLE, states.ENROLL,
                                states.ADOPTFAIL))


def _node_may_change(node_id: int, action: str | None) -> None:
    """As Ironic: a node's volume information is updated only while it
    is powered off, and deleted only while it is powered off or in
    ``manageable``, ``enroll`` or ``adopt failed`` (400 otherwise);
    a node busy with another task is waited for a little, then 409."""
    row = nodes.unlocked_row(node_id, ('power_state', 'provision_state'))
    if action is None or row['power_state'] == states.POWER_OFF:
        return
    if action.endswith('deletion') and \
            row['provision_state'] in _DELETE_POWERED_ON:
        return
    raise exception.InvalidStateRequested(
        action=action, node=row['uuid'], state=row['power_state'])


def _check(req, values: dict, kind: str, move_rules=()) -> dict:
    out = {}
    for k, v in values.items():
        if k == 'node_uuid':
            out['node_id'] = resource.node_id_for(v, req=req,
                                                  rules=move_rules)
        elif k == 'uuid':
            if not db_rows.is_uuid_like(v):
                raise exception.InvalidUUID(uuid=v)
            out[k] = v
        elif k in ('extra', 'properties'):
            if v is not None and not isinstance(v, dict):
                raise exception.InvalidParameterValue(
                    err='%s must be a JSON object' % k)
            out[k] = v or {}
        elif k == 'type':
            if v not in _CONNECTOR_TYPES:
                raise exception.InvalidParameterValue(
                    err='Invalid connector type %r; valid: %s'
                    % (v, ', '.join(_CONNECTOR_TYPES)))
            out[k] = v
        elif k == 'boot_index':
            if isinstance(v, bool) or not isinstance(v, int) or \
                    not 0 <= v <= BOOT_INDEX_MAX:
                raise exception.InvalidParameterValue(
                    err='boot_index must be an integer from 0 to %d'
                    % BOOT_INDEX_MAX)
            out[k] = v
        elif k in ('connector_id', 'volume_type', 'volume_id'):
            if not isinstance(v, str) or not v:
                raise exception.InvalidParameterValue(
                    err='%s must be a non-empty string' % k)
            out[k] = v
    return out


def _register(res: resource.Resource, kind: str, required: tuple) -> None:
    base = '/v1/%s' % res.name
    minv = versions.VOLUME
    noun = kind[:-1]                # 'connector', 'target'
    what = 'volume' + noun          # in notifications: Ironic's names

    def filters(req):
        node = req.params.get('node')
        if node:
            row = nodes.get_row(req, node, ('id', 'uuid', 'owner',
                                            'lessee'))
            return [db_volume.on_node(res.rows, row['id'])]
        return []

    @route('GET', base, min_version=minv)
    def list_all(req):
        return res.list(req, filters(req))

    @route('GET', base + '/{ident}', min_version=minv)
    def show(req, ident):
        return res.show(req, ident)

    @route('GET', '/v1/nodes/{node}/volume/' + kind, min_version=minv)
    def by_node(req, node):
        row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
        return res.list(req, [db_volume.on_node(res.rows, row['id'])],
                        path='nodes/%s/volume/%s' % (node, kind))

    @route('POST', base, status=201, min_version=minv)
    def create(req):
        policy.authorize(req, 'baremetal:volume:create')
        body = req.json_object()
        res.check_body(req, body, set(res.fields) - {
            'created_at', 'updated_at'})
        missing = [k for k in required if k not in body]
        if missing:
            raise exception.MissingParameterValue(
                err='Missing mandatory field(s): %s' % ', '.join(missing))
        values = _check(req, body, kind)
        _node_may_change(values['node_id'], None)
        with notify.crud(req, what, 'create', values, _derive) as n:
            row = n.done(res.rows.create(values))
        return res.created(req, row)

    @route('PATCH', base + '/{ident}', min_version=minv)
    def patch(req, ident):
        policy.authorize(req, 'baremetal:volume:update')
        row = res.get_row(req, ident)
        changes = res.patched(req, row, mandatory=required)
        if changes:
            _node_may_change(row['node_id'], 'volume %s update' % noun)
            values = _check(req, changes, kind,
                            move_rules=('baremetal:volume:update',))
            with notify.crud(req, what, 'update', dict(row, **values),
                             _derive) as n:
                res.rows.update(row['id'], values)
                row = n.done(res.get_row(req, row['uuid']))
        return res.render(req, [row], res.visible(req.version))[0]

    @route('DELETE', base + '/{ident}', status=204, min_version=minv)
    def delete(req, ident):
        policy.authorize(req, 'baremetal:volume:delete')
        res.check_ident(ident, names=False)
        row = res.get_row(req, ident)
        _node_may_change(row['node_id'], 'volume %s deletion' % noun)
        with notify.crud(req, what, 'delete', row, _derive):
            res.rows.delete(row['id'])


_register(CONNECTORS, 'connectors', ('type', 'connector_id', 'node_uuid'))
_register(TARGETS, 'targets', ('volume_type', 'volume_id', 'boot_index',
                               'node_uuid'))


@route('GET', '/v1/volume', min_version=versions.VOLUME)
def volume_root(req):
    return {'connectors': req.links('volume', 'connectors'),
            'targets': req.links('volume', 'targets'),
            'links': req.links('volume')}


@route('GET', '/v1/nodes/{node}/volume', min_version=versions.VOLUME)
def node_volume(req, node):
    row = nodes.get_row(req, node, ('id', 'uuid', 'owner', 'lessee'))
    return {'connectors': req.links('nodes', row['uuid'], 'volume',
                                    'connectors'),
            'targets': req.links('nodes', row['uuid'], 'volume', 'targets'),
            'links': req.links('nodes', row['uuid'], 'volume')}
