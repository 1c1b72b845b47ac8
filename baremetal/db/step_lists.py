"""Named lists of steps stored in a child table: deploy templates' steps
and runbooks' steps.  Each of those modules binds its lists (their
``Rows``), their steps table and the steps' column naming their list
(``fk``) once, as a ``StepLists`` (``db.runbooks.STEPS``), which
api/step_lists.py's StepTable uses."""

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import rows as db_rows


class StepLists:
    """The lists (``lists``: their rows) and their steps (``table``,
    whose column ``fk`` names the list)."""

    __slots__ = ('lists', 'table', 'fk')

    def __init__(self, lists: db_rows.Rows, table: sa.Table,
                 fk: str) -> None:
        self.lists = lists
        self.table = table
        self.fk = fk

    def steps_of(self, ids: list[int]) -> list[dict]:
        """The step rows of the lists with these ids (one query)."""
        table = self.table
        return db_rows.query(table, (table.c[self.fk].in_(ids),))

    # delete-then-insert: on MariaDB two at once can deadlock on the gap
    # their DELETEs lock; the victim runs again
    @engine.retry_on_deadlock
    def replace(self, list_id: int, steps: list[dict]) -> None:
        """The list's steps become ``steps`` (one transaction)."""
        table, fk = self.table, self.fk
        with engine.writer() as conn:
            conn.execute(table.delete().where(table.c[fk] == list_id))
            conn.execute(table.insert(), [
                dict(s, **{fk: list_id}, created_at=db_rows.utcnow())
                for s in steps])

    @engine.retry_on_deadlock
    def delete(self, list_id: int) -> None:
        """Delete the list and its steps (one transaction)."""
        table, parent = self.table, self.lists.table
        with engine.writer() as conn:
            conn.execute(table.delete().where(table.c[self.fk] == list_id))
            conn.execute(parent.delete().where(parent.c.id == list_id))
