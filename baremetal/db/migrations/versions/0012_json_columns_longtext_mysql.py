"""Every JSON column LONGTEXT on MySQL/MariaDB (db/models.JSONText):
their TEXT holds 64 KB, and a config drive kept in a node's
instance_info, an agent's inventory, a node's internal info may be
larger (a deployment with a 160 KB config drive failed there).  SQLite's
and PostgreSQL's text has no such bound.

Revision ID: 0012
Revises: 0011
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


# the JSON columns of 0011's schema (db/models.JSONText); those not
# nullable are marked
COLUMNS = {
    'allocations': ('traits', 'candidate_nodes', 'extra'),
    'bios_settings': ('allowable_values',),
    'chassis': ('extra',),
    'conductors': ('drivers',),
    'deploy_template_steps': ('args!',),
    'deploy_templates': ('extra',),
    'inspection_rules': ('conditions', 'actions!'),
    'node_events': ('old', 'new', 'detail'),
    'node_inventory': ('inventory_data', 'plugin_data'),
    'nodes': ('driver_info', 'driver_internal_info', 'instance_info',
              'properties', 'extra', 'clean_step', 'deploy_step',
              'raid_config', 'target_raid_config', 'network_data',
              'service_step'),
    'portgroups': ('extra', 'internal_info', 'properties'),
    'ports': ('extra', 'local_link_connection', 'internal_info'),
    'runbook_steps': ('args!',),
    'runbooks': ('extra',),
    'volume_connectors': ('extra',),
    'volume_targets': ('properties', 'extra'),
}


def _alter(to, was) -> None:
    for table, columns in COLUMNS.items():
        for name in columns:
            op.alter_column(table, name.rstrip('!'), type_=to,
                            existing_type=was,
                            existing_nullable=not name.endswith('!'))


def upgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    _alter(mysql.LONGTEXT(), sa.Text())


def downgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    _alter(sa.Text(), mysql.LONGTEXT())
