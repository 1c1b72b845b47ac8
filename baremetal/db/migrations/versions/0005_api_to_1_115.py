"""Columns of API versions 1.113 to 1.115: a node history event's
project (1.113), the provision state it happened in, the target state
and how long the node had been in that state (1.115); a firmware
component's vendor, model and serial number (1.114).

Revision ID: 0005
Revises: 0004
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('node_history') as batch:
        batch.add_column(sa.Column('project', sa.String(80), nullable=True))
        batch.add_column(sa.Column('state', sa.String(255), nullable=True))
        batch.add_column(sa.Column('target_provision_state',
                                   sa.String(255), nullable=True))
        batch.add_column(sa.Column('duration_seconds', sa.Integer(),
                                   nullable=True))
    with op.batch_alter_table('firmware_information') as batch:
        for name in ('vendor', 'model', 'serial_number'):
            batch.add_column(sa.Column(name, sa.String(255), nullable=True))
