"""Chassis: their rows, and their uuids by id (what a node list
shows)."""

from baremetal.common import exception
from baremetal.db import models
from baremetal.db import rows as db_rows

C = models.TABLES['chassis']
ROWS = db_rows.Rows(C, exception.ChassisNotFound, 'chassis')


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the chassis with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db_rows.query(
        C, (C.c.id.in_(ids),), columns=('id', 'uuid'))}
