"""/v1/shards (API 1.82): the shards nodes are in and how many each
holds, most first (nodes in no shard count under ``None``)."""

import sqlalchemy as sa

from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.db import api as db

N = db.NODES


@route('GET', '/v1/shards', min_version=versions.SHARDS)
def list_shards(req):
    policy.authorize(req, 'baremetal:shards:get')
    with db.reader() as conn:
        rows = conn.execute(sa.select(N.c.shard, sa.func.count())
                            .group_by(N.c.shard)).all()
    rows.sort(key=lambda r: (-r[1], r[0] or ''))
    return {'shards': [{'name': shard, 'count': count}
                       for shard, count in rows]}
