"""Node reservations: the exclusive lock a conductor takes on a node
(one atomic UPDATE of ``nodes.reservation``), its release, and the
release of the locks of conductors that died (task_manager.py and
takeover.py call these)."""

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import prepared
from baremetal.db import rows as db_rows

NODES = models.TABLES['nodes']


_RESERVE_STMTS = engine.dialect_cache()


def _reserve_stmts(by: str):
    """(UPDATE ... SET reservation WHERE <by> AND unreserved [RETURNING
    the node where the database can], SELECT the node), built once per
    identifier kind."""
    stmts = _RESERVE_STMTS.get(by)
    if stmts is None:
        match = NODES.c[by] == sa.bindparam('ident')
        take = (NODES.update()
                .where(match, NODES.c.reservation.is_(None))
                .values(reservation=sa.bindparam('host')))
        returning = engine.engine().dialect.update_returning
        if returning:
            take = take.returning(*NODES.c)
        stmts = (take, sa.select(NODES).where(match), returning)
        _RESERVE_STMTS[by] = stmts
    return stmts


def reserve_node(host: str, ident: Any) -> dict:
    """Take the exclusive lock on a node: one atomic UPDATE (which also
    returns the node on SQLite and PostgreSQL)."""
    found = db_rows.ident_column(NODES, ident)
    if found is None:
        raise exception.NodeNotFound(node=ident)
    by, value = found
    take, read, returning = _reserve_stmts(by)
    # with RETURNING the UPDATE alone decides and answers; the SELECT
    # after it only tells why not (or, without RETURNING, reads the node
    # the UPDATE took in the same transaction)
    with engine.single() if returning else engine.writer() as conn:
        rows, count = prepared.run(engine.prepared_cache, conn, take,
                                   {'ident': value, 'host': host})
        if returning:
            if rows:
                return rows[0]
            taken = False
        else:
            taken = count == 1
        rows, _ = prepared.run(engine.prepared_cache, conn, read,
                               {'ident': value})
    row = rows[0] if rows else None
    if row is None:
        raise exception.NodeNotFound(node=ident)
    if not taken:
        raise exception.NodeLocked(
            node=row['uuid'] if db_rows.is_uuid_like(ident) else ident,
            host=row['reservation'])
    return dict(row)


_RELEASE_STMTS: dict = {}


def release_node(host: str, node_id: int, values: dict | None = None) -> bool:
    """Drop our reservation (and save ``values`` in the same UPDATE)."""
    vals = dict(values or {})
    if vals:
        vals.setdefault('updated_at', db_rows.utcnow())
    vals['reservation'] = None
    keys = tuple(sorted(vals))
    stmt = _RELEASE_STMTS.get(keys)
    if stmt is None:
        stmt = (NODES.update()
                .where(NODES.c.id == sa.bindparam('_row_id'),
                       NODES.c.reservation == sa.bindparam('_host'))
                .values({k: sa.bindparam('v_' + k) for k in keys}))
        _RELEASE_STMTS[keys] = stmt
    params = {'v_' + k: v for k, v in vals.items()}
    params.update(_row_id=node_id, _host=host)
    with engine.single() as conn:
        return prepared.run(engine.prepared_cache, conn, stmt,
                            params)[1] == 1


def release_reservations_of(hosts: Iterable[str]) -> list[dict]:
    """Clear reservations held by (dead) ``hosts``; return those nodes."""
    hosts = list(hosts)
    if not hosts:
        return []
    with engine.writer() as conn:
        rows = [dict(r) for r in conn.execute(
            sa.select(NODES.c.id, NODES.c.uuid, NODES.c.reservation,
                      NODES.c.provision_state, NODES.c.driver,
                      NODES.c.conductor_group)
            .where(NODES.c.reservation.in_(hosts))).mappings()]
        if rows:
            conn.execute(NODES.update()
                         .where(NODES.c.reservation.in_(hosts))
                         .values(reservation=None))
    return rows
