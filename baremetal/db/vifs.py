"""Where a node's VIFs are bound: ``tenant_vif_port_id`` in the
``internal_info`` of its ports and port groups (what the network
interfaces of drivers/base.py attach and detach)."""

from baremetal.db import models
from baremetal.db import rows as db_rows


def port_by_uuid(table_name: str, uuid: str) -> dict | None:
    """``id``, ``node_id`` and ``internal_info`` of the port or port
    group (``table_name``: 'ports' or 'portgroups') with this uuid."""
    t = models.TABLES[table_name]
    rows = db_rows.query(t, (t.c.uuid == uuid,),
                    ('id', 'node_id', 'internal_info'))
    return rows[0] if rows else None


def ports_of_node(table_name: str, node_id: int) -> list[dict]:
    """``id`` and ``internal_info`` of the node's ports or port
    groups."""
    t = models.TABLES[table_name]
    return db_rows.query(t, (t.c.node_id == node_id,), ('id', 'internal_info'))


def set_internal_info(table_name: str, row_id: int,
                      internal_info: dict) -> None:
    """Store the ``internal_info`` of the port or port group
    (``table_name``: 'ports' or 'portgroups') with this id."""
    db_rows.update(models.TABLES[table_name], row_id,
                   {'internal_info': internal_info})
