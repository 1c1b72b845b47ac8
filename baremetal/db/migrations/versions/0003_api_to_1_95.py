"""Columns and tables of API versions 1.63 to 1.95: the node's lessee
filter and network_data (1.65, 1.66), the BIOS registry (1.74), boot_mode
and secure_boot (1.75),
history (1.78), inventory (1.81), shard (1.82), parent_node (1.83),
firmware_interface and firmware components (1.86), service_step (1.87),
port names (1.88), runbooks (1.92) and disable_power_off (1.95).

Revision ID: 0003
Revises: 0002
"""

from alembic import op
import sqlalchemy as sa

from baremetal.db import models

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def _stamps():
    return (sa.Column('created_at', sa.DateTime(), nullable=True),
            sa.Column('updated_at', sa.DateTime(), nullable=True))


def upgrade() -> None:
    with op.batch_alter_table('nodes') as batch:
        batch.add_column(sa.Column('network_data', models.JSONText(),
                                   nullable=True))
        batch.add_column(sa.Column('boot_mode', sa.String(16),
                                   nullable=True))
        batch.add_column(sa.Column('secure_boot', sa.Boolean(),
                                   nullable=True))
        batch.add_column(sa.Column('shard', sa.String(255), nullable=True))
        batch.add_column(sa.Column('parent_node', sa.String(36),
                                   nullable=True))
        batch.add_column(sa.Column('service_step', models.JSONText(),
                                   nullable=True))
        batch.add_column(sa.Column('firmware_interface', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('disable_power_off', sa.Boolean(),
                                   server_default=sa.false(),
                                   nullable=True))
        batch.create_index('nodes_shard_idx', ['shard'])
        batch.create_index('nodes_parent_node_idx', ['parent_node'])
    with op.batch_alter_table('bios_settings') as batch:
        batch.add_column(sa.Column('attribute_type',
                                   sa.String(255), nullable=True))
        batch.add_column(sa.Column('allowable_values',
                                   models.JSONText(), nullable=True))
        batch.add_column(sa.Column('lower_bound', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('max_length', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('min_length', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('read_only', sa.Boolean(), nullable=True))
        batch.add_column(sa.Column('reset_required',
                                   sa.Boolean(), nullable=True))
        batch.add_column(sa.Column('unique', sa.Boolean(), nullable=True))
        batch.add_column(sa.Column('upper_bound', sa.Integer(), nullable=True))
    with op.batch_alter_table('ports') as batch:
        batch.add_column(sa.Column('name', sa.String(255), nullable=True))
        batch.create_unique_constraint('uniq_ports0name', ['name'])
    op.create_table(
        'node_history',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('node_id', sa.Integer(), sa.ForeignKey('nodes.id'),
                  nullable=False),
        sa.Column('conductor', sa.String(255), nullable=True),
        sa.Column('event_type', sa.String(255), nullable=True),
        sa.Column('severity', sa.String(255), nullable=True),
        sa.Column('event', sa.Text(), nullable=True),
        sa.Column('user', sa.String(255), nullable=True),
        *_stamps(),
        sa.UniqueConstraint('uuid', name='uniq_history0uuid'),
        sa.Index('history_node_id_idx', 'node_id'))
    op.create_table(
        'node_inventory',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('node_id', sa.Integer(), sa.ForeignKey('nodes.id'),
                  nullable=False),
        sa.Column('inventory_data', models.JSONText(), nullable=True),
        sa.Column('plugin_data', models.JSONText(), nullable=True),
        *_stamps(),
        sa.UniqueConstraint('node_id', name='uniq_inventory0node_id'))
    op.create_table(
        'firmware_information',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('node_id', sa.Integer(), sa.ForeignKey('nodes.id'),
                  nullable=False),
        sa.Column('component', sa.String(255), nullable=False),
        sa.Column('initial_version', sa.String(255), nullable=False),
        sa.Column('current_version', sa.String(255), nullable=True),
        sa.Column('last_version_flashed', sa.String(255), nullable=True),
        *_stamps(),
        sa.UniqueConstraint('node_id', 'component',
                            name='uniq_firmware0node_id0component'))
    op.create_table(
        'runbooks',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('public', sa.Boolean(), nullable=False,
                  server_default=sa.false()),
        sa.Column('owner', sa.String(255), nullable=True),
        sa.Column('disable_ramdisk', sa.Boolean(), nullable=False,
                  server_default=sa.false()),
        sa.Column('extra', models.JSONText(), nullable=True),
        *_stamps(),
        sa.UniqueConstraint('uuid', name='uniq_runbooks0uuid'),
        sa.UniqueConstraint('name', name='uniq_runbooks0name'),
        sa.Index('runbooks_owner_idx', 'owner'))
    op.create_table(
        'runbook_steps',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('runbook_id', sa.Integer(), sa.ForeignKey('runbooks.id'),
                  nullable=False),
        sa.Column('interface', sa.String(255), nullable=False),
        sa.Column('step', sa.String(255), nullable=False),
        sa.Column('args', models.JSONText(), nullable=False),
        sa.Column('order', sa.Integer(), nullable=False),
        *_stamps(),
        sa.Index('runbook_steps_runbook_id_idx', 'runbook_id'))
