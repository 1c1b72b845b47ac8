"""Initial schema: nodes, ports, portgroups, chassis, conductors...

Revision ID: 0001
Revises: 
"""

from alembic import op
import sqlalchemy as sa

from baremetal.db import models


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('chassis',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('description', sa.String(length=255), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_chassis0uuid')
    )
    op.create_table('conductors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hostname', sa.String(length=255), nullable=False),
    sa.Column('drivers', models.JSONText(), nullable=True),
    sa.Column('online', sa.Boolean(), nullable=False),
    sa.Column('conductor_group', sa.String(length=255), server_default='', nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('hostname', name='uniq_conductors0hostname')
    )
    op.create_table('deploy_templates',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_deploytemplates0name'),
    sa.UniqueConstraint('uuid', name='uniq_deploytemplates0uuid')
    )
    op.create_table('conductor_hardware_interfaces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('conductor_id', sa.Integer(), nullable=False),
    sa.Column('hardware_type', sa.String(length=255), nullable=False),
    sa.Column('interface_type', sa.String(length=16), nullable=False),
    sa.Column('interface_name', sa.String(length=255), nullable=False),
    sa.Column('default', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['conductor_id'], ['conductors.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('conductor_id', 'hardware_type', 'interface_type', 'interface_name', name='uniq_conductorhwifaces0')
    )
    op.create_table('deploy_template_steps',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('deploy_template_id', sa.Integer(), nullable=False),
    sa.Column('interface', sa.String(length=255), nullable=False),
    sa.Column('step', sa.String(length=255), nullable=False),
    sa.Column('args', models.JSONText(), nullable=False),
    sa.Column('priority', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['deploy_template_id'], ['deploy_templates.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('deploy_template_steps', schema=None) as batch_op:
        batch_op.create_index('deploy_template_id', ['deploy_template_id'], unique=False)

    op.create_table('nodes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('chassis_id', sa.Integer(), nullable=True),
    sa.Column('driver', sa.String(length=255), nullable=False),
    sa.Column('bios_interface', sa.String(length=255), nullable=True),
    sa.Column('boot_interface', sa.String(length=255), nullable=True),
    sa.Column('console_interface', sa.String(length=255), nullable=True),
    sa.Column('deploy_interface', sa.String(length=255), nullable=True),
    sa.Column('inspect_interface', sa.String(length=255), nullable=True),
    sa.Column('management_interface', sa.String(length=255), nullable=True),
    sa.Column('network_interface', sa.String(length=255), nullable=True),
    sa.Column('power_interface', sa.String(length=255), nullable=True),
    sa.Column('raid_interface', sa.String(length=255), nullable=True),
    sa.Column('rescue_interface', sa.String(length=255), nullable=True),
    sa.Column('storage_interface', sa.String(length=255), nullable=True),
    sa.Column('vendor_interface', sa.String(length=255), nullable=True),
    sa.Column('provision_state', sa.String(length=15), nullable=True),
    sa.Column('target_provision_state', sa.String(length=15), nullable=True),
    sa.Column('provision_updated_at', sa.DateTime(), nullable=True),
    sa.Column('power_state', sa.String(length=15), nullable=True),
    sa.Column('target_power_state', sa.String(length=15), nullable=True),
    sa.Column('maintenance', sa.Boolean(), nullable=False),
    sa.Column('maintenance_reason', sa.Text(), nullable=True),
    sa.Column('fault', sa.String(length=255), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('reservation', sa.String(length=255), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('conductor_group', sa.String(length=255), server_default='', nullable=False),
    sa.Column('console_enabled', sa.Boolean(), nullable=False),
    sa.Column('driver_info', models.JSONText(), nullable=True),
    sa.Column('driver_internal_info', models.JSONText(), nullable=True),
    sa.Column('instance_info', models.JSONText(), nullable=True),
    sa.Column('instance_uuid', sa.String(length=36), nullable=True),
    sa.Column('properties', models.JSONText(), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('clean_step', models.JSONText(), nullable=True),
    sa.Column('deploy_step', models.JSONText(), nullable=True),
    sa.Column('raid_config', models.JSONText(), nullable=True),
    sa.Column('target_raid_config', models.JSONText(), nullable=True),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('inspection_started_at', sa.DateTime(), nullable=True),
    sa.Column('inspection_finished_at', sa.DateTime(), nullable=True),
    sa.Column('automated_clean', sa.Boolean(), nullable=True),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('protected_reason', sa.Text(), nullable=True),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('lessee', sa.String(length=255), nullable=True),
    sa.Column('allocation_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['chassis_id'], ['chassis.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
    sa.UniqueConstraint('name', name='uniq_nodes0name'),
    sa.UniqueConstraint('uuid', name='uniq_nodes0uuid')
    )
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.create_index('nodes_chassis_id_idx', ['chassis_id'], unique=False)
        batch_op.create_index('nodes_conductor_affinity_idx', ['conductor_affinity'], unique=False)
        batch_op.create_index('nodes_conductor_group_idx', ['conductor_group'], unique=False)
        batch_op.create_index('nodes_driver_idx', ['driver'], unique=False)
        batch_op.create_index('nodes_fault_idx', ['fault'], unique=False)
        batch_op.create_index('nodes_lessee_idx', ['lessee'], unique=False)
        batch_op.create_index('nodes_maintenance_idx', ['maintenance'], unique=False)
        batch_op.create_index('nodes_owner_idx', ['owner'], unique=False)
        batch_op.create_index('nodes_provision_state_idx', ['provision_state'], unique=False)
        batch_op.create_index('nodes_provision_updated_at_idx', ['provision_updated_at'], unique=False)
        batch_op.create_index('nodes_reservation_idx', ['reservation'], unique=False)
        batch_op.create_index('nodes_resource_class_idx', ['resource_class'], unique=False)

    op.create_table('allocations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=15), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('traits', models.JSONText(), nullable=True),
    sa.Column('candidate_nodes', models.JSONText(), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_allocations0name'),
    sa.UniqueConstraint('uuid', name='uniq_allocations0uuid')
    )
    with op.batch_alter_table('allocations', schema=None) as batch_op:
        batch_op.create_index('allocations_state_idx', ['state'], unique=False)

    op.create_table('bios_settings',
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('value', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('node_id', 'name')
    )
    op.create_table('node_traits',
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('node_id', 'trait')
    )
    with op.batch_alter_table('node_traits', schema=None) as batch_op:
        batch_op.create_index('node_traits_idx', ['trait'], unique=False)

    op.create_table('portgroups',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('address', sa.String(length=18), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('internal_info', models.JSONText(), nullable=True),
    sa.Column('standalone_ports_supported', sa.Boolean(), nullable=True),
    sa.Column('mode', sa.String(length=255), nullable=True),
    sa.Column('properties', models.JSONText(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('address', name='uniq_portgroups0address'),
    sa.UniqueConstraint('name', name='uniq_portgroups0name'),
    sa.UniqueConstraint('uuid', name='uniq_portgroups0uuid')
    )
    with op.batch_alter_table('portgroups', schema=None) as batch_op:
        batch_op.create_index('portgroups_node_id_idx', ['node_id'], unique=False)

    op.create_table('volume_connectors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('type', sa.String(length=32), nullable=True),
    sa.Column('connector_id', sa.String(length=255), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('type', 'connector_id', name='uniq_volumeconnectors0type0connector_id'),
    sa.UniqueConstraint('uuid', name='uniq_volumeconnectors0uuid')
    )
    op.create_table('volume_targets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('volume_type', sa.String(length=64), nullable=True),
    sa.Column('properties', models.JSONText(), nullable=True),
    sa.Column('boot_index', sa.Integer(), nullable=True),
    sa.Column('volume_id', sa.String(length=36), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('node_id', 'boot_index', name='uniq_volumetargets0node_id0boot_index'),
    sa.UniqueConstraint('uuid', name='uniq_volumetargets0uuid')
    )
    op.create_table('ports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('address', sa.String(length=18), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('portgroup_id', sa.Integer(), nullable=True),
    sa.Column('extra', models.JSONText(), nullable=True),
    sa.Column('local_link_connection', models.JSONText(), nullable=True),
    sa.Column('pxe_enabled', sa.Boolean(), nullable=True),
    sa.Column('internal_info', models.JSONText(), nullable=True),
    sa.Column('physical_network', sa.String(length=64), nullable=True),
    sa.Column('is_smartnic', sa.Boolean(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ),
    sa.ForeignKeyConstraint(['portgroup_id'], ['portgroups.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('address', name='uniq_ports0address'),
    sa.UniqueConstraint('uuid', name='uniq_ports0uuid')
    )
    with op.batch_alter_table('ports', schema=None) as batch_op:
        batch_op.create_index('ports_node_id_idx', ['node_id'], unique=False)
        batch_op.create_index('ports_portgroup_id_idx', ['portgroup_id'], unique=False)
