"""db/rows.py's ``Rows``: one table's rows and the error of a missing
one, as the callers outside db/ hold them, against a real (SQLite)
database.  (The generic calls under it are exercised by every other
test of db/ and of the API.)"""

import pytest

from baremetal.common import exception
from baremetal.db import chassis as db_chassis
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports
from baremetal.db import rows as db_rows

CHASSIS = db_chassis.ROWS


def test_get_by_id_or_uuid_and_some_columns(api):
    row = CHASSIS.create({'description': 'rack 1'})
    assert CHASSIS.get(row['id'])['uuid'] == row['uuid']
    assert CHASSIS.get(row['uuid'].upper())['id'] == row['id']
    assert CHASSIS.get(row['uuid'], ('id', 'description')) == {
        'id': row['id'], 'description': 'rack 1'}


def test_a_missing_row_raises_the_resources_error(api):
    with pytest.raises(exception.ChassisNotFound) as e:
        CHASSIS.get(4242)
    assert str(e.value) == 'Chassis 4242 could not be found.'
    with pytest.raises(exception.ChassisNotFound) as e:
        CHASSIS.get(4242, shown_as='the one asked for')
    assert str(e.value) == \
        'Chassis the one asked for could not be found.'
    # a table without names finds nothing by one
    with pytest.raises(exception.ChassisNotFound):
        CHASSIS.get('by-name')
    err = CHASSIS.missing('x')
    assert isinstance(err, exception.ChassisNotFound)
    assert str(err) == 'Chassis x could not be found.'


def test_create_makes_a_uuid_and_shows_defaults(api):
    row = CHASSIS.create({})
    assert db_rows.is_uuid_like(row['uuid'])
    assert row['created_at'] is not None and row['description'] is None
    with pytest.raises(exception.ResourceAlreadyExists):
        CHASSIS.create({'uuid': row['uuid']})


def test_list_page_pages_by_the_sort_key(api):
    made = [CHASSIS.create({'description': d}) for d in 'cabd']
    assert [r['description'] for r in CHASSIS.list_page()] == list('cabd')
    first = CHASSIS.list_page(limit=2, sort_key='description')
    assert [r['description'] for r in first] == ['a', 'b']
    rest = CHASSIS.list_page(marker=first[-1], sort_key='description')
    assert [r['description'] for r in rest] == ['c', 'd']
    desc = CHASSIS.list_page(sort_dir='desc')
    assert [r['id'] for r in desc] == [r['id'] for r in reversed(made)]
    only = CHASSIS.list_page((db_chassis.C.c.id == made[1]['id'],))
    assert [r['description'] for r in only] == ['a']


def test_update_and_delete(api):
    row = CHASSIS.create({'description': 'old'})
    assert CHASSIS.update(row['id'], {'description': 'new'}) == 1
    got = CHASSIS.get(row['id'])
    assert got['description'] == 'new' and got['updated_at'] is not None
    assert CHASSIS.update(4242, {'description': 'x'}) == 0
    CHASSIS.delete(row['id'])
    with pytest.raises(exception.ChassisNotFound):
        CHASSIS.get(row['id'])


def test_update_only_where_the_conditions_hold(api):
    row = CHASSIS.create({'description': 'old'})
    not_new = db_chassis.C.c.description == 'new'
    assert CHASSIS.update(row['id'], {'description': 'x'}, (not_new,)) == 0
    assert CHASSIS.get(row['id'])['description'] == 'old'


def test_columns_and_repr():
    assert {'id', 'uuid', 'address', 'node_id'} <= db_ports.ROWS.columns
    assert 'address' not in CHASSIS.columns
    assert {'extra', 'local_link_connection', 'internal_info'} <= \
        db_ports.ROWS.json_columns
    assert 'address' not in db_ports.ROWS.json_columns
    assert repr(CHASSIS) == 'Rows(chassis)'


def test_is_uuid_like_takes_the_canonical_form_in_either_case_only():
    import uuid
    u = str(uuid.uuid4())
    for yes in (u, u.upper(), uuid.UUID(u)):
        assert db_rows.is_uuid_like(yes), yes
    for no in ('node-1', '', None, 7, '{%s}' % u, 'urn:uuid:' + u,
               u.replace('-', ''), u + ' ', ' ' + u, u + '\n',
               u[:-1] + 'g', '\u0663' * 32,
               '\u0663' * 8 + u[8:]):
        assert not db_rows.is_uuid_like(no), no


def test_a_value_the_database_cannot_hold_is_invalid(any_db_api):
    """PostgreSQL and MySQL refuse a string longer than its column (a
    driver error, a 500 where a request carried it); the db layer says
    InvalidParameterValue with the database's words. SQLite keeps it."""
    node = any_db_api.create_node(name="fits")
    ports = db_ports.ROWS
    values = {'node_id': db_nodes.ROWS.get(node['uuid'])['id'],
              'address': '52:54:00:00:00:01', 'physical_network': 'p' * 65}
    if any_db_api.db_kind == 'sqlite':
        assert ports.create(values)['physical_network'] == 'p' * 65
        return
    with pytest.raises(exception.InvalidParameterValue) as e:
        ports.create(values)
    assert 'A value does not fit the database: ' in str(e.value)
    assert 'too long' in str(e.value), str(e.value)


def test_an_integer_sqlite_cannot_bind_is_invalid(api):
    """SQLite's driver cannot bind an integer beyond 64 bits (an
    OverflowError, a 500 where a request carried it)."""
    node = api.create_node(name="big")
    from baremetal.db import volume as db_volume
    with pytest.raises(exception.InvalidParameterValue) as e:
        db_volume.TARGETS.create({
            'node_id': db_nodes.ROWS.get(node['uuid'])['id'],
            'volume_type': 'iscsi', 'volume_id': 'v', 'boot_index': 2 ** 63})
    assert 'A value does not fit the database: ' in str(e.value)
