"""Columns and tables of API versions 1.96 to 1.112: inspection rules
(1.96), the port's description, vendor and category (1.97, 1.100,
1.101), the portgroup's physical_network and category (1.102, 1.103),
the node's instance_name (1.104) and health (1.109), dynamic
portgroups (1.111) and runbook traits and descriptions (1.112).

A runbook made before 1.112 applied to the nodes with a trait of its
name; it keeps doing so: each gets its name as its one trait.

Revision ID: 0004
Revises: 0003
"""

from alembic import op
import sqlalchemy as sa

from baremetal.db import models

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def _stamps():
    return (sa.Column('created_at', sa.DateTime(), nullable=True),
            sa.Column('updated_at', sa.DateTime(), nullable=True))


def upgrade() -> None:
    with op.batch_alter_table('nodes') as batch:
        batch.add_column(sa.Column('instance_name', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('health', sa.String(32), nullable=True))
        batch.create_index('nodes_instance_name_idx', ['instance_name'])
    with op.batch_alter_table('ports') as batch:
        batch.add_column(sa.Column('description', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('vendor', sa.String(32), nullable=True))
        batch.add_column(sa.Column('category', sa.String(80),
                                   nullable=True))
        batch.add_column(sa.Column('available_for_dynamic_portgroup',
                                   sa.Boolean(), nullable=False,
                                   server_default=sa.true()))
    with op.batch_alter_table('portgroups') as batch:
        batch.add_column(sa.Column('physical_network', sa.String(64),
                                   nullable=True))
        batch.add_column(sa.Column('category', sa.String(80),
                                   nullable=True))
        batch.add_column(sa.Column('dynamic_portgroup', sa.Boolean(),
                                   nullable=True, server_default=sa.false()))
    with op.batch_alter_table('runbooks') as batch:
        batch.add_column(sa.Column('description', sa.String(255),
                                   nullable=True))
    op.create_table(
        'runbook_traits',
        sa.Column('runbook_id', sa.Integer(), sa.ForeignKey('runbooks.id'),
                  primary_key=True, nullable=False),
        sa.Column('trait', sa.String(255), primary_key=True,
                  nullable=False),
        *_stamps(),
        sa.Index('runbook_traits_idx', 'trait'))
    op.create_table(
        'inspection_rules',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('priority', sa.Integer(), nullable=False,
                  server_default='0'),
        sa.Column('description', sa.String(255), nullable=True),
        sa.Column('scope', sa.String(255), nullable=True),
        sa.Column('sensitive', sa.Boolean(), nullable=False,
                  server_default=sa.false()),
        sa.Column('phase', sa.String(16), nullable=False,
                  server_default='main'),
        sa.Column('conditions', models.JSONText(), nullable=True),
        sa.Column('actions', models.JSONText(), nullable=False),
        *_stamps(),
        sa.UniqueConstraint('uuid', name='uniq_inspection_rules0uuid'),
        sa.Index('inspection_rule_scope_idx', 'scope'),
        sa.Index('inspection_rule_phase_idx', 'phase'))
    runbooks = sa.table('runbooks', sa.column('id'), sa.column('name'))
    traits = sa.table('runbook_traits', sa.column('runbook_id'),
                      sa.column('trait'))
    op.execute(traits.insert().from_select(
        ['runbook_id', 'trait'],
        sa.select(runbooks.c.id, runbooks.c.name)))

