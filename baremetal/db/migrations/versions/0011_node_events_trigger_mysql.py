"""On MariaDB and MySQL the change feed's events are written by
triggers, in the statement that changes the node (as on SQLite and
PostgreSQL), instead of from Python in a transaction around it: a node
write is its statement and its commit.

Revision ID: 0011
Revises: 0010
"""

from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    # the SQL of the code that runs the migration (db/events.py)
    from baremetal.db import events
    for sql in events.MYSQL_DROP + events.MYSQL_TRIGGERS:
        op.execute(sql)


def downgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    from baremetal.db import events
    for sql in events.MYSQL_DROP:
        op.execute(sql)
