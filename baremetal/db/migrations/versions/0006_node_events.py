"""The change feed: node_events (one row per change of a tracked node
field) and node_event_counter (the last event id handed out).

Revision ID: 0006
Revises: 0005
"""

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'node_events',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                  primary_key=True, autoincrement=False),
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('field', sa.String(32), nullable=False),
        sa.Column('old', sa.Text()),
        sa.Column('new', sa.Text()),
        sa.Column('detail', sa.Text()),
        sa.Column('resource_class', sa.String(80)),
        sa.Column('conductor_group', sa.String(255)),
        sa.Column('owner', sa.String(255)),
        sa.Column('lessee', sa.String(255)),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sqlite_autoincrement=True)
    counter = op.create_table(
        'node_event_counter',
        sa.Column('id', sa.Integer(), primary_key=True,
                  autoincrement=False),
        sa.Column('last_id', sa.BigInteger(), nullable=False))
    op.bulk_insert(counter, [{'id': 1, 'last_id': 0}])
    if op.get_bind().dialect.name == 'sqlite':
        # the embedded server's events come from triggers (db/events.py)
        from baremetal.db import events
        for sql in events.SQLITE_TRIGGERS:
            op.execute(sql)
