"""On PostgreSQL the change feed's events are written by a trigger, in
the statement that changes the node (as on SQLite), instead of from
Python in a transaction around it: a node write is one statement.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    # the SQL of the code that runs the migration (db/events.py)
    from baremetal.db import events
    for sql in events.POSTGRESQL_DROP + events.POSTGRESQL_TRIGGERS:
        op.execute(sql)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    from baremetal.db import events
    for sql in events.POSTGRESQL_DROP:
        op.execute(sql)
