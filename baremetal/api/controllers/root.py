"""Version documents: GET / and GET /v1 (no auth; clients poll them)."""

from baremetal.api import versions
from baremetal.api.routing import route

# an object, as Ironic answers (its API reference shows a list)
_MEDIA_TYPES = {'base': 'application/json',
                'type': 'application/vnd.openstack.ironic.v1+json'}


def _version(req) -> dict:
    return {'id': 'v1',
            'links': [{'href': '%s/v1/' % req.host_url, 'rel': 'self'}],
            'status': 'CURRENT',
            'min_version': versions.MIN_STRING,
            'version': versions.MAX_STRING}


@route('GET', '/', public=True)
def root(req):
    v = _version(req)
    return {'name': 'OpenStack Ironic API',
            'description': 'Ironic is an OpenStack project which aims to '
                           'provision baremetal machines.',
            'default_version': v, 'versions': [v]}


# resource -> the first version that lists it
_RESOURCES = (
    ('chassis', versions.MIN), ('nodes', versions.MIN),
    ('ports', versions.MIN), ('drivers', versions.MIN),
    ('portgroups', versions.PORTGROUPS),
    ('lookup', versions.LOOKUP_HEARTBEAT),
    ('heartbeat', versions.LOOKUP_HEARTBEAT),
    ('volume', versions.VOLUME), ('conductors', versions.CONDUCTORS),
    ('allocations', versions.ALLOCATIONS), ('events', versions.EVENTS),
    ('deploy_templates', versions.DEPLOY_TEMPLATES),
    ('shards', versions.SHARDS),
    ('continue_inspection', versions.CONTINUE_INSPECTION),
    ('runbooks', versions.RUNBOOKS),
)


@route('GET', '/v1', public=True)
def v1(req):
    out = {'id': 'v1',
           'links': [{'href': '%s/v1/' % req.host_url, 'rel': 'self'},
                     {'href': 'https://docs.openstack.org/ironic/latest/'
                              'contributor/webapi.html',
                      'rel': 'describedby', 'type': 'text/html'}],
           'media_types': _MEDIA_TYPES,
           'version': _version(req)}
    for r, minv in _RESOURCES:
        if req.allows(minv):
            out[r] = req.links(r)
    return out
