"""Add nodes.retired and nodes.retired_reason (API 1.61).

Revision ID: 0002
Revises: 0001
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('nodes') as batch:
        batch.add_column(sa.Column('retired', sa.Boolean(),
                                   server_default=sa.false(),
                                   nullable=True))
        batch.add_column(sa.Column('retired_reason', sa.Text(),
                                   nullable=True))
    # Existing rows: not retired, no reason (server default fills
    # 'retired' on every backend; be explicit for older rows anyway).
    nodes = sa.table('nodes', sa.column('retired', sa.Boolean()))
    op.execute(nodes.update().where(nodes.c.retired.is_(None))
               .values(retired=False))
