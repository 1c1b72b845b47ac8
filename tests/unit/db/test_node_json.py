"""db/node_json.py: the columns of a node page whose JSON the database
writes, on SQLite and PostgreSQL (tests/unit/api/test_node_json_sql.py
compares whole pages with node_view's on both)."""

import datetime
import json

import pytest
import sqlalchemy as sa

from baremetal.db import node_json
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests import harness
from tests import services

NODES = db_nodes.NODES


def _page(written, **kw):
    args = dict(hide_available=False, date_fields=('created_at',),
                never_null=('maintenance',), stored=[],
                tail=[',"links":"', '"}'])
    args.update(kw)
    return node_json.node_text(written, **args)


def test_columns(api):
    columns = _page(['name', 'maintenance'], whole=False, stored=['extra'],
                    also=['driver_info', 'driver', 'conductor_group'])
    assert [c.name for c in columns] == [
        'id', 'uuid', '_node', 'driver_info', 'driver', 'conductor_group']


@pytest.fixture(params=['sqlite', 'postgresql'])
def json_db_api(request, tmp_path):
    """The databases that write node JSON themselves."""
    h = harness.Harness(
        tmp_path, db_url=services.db_url(request.param, schema=True))
    yield h
    h.close()


def test_many_fields_and_a_percent_in_the_tail(json_db_api, monkeypatch):
    # more values than one printf/format call takes (here 10); a '%' in
    # the request's text is text, not a conversion
    monkeypatch.setattr(node_json, '_ARGS', 10)
    n = db_rows.create(NODES, {'driver': 'fake-hardware', 'name': '100%'})
    plain = [c for c, col in NODES.c.items()
             if c != 'id' and not isinstance(col.type, sa.JSON)]
    assert len(plain) > 30
    tail = [',"links":"http://h/%s%d/', '"}']
    rows = db_rows.query(NODES, select=_page(plain, tail=tail), tuples=True)
    got = json.loads(rows[0][2])
    assert got['name'] == '100%' and got['uuid'] == n['uuid']
    assert got['links'] == 'http://h/%s%d/' + n['uuid']
    assert set(got) == set(plain) | {'links'}


def test_the_database_writes_the_fields(api):
    assert node_json.usable()
    n = db_rows.create(NODES, {
        'driver': 'fake-hardware', 'name': 'a "b"',
        'provision_state': 'available', 'automated_clean': None,
        'created_at': datetime.datetime(2026, 1, 2, 3, 4, 5)})
    db_rows.update(NODES, n['id'], {'retired': True})
    fields = ['name', 'provision_state', 'maintenance', 'automated_clean',
              'protected', 'retired', 'created_at', 'traits']
    for hide, state in ((False, 'available'), (True, None)):
        rows = db_rows.query(NODES, select=_page(
            fields, hide_available=hide, never_null=('automated_clean',)),
            tuples=True)
        got = json.loads(rows[0][2])
        del got['links']
        assert got == {'name': 'a "b"', 'provision_state': state,
                       'maintenance': False, 'automated_clean': False,
                       'protected': False, 'retired': True,
                       'created_at': '2026-01-02T03:04:05+00:00',
                       'traits': []}
