"""The change feed's SQLite triggers, one per tracked node field (was
one for all of them): a node write pays only for the fields it sets.

Revision ID: 0007
Revises: 0006
"""

from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    # the embedded server's events come from triggers (db/events.py);
    # 0006 created the triggers of the code that ran it, so whichever
    # set is there goes, and today's is created
    from baremetal.db import events
    for name in events.SQLITE_TRIGGERS_BEFORE_0007 + \
            events.SQLITE_TRIGGER_NAMES:
        op.execute('DROP TRIGGER IF EXISTS %s' % name)
    for sql in events.SQLITE_TRIGGERS:
        op.execute(sql)
