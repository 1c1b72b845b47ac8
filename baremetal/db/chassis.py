"""Chassis: their uuids by id (what a node list shows)."""

from baremetal.db import api as db

C = db.T['chassis']


def uuids_by_id(ids) -> dict[int, str]:
    """``{id: uuid}`` of the chassis with these ids (one query)."""
    return {r['id']: r['uuid'] for r in db.query(
        C, (C.c.id.in_(ids),), columns=('id', 'uuid'))}
