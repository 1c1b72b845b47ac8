"""/v1/conductors (1.49): membership and liveness."""

from baremetal.api import collection
from baremetal.api import policy
from baremetal.api import state
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.db import conductors as db_conductors

_LIST = ('hostname', 'conductor_group', 'alive')
_ALL = ('hostname', 'conductor_group', 'alive', 'drivers', 'created_at',
        'updated_at')


def _view(req, row: dict, alive: set, fields) -> dict:
    full = {'hostname': row['hostname'],
            'conductor_group': row['conductor_group'] or '',
            'alive': row['hostname'] in alive,
            'drivers': row['drivers'] or [],
            'created_at': node_view.iso(row['created_at']),
            'updated_at': node_view.iso(row['updated_at'])}
    out = {f: full[f] for f in fields}
    out['links'] = req.links('conductors', row['hostname'])
    return out


def _alive() -> set:
    return {c['hostname'] for c in db_conductors.live_conductors(
        state.CONF.conductor.heartbeat_timeout)}


@route('GET', '/v1/conductors', min_version=versions.CONDUCTORS)
def list_conductors(req):
    policy.authorize(req, 'baremetal:conductor:get')
    detail = collection.detail_flag(req)
    fields = collection.shown(req, detail, _ALL, set(_ALL), {}, _LIST)
    limit = collection.limit(req)
    rows = db_conductors.list_conductors()
    marker = req.params.get('marker')
    if marker:
        rows = [r for r in rows if r['hostname'] > marker]
    rows = rows[:limit]
    alive = _alive()
    out = {'conductors': [_view(req, r, alive, fields) for r in rows]}
    out.update(collection.next_link(req, 'conductors', rows, limit,
                                    'hostname'))
    return out


@route('GET', '/v1/conductors/{hostname}', min_version=versions.CONDUCTORS)
def get_conductor(req, hostname):
    policy.authorize(req, 'baremetal:conductor:get')
    fields = collection.fields(req, set(_ALL), {})
    for r in db_conductors.list_conductors():
        if r['hostname'] == hostname:
            return _view(req, r, _alive(),
                         _ALL if fields is None else fields)
    raise exception.ConductorNotFound(conductor=hostname)
