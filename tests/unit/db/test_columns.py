"""db/columns.py: what the schema says of a table's columns."""

import pytest

from baremetal.db import api as db
from baremetal.db import columns


def test_names_and_json_names():
    names = columns.names(db.NODES)
    assert {'id', 'uuid', 'driver_info', 'maintenance'} <= names
    assert 'nope' not in names
    assert names is columns.names(db.NODES)    # computed once
    json = columns.json_names(db.NODES)
    assert {'driver_info', 'properties', 'instance_info'} <= json
    assert not {'uuid', 'maintenance', 'id'} & json
    assert json <= names


def test_kind():
    assert columns.kind(db.NODES, 'maintenance') == 'boolean'
    assert columns.kind(db.NODES, 'id') == 'integer'
    assert columns.kind(db.NODES, 'name') is None
    assert columns.kind(db.NODES, 'properties') is None
    with pytest.raises(KeyError):
        columns.kind(db.NODES, 'nope')
