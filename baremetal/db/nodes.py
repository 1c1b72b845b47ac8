"""Nodes: the sub-selects other resources' lists take (a port's or a
port group's node in some conductor groups or shards)."""

import sqlalchemy as sa

from baremetal.db import api as db

_N = db.NODES.c


def ids_in_conductor_groups(groups: list[str]):
    """Sub-select: ids of the nodes in one of the conductor groups."""
    return sa.select(_N.id).where(_N.conductor_group.in_(groups))


def ids_in_shards(shards: list[str]):
    """Sub-select: ids of the nodes in one of the shards."""
    return sa.select(_N.id).where(_N.shard.in_(shards))
