"""nodes.updated_at to the microsecond on MySQL/MariaDB (DATETIME(6);
DATETIME kept seconds, SQLite and PostgreSQL keep microseconds already).
An API update of a node saves only onto the node as it read it, told by
updated_at: two writes within one second must not look alike.

Revision ID: 0008
Revises: 0007
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    op.alter_column('nodes', 'updated_at', type_=mysql.DATETIME(fsp=6),
                    existing_type=sa.DateTime(), existing_nullable=True)
