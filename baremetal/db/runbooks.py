"""Runbooks: their rows and steps (``STEPS``, see step_lists.py), which
ones a project sees, and their traits (API 1.112)."""

import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import engine
from baremetal.db import models
from baremetal.db import rows as db_rows
from baremetal.db import step_lists

RB = models.TABLES['runbooks']
RBT = models.TABLES['runbook_traits']
ROWS = db_rows.Rows(RB, exception.RunbookNotFound, 'runbook')
STEPS = step_lists.StepLists(ROWS, models.TABLES['runbook_steps'],
                             'runbook_id')


def visible_to(project: str | None):
    """Condition: the project's runbooks and the public ones."""
    return (RB.c.owner == project) | RB.c.public.is_(True)


def traits_of(ids: list[int]) -> dict[int, list[str]]:
    """The traits of runbooks, sorted, in one query."""
    out: dict[int, list[str]] = {}
    if ids:
        with engine.reader() as conn:
            for rid, trait in conn.execute(sa.select(
                    RBT.c.runbook_id, RBT.c.trait).where(
                    RBT.c.runbook_id.in_(ids))):
                out.setdefault(rid, []).append(trait)
    return {k: sorted(v) for k, v in out.items()}


@engine.retry_on_deadlock
def set_traits(runbook_id: int, wanted: list[str]) -> None:
    """Replace the runbook's traits with ``wanted`` (one transaction)."""
    now = db_rows.utcnow()
    with engine.writer() as conn:
        conn.execute(RBT.delete().where(RBT.c.runbook_id == runbook_id))
        if wanted:
            conn.execute(RBT.insert(), [
                {'runbook_id': runbook_id, 'trait': t, 'created_at': now}
                for t in sorted(set(wanted))])


def add_trait(runbook_id: int, trait: str) -> None:
    """Give the runbook the trait, unless it has it already."""
    with engine.writer() as conn:
        exists = conn.execute(sa.select(RBT.c.trait).where(
            RBT.c.runbook_id == runbook_id, RBT.c.trait == trait)).first()
        if not exists:
            conn.execute(RBT.insert().values(
                runbook_id=runbook_id, trait=trait,
                created_at=db_rows.utcnow()))


def delete_trait(runbook_id: int, trait: str) -> None:
    """Take the trait from the runbook (nothing if it has none)."""
    with engine.writer() as conn:
        conn.execute(RBT.delete().where(RBT.c.runbook_id == runbook_id,
                                        RBT.c.trait == trait))


def delete_traits(runbook_id: int) -> None:
    """Take every trait from the runbook (before it is deleted)."""
    with engine.writer() as conn:
        conn.execute(RBT.delete().where(RBT.c.runbook_id == runbook_id))
