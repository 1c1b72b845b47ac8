"""The change feed on SQLite, cheaper to write: one trigger per tracked
node field (was one for all of them), so that a node write pays only for
the fields it sets; and ``node_events`` without ``AUTOINCREMENT`` (its
ids are the rowid after the largest, which a purge never deletes), which
saved a write to ``sqlite_sequence`` with every event.

Revision ID: 0007
Revises: 0006
"""

from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_COLUMNS = ('id, node_uuid, field, old, new, detail, resource_class, '
            'conductor_group, owner, lessee, created_at')


def upgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    # the embedded server's events come from triggers (db/events.py);
    # 0006 created the triggers of the code that ran it, so whichever
    # set is there goes, and today's is created after the table's copy
    from baremetal.db import events
    for name in events.SQLITE_TRIGGERS_BEFORE_0007 + \
            events.SQLITE_TRIGGER_NAMES:
        op.execute('DROP TRIGGER IF EXISTS %s' % name)
    op.execute(
        'CREATE TABLE node_events_0007 (id INTEGER NOT NULL, '
        'node_uuid VARCHAR(36) NOT NULL, field VARCHAR(32) NOT NULL, '
        'old TEXT, new TEXT, detail TEXT, resource_class VARCHAR(80), '
        'conductor_group VARCHAR(255), owner VARCHAR(255), '
        'lessee VARCHAR(255), created_at DATETIME NOT NULL, '
        'PRIMARY KEY (id))')
    op.execute('INSERT INTO node_events_0007 (%s) SELECT %s FROM '
               'node_events' % (_COLUMNS, _COLUMNS))
    op.execute('DROP TABLE node_events')
    op.execute('ALTER TABLE node_events_0007 RENAME TO node_events')
    for sql in events.SQLITE_TRIGGERS:
        op.execute(sql)
