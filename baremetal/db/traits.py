"""Node traits: a node with its traits (the single-node GET), the
traits of many nodes at once, and setting, adding and removing them."""

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import rows as db_rows

NODES = models.TABLES['nodes']
TRAITS = models.TABLES['node_traits']

_TRAITS_OF_ONE = sa.select(TRAITS.c.trait).where(
    TRAITS.c.node_id == sa.bindparam('node_id')).order_by(TRAITS.c.trait)


_NODE_TRAITS_STMTS: dict = {}


def get_node_with_traits(ident: Any, columns: Iterable[str] | None = None
                         ) -> tuple[dict, list[str]]:
    """A node and its traits in one statement (the single-node GET):
    the node LEFT JOINed to its traits, one row per trait."""
    found = db_rows.ident_column(NODES, ident)
    rows = []
    if found is not None:
        by, value = found
        key = (by, tuple(columns) if columns else None)
        stmt = _NODE_TRAITS_STMTS.get(key)
        if stmt is None:
            # the node is found first, on its own (LIMIT 1: the column is
            # unique): a subquery with a LIMIT is planned apart, so that
            # PostgreSQL looks it up by its unique index even before it
            # has statistics on the table (joined directly, it may walk
            # the primary key instead, every row of a fresh table)
            cols = [NODES.c[c] for c in key[1] or NODES.c.keys()]
            node = (sa.select(*cols, *([] if 'id' in (key[1] or ('id',))
                                       else [NODES.c.id]))
                    .where(NODES.c[by] == sa.bindparam('ident'))
                    .limit(1).subquery('node'))
            stmt = (sa.select(*[node.c[c.name] for c in cols],
                              TRAITS.c.trait.label('_trait'))
                    .select_from(node.outerjoin(
                        TRAITS, TRAITS.c.node_id == node.c.id))
                    .order_by(TRAITS.c.trait))
            _NODE_TRAITS_STMTS[key] = stmt
        with engine.reader() as conn:
            rows, _ = prepared.run(engine.prepared_cache, conn, stmt,
                                   {'ident': value})
    if not rows:
        raise exception.NodeNotFound(node=ident)
    row = dict(rows[0])
    row.pop('_trait')
    return row, [r['_trait'] for r in rows if r['_trait'] is not None]


def traits_for_nodes(node_ids: list[int]) -> dict[int, list[str]]:
    """Traits of many nodes in one query."""
    out: dict[int, list[str]] = {}
    if not node_ids:
        return out
    with engine.reader() as conn:
        if len(node_ids) == 1:
            traits = [r['trait'] for r in prepared.run(
                engine.prepared_cache, conn, _TRAITS_OF_ONE,
                {'node_id': node_ids[0]})[0]]
            return {node_ids[0]: traits} if traits else {}
        stmt = sa.select(TRAITS.c.node_id, TRAITS.c.trait)
        if len(node_ids) < 5000:
            stmt = stmt.where(TRAITS.c.node_id.in_(node_ids))
        for nid, trait in conn.execute(stmt.order_by(TRAITS.c.trait)):
            out.setdefault(nid, []).append(trait)
    return out


@engine.retry_on_deadlock
def set_node_traits(node_id: int, traits: list[str]) -> None:
    now = db_rows.utcnow()
    with engine.writer() as conn:
        conn.execute(TRAITS.delete().where(TRAITS.c.node_id == node_id))
        if traits:
            conn.execute(TRAITS.insert(), [
                {'node_id': node_id, 'trait': t, 'created_at': now}
                for t in sorted(set(traits))])


def add_node_trait(node_id: int, trait: str) -> None:
    with engine.writer() as conn:
        exists = conn.execute(sa.select(TRAITS.c.trait).where(
            TRAITS.c.node_id == node_id, TRAITS.c.trait == trait)).first()
        if not exists:
            conn.execute(TRAITS.insert().values(
                node_id=node_id, trait=trait, created_at=db_rows.utcnow()))


def delete_node_trait(node_id: int, trait: str) -> int:
    with engine.single() as conn:
        return conn.execute(TRAITS.delete().where(
            TRAITS.c.node_id == node_id, TRAITS.c.trait == trait)).rowcount
