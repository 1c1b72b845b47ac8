"""db/columns.py: what the schema says of a table's columns."""

import pytest

from baremetal.db import columns
from baremetal.db import nodes as db_nodes


def test_names_and_json_names():
    names = columns.names(db_nodes.NODES)
    assert {'id', 'uuid', 'driver_info', 'maintenance'} <= names
    assert 'nope' not in names
    assert names is columns.names(db_nodes.NODES)    # computed once
    json = columns.json_names(db_nodes.NODES)
    assert {'driver_info', 'properties', 'instance_info'} <= json
    assert not {'uuid', 'maintenance', 'id'} & json
    assert json <= names


def test_kind():
    assert columns.kind(db_nodes.NODES, 'maintenance') == 'boolean'
    assert columns.kind(db_nodes.NODES, 'id') == 'integer'
    assert columns.kind(db_nodes.NODES, 'name') is None
    assert columns.kind(db_nodes.NODES, 'properties') is None
    with pytest.raises(KeyError):
        columns.kind(db_nodes.NODES, 'nope')
