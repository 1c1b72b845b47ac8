"""On PostgreSQL, nodes_reservation_idx holds the reserved nodes only
(``WHERE reservation IS NOT NULL``).

Taking a node's lock is ``UPDATE nodes ... WHERE uuid = $1 AND
reservation IS NULL``.  With the full index on reservation, a planner
without statistics for the table (never analyzed: autovacuum off, or
not yet run after many nodes were added) could pick that index for
``reservation IS NULL`` - every unlocked node - instead of the unique
index on uuid, and read the whole table for each lock: 24 ms a lock
with 100,000 nodes, against 0.3 ms (doc/source/admin/performance.rst).
The reserved nodes (a few at a time) are what the index is for: a dead
conductor's locks, found by ``reservation = host``.  SQLite and MySQL
pick the unique index on their own; their index is unchanged.

Revision ID: 0009
Revises: 0008
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.drop_index('nodes_reservation_idx', table_name='nodes')
    op.create_index('nodes_reservation_idx', 'nodes', ['reservation'],
                    postgresql_where=sa.text('reservation IS NOT NULL'))
