"""Volume connectors and targets (API 1.32): their rows, and the
condition their lists take."""

from baremetal.common import exception
from baremetal.db import models
from baremetal.db import rows as db_rows

CONNECTORS = db_rows.Rows(models.TABLES['volume_connectors'],
                          exception.VolumeConnectorNotFound, 'connector')
TARGETS = db_rows.Rows(models.TABLES['volume_targets'],
                       exception.VolumeTargetNotFound, 'target')


def on_node(rows: db_rows.Rows, node_id: int):
    """Condition: the volume connectors or targets (``rows``:
    ``CONNECTORS`` or ``TARGETS``) of the node ``node_id``."""
    return rows.table.c.node_id == node_id
