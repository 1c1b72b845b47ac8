"""Volume connectors and targets (API 1.32): the condition their lists
take."""

import sqlalchemy as sa


def on_node(table: sa.Table, node_id: int):
    """Condition: rows of ``table`` (volume connectors or targets) of
    the node ``node_id``."""
    return table.c.node_id == node_id
