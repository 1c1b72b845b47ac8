"""Version documents: GET / and GET /v1 (no auth; clients poll them)."""

from baremetal.api import versions
from baremetal.api.routing import route

_MEDIA_TYPES = [{'base': 'application/json',
                 'type': 'application/vnd.openstack.ironic.v1+json'}]


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


_RESOURCES = ('chassis', 'nodes', 'ports', 'drivers')


@route('GET', '/v1', public=True)
def v1(req):
    out = {'id': 'v1',
           'links': [{'href': '%s/v1/' % req.host_url, 'rel': 'self'},
                     {'href': 'https://docs.openstack.org/ironic/latest/'
                              'contributor/webapi.html',
                      'rel': 'describedby', 'type': 'text/html'}],
           'media_types': _MEDIA_TYPES,
           'version': _version(req)}
    resources = list(_RESOURCES)
    if req.allows(versions.PORTGROUPS):
        resources.append('portgroups')
    if req.allows(versions.LOOKUP_HEARTBEAT):
        resources += ['lookup', 'heartbeat']
    if req.allows(versions.VOLUME):
        resources.append('volume')
    if req.allows(versions.CONDUCTORS):
        resources.append('conductors')
    if req.allows(versions.ALLOCATIONS):
        resources.append('allocations')
    if req.allows(versions.EVENTS):
        resources.append('events')
    if req.allows(versions.DEPLOY_TEMPLATES):
        resources.append('deploy_templates')
    for r in resources:
        out[r] = req.links(r)
    return out
