"""db/chassis.py: chassis uuids by id, against a real (SQLite)
database."""

from baremetal.db import api as db
from baremetal.db import chassis as db_chassis


def test_uuids_by_id(api):
    rows = [db.create(db.T['chassis'], {}) for _ in range(3)]
    assert db_chassis.uuids_by_id({rows[0]['id'], rows[2]['id']}) == {
        rows[0]['id']: rows[0]['uuid'], rows[2]['id']: rows[2]['uuid']}
    assert db_chassis.uuids_by_id({999}) == {}
