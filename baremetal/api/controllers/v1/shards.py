"""/v1/shards (API 1.82): the shards nodes are in and how many each
holds, most first (nodes in no shard count under ``None``)."""

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.db import nodes as db_nodes


@route('GET', '/v1/shards', min_version=versions.SHARDS)
def list_shards(req):
    policy.authorize(req, 'baremetal:shards:get')
    rows = db_nodes.shard_counts()
    rows.sort(key=lambda r: (-r[1], r[0] or ''))
    return {'shards': [{'name': shard, 'count': count}
                       for shard, count in rows]}
