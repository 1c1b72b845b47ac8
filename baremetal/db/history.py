"""Node history events (API 1.78): storing one (``add``: objects/
history.py builds it), and the reads of the history API."""

from baremetal.db import models
from baremetal.db import rows as db_rows

H = models.TABLES['node_history']


def add(event: dict) -> None:
    """Store one event (a row of ``node_history``: its uuid, node_id,
    event, severity, event_type, ...)."""
    db_rows.create(H, event)


def marker(event_uuid: str) -> dict | None:
    """``id`` and ``uuid`` of the event, to page after it (None: no
    such event)."""
    found = db_rows.query(H, (H.c.uuid == event_uuid,), ('id', 'uuid'))
    return found[0] if found else None


def events_of_node(node_id: int, limit: int | None = None,
                   after: dict | None = None) -> list[dict]:
    """One page of the node's events, oldest first (``after``: the
    marker row of the previous page's last one)."""
    return db_rows.query(H, (H.c.node_id == node_id,), None, limit, after,
                    'id', 'asc')


def event_of_node(node_id: int, event_uuid: str) -> dict | None:
    """The node's event with this uuid (None: the node has none)."""
    found = db_rows.query(H, (H.c.node_id == node_id, H.c.uuid == event_uuid))
    return found[0] if found else None
