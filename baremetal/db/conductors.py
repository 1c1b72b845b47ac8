"""Conductors: their registration (and the hardware interfaces each
offers), heartbeats, and which of them are alive or dead."""

import datetime

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows

CONDUCTORS = models.TABLES['conductors']
HW_IFACES = models.TABLES['conductor_hardware_interfaces']


@engine.retry_on_deadlock
def register_conductor(hostname: str, group: str,
                       interfaces: list[dict]) -> dict:
    """Register (or re-register) a conductor and what it offers."""
    now = db_rows.utcnow()
    hw_types = sorted({i['hardware_type'] for i in interfaces})
    with engine.writer() as conn:
        row = conn.execute(sa.select(CONDUCTORS).where(
            CONDUCTORS.c.hostname == hostname)).mappings().first()
        vals = {'online': True, 'conductor_group': group,
                'drivers': hw_types, 'updated_at': now}
        if row is None:
            cid = conn.execute(CONDUCTORS.insert().values(
                hostname=hostname, created_at=now, **vals)
            ).inserted_primary_key[0]
        else:
            cid = row['id']
            conn.execute(CONDUCTORS.update().where(CONDUCTORS.c.id == cid)
                         .values(**vals))
        conn.execute(HW_IFACES.delete().where(
            HW_IFACES.c.conductor_id == cid))
        if interfaces:
            conn.execute(HW_IFACES.insert(), [
                dict(i, conductor_id=cid, created_at=now)
                for i in interfaces])
    return {'id': cid, 'hostname': hostname}


def touch_conductor(hostname: str) -> bool:
    with engine.single() as conn:
        res = conn.execute(CONDUCTORS.update()
                           .where(CONDUCTORS.c.hostname == hostname)
                           .values(updated_at=db_rows.utcnow(), online=True))
    return res.rowcount == 1


def unregister_conductor(hostname: str) -> None:
    with engine.single() as conn:
        conn.execute(CONDUCTORS.update()
                     .where(CONDUCTORS.c.hostname == hostname)
                     .values(online=False, updated_at=db_rows.utcnow()))


def list_conductors() -> list[dict]:
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(CONDUCTORS).order_by(CONDUCTORS.c.hostname)
        ).mappings()]


def live_conductors(timeout: int) -> list[dict]:
    limit = db_rows.utcnow() - datetime.timedelta(seconds=timeout)
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(CONDUCTORS).where(CONDUCTORS.c.online.is_(True),
                                        CONDUCTORS.c.updated_at >= limit)
            .order_by(CONDUCTORS.c.hostname)).mappings()]


def dead_conductor_hosts(timeout: int) -> list[str]:
    limit = db_rows.utcnow() - datetime.timedelta(seconds=timeout)
    with engine.reader() as conn:
        return [r[0] for r in conn.execute(
            sa.select(CONDUCTORS.c.hostname).where(sa.or_(
                CONDUCTORS.c.online.is_(False),
                CONDUCTORS.c.updated_at < limit)))]


def hardware_interfaces(conductor_ids: list[int] | None = None
                        ) -> list[dict]:
    stmt = sa.select(HW_IFACES)
    if conductor_ids is not None:
        stmt = stmt.where(HW_IFACES.c.conductor_id.in_(conductor_ids))
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(stmt).mappings()]
