"""Nodes: the conditions of a node list, the sub-selects other
resources' lists take (a port's or a port group's node in some
conductor groups or shards), and small reads of nodes beyond the
generic ``db.api`` calls (``db.get_node``, ``db.query``)."""

import sqlalchemy as sa

from baremetal.db import api as db

N = db.NODES
_N = N.c


def equals(field: str, value):
    """Condition: the node's ``field`` is ``value``."""
    return _N[field] == value


def associated(flag: bool):
    """Condition: the node has an instance (``flag``) or has none."""
    return _N.instance_uuid.is_not(None) if flag \
        else _N.instance_uuid.is_(None)


def in_maintenance(flag: bool):
    """Condition: the node is in maintenance (``flag``) or is not."""
    return _N.maintenance.is_(flag)


def retired(flag: bool):
    """Condition: the node is retired (``flag``), or is not (false or
    never set)."""
    return _N.retired.is_(True) if flag else \
        sa.or_(_N.retired.is_(False), _N.retired.is_(None))


def in_shards(shards: list[str]):
    """Condition: the node is in one of the shards."""
    return _N.shard.in_(shards)


def sharded(flag: bool):
    """Condition: the node is in a shard (``flag``) or in none."""
    return _N.shard.is_not(None) if flag else _N.shard.is_(None)


def without_parent():
    """Condition: the node is no other node's child (API 1.83)."""
    return _N.parent_node.is_(None)


def description_contains(text: str):
    """Condition: the description contains ``text`` (``%`` and ``_``
    match themselves)."""
    return _N.description.contains(text, autoescape=True)


def ids_in_conductor_groups(groups: list[str]):
    """Sub-select: ids of the nodes in one of the conductor groups."""
    return sa.select(_N.id).where(_N.conductor_group.in_(groups))


def ids_in_shards(shards: list[str]):
    """Sub-select: ids of the nodes in one of the shards."""
    return sa.select(_N.id).where(_N.shard.in_(shards))


def after_uuid(uuid: str) -> dict:
    """A page marker for ``db.query`` sorted by id: the node of ``uuid``
    found by the page's own statement (a subquery), not by a statement
    of its own before it; a marker that names no node gives an empty
    page."""
    return {'id': sa.select(N.c.id).where(N.c.uuid == str(uuid).lower())
            .scalar_subquery()}


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the nodes with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db.query(
        N, (_N.id.in_(ids),), columns=('id', 'uuid'))}


def children(parent_uuid: str) -> list[dict]:
    """``id`` and ``uuid`` of the nodes whose parent is this one."""
    return db.query(N, (_N.parent_node == parent_uuid,), ('id', 'uuid'))


def count_in_chassis(chassis_id: int) -> int:
    """How many nodes the chassis holds."""
    return db.count(N, (_N.chassis_id == chassis_id,))


def shard_counts() -> list:
    """``(shard, nodes)`` for each shard (None: nodes in no shard), in
    no particular order (one query)."""
    with db.reader() as conn:
        return conn.execute(sa.select(_N.shard, sa.func.count())
                            .group_by(_N.shard)).all()


def unreserved():
    """Condition: no conductor holds the node's lock."""
    return _N.reservation.is_(None)
