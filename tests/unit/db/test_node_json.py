"""db/node_json.py: the columns of a node page whose JSON the database
writes, run on SQLite (tests/unit/api/test_node_json_sql.py compares
whole pages with node_view's on SQLite and PostgreSQL)."""

import datetime
import json

from baremetal.db import api as db
from baremetal.db import node_json


def _page(written, **kw):
    args = dict(hide_available=False, date_fields=('created_at',),
                never_null=('maintenance',), conductor=False, raw=[])
    args.update(kw)
    return node_json.page_columns(written, **args)


def test_columns_and_labels(api):
    columns, objects = _page(['name', 'maintenance'], conductor=True,
                             raw=['driver_info', 'extra'])
    assert objects == ['_j0']
    assert [c.name for c in columns] == [
        'id', 'uuid', '_j0', 'driver', 'conductor_group',
        '_raw_driver_info', '_raw_extra']
    # a long run of fields is split into objects of 40
    many = [c for c in db.NODES.c.keys() if c != 'id'][:45]
    assert _page(many)[1] == ['_j0', '_j40']


def test_the_database_writes_the_fields(api):
    assert node_json.usable()
    n = db.create(db.NODES, {
        'driver': 'fake-hardware', 'name': 'a "b"',
        'provision_state': 'available', 'automated_clean': None,
        'created_at': datetime.datetime(2026, 1, 2, 3, 4, 5)})
    db.update(db.NODES, n['id'], {'retired': True})
    fields = ['name', 'provision_state', 'maintenance', 'automated_clean',
              'protected', 'retired', 'created_at', 'traits']
    for hide, state in ((False, 'available'), (True, None)):
        columns, objects = _page(fields, hide_available=hide,
                                 never_null=('automated_clean',))
        rows = db.query(db.NODES, select=columns)
        got = json.loads(rows[0][objects[0]])
        assert got == {'name': 'a "b"', 'provision_state': state,
                       'maintenance': False, 'automated_clean': False,
                       'protected': False, 'retired': True,
                       'created_at': '2026-01-02T03:04:05+00:00',
                       'traits': []}
