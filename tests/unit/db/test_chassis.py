"""db/chassis.py: chassis uuids by id, against a real (SQLite)
database."""

from baremetal.db import chassis as db_chassis
from baremetal.db import models
from baremetal.db import rows as db_rows


def test_uuids_by_id(api):
    rows = [db_rows.create(models.TABLES['chassis'], {}) for _ in range(3)]
    assert db_chassis.uuids_by_id({rows[0]['id'], rows[2]['id']}) == {
        rows[0]['id']: rows[0]['uuid'], rows[2]['id']: rows[2]['uuid']}
    assert db_chassis.uuids_by_id({999}) == {}
