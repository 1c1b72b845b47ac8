"""Named lists of steps stored in a child table (deploy templates'
steps, runbooks' steps): the steps table, its parent table and the
steps' column naming their list (``fk``) are given by the caller
(api/step_lists.py's StepTable)."""

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import rows as db_rows


def steps_of(table: sa.Table, fk: str, ids: list[int]) -> list[dict]:
    """The step rows of the lists with these ids (one query)."""
    return db_rows.query(table, (table.c[fk].in_(ids),))


def replace(table: sa.Table, fk: str, parent_id: int,
            steps: list[dict]) -> None:
    """The list's steps become ``steps`` (one transaction)."""
    with engine.writer() as conn:
        conn.execute(table.delete().where(table.c[fk] == parent_id))
        conn.execute(table.insert(), [
            dict(s, **{fk: parent_id}, created_at=db_rows.utcnow())
            for s in steps])


def delete(table: sa.Table, parent: sa.Table, fk: str,
           parent_id: int) -> None:
    """Delete the list and its steps (one transaction)."""
    with engine.writer() as conn:
        conn.execute(table.delete().where(table.c[fk] == parent_id))
        conn.execute(parent.delete().where(parent.c.id == parent_id))
