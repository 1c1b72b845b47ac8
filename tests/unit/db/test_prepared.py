"""Prepared statements give exactly the rows SQLAlchemy gives (same
types: datetimes, booleans, JSON, NULLs) and errors translated the same
way."""

import datetime

import pytest
import sqlalchemy as sa

from baremetal.common import exception
from baremetal.db import api as db
from baremetal.db import prepared


def _node(api, **fields):
    return db.get_node(api.create_node(**fields)['uuid'])


def test_rows_match_sqlalchemy(api):
    node = _node(api, name='same', properties={'cpus': 4, 'x': [1, None]},
                 extra={'é': 'ü'})
    db.update(db.NODES, node['id'], {'maintenance': True,
                                     'maintenance_reason': None})
    stmt = sa.select(db.NODES).where(db.NODES.c.id == sa.bindparam('i'))
    cache = prepared.Cache()
    with db.reader() as conn:
        fast, count = prepared.run(cache, conn, stmt, {'i': node['id']})
        slow = [dict(r) for r in conn.execute(
            stmt, {'i': node['id']}).mappings()]
    assert fast == slow and len(fast) == 1
    row = fast[0]
    assert row['maintenance'] is True
    assert row['properties'] == {'cpus': 4, 'x': [1, None]}
    assert row['extra'] == {'é': 'ü'}
    assert isinstance(row['created_at'], datetime.datetime)
    assert isinstance(row['updated_at'], datetime.datetime)
    assert row['maintenance_reason'] is None


def test_parameters_are_converted(api):
    node = _node(api, name='params')
    when = datetime.datetime(2026, 1, 2, 3, 4, 5, 678901)
    assert db.update(db.NODES, node['id'], {
        'maintenance': True, 'properties': {'a': [1, 2]},
        'provision_updated_at': when}) == 1
    got = db.get_node(node['uuid'])
    assert got['maintenance'] is True
    assert got['properties'] == {'a': [1, 2]}
    assert got['provision_updated_at'] == when


def test_driver_errors_are_translated_as_usual(api):
    _node(api, name='taken')
    other = _node(api, name='free')
    with pytest.raises(exception.DuplicateName):
        db.update(db.NODES, other['id'], {'name': 'taken'})
    assert db.get_node(other['uuid'])['name'] == 'free'


def test_reserve_and_release_through_prepared_statements(api):
    node = _node(api, name='lock')
    row = db.reserve_node('host-a', node['uuid'])
    assert row['reservation'] == 'host-a' and row['name'] == 'lock'
    with pytest.raises(exception.NodeLocked):
        db.reserve_node('host-b', 'lock')
    assert db.release_node('host-a', node['id'], {'extra': {'k': 'v'}})
    got = db.get_node(node['uuid'])
    assert got['reservation'] is None and got['extra'] == {'k': 'v'}
    assert not db.release_node('host-a', node['id'])
