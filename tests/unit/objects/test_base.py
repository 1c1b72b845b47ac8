"""objects/base.py's Record through its two record classes: where their
rows are (db.nodes.ROWS, db.ports.ROWS), what a missing row raises, and
which fields may be set."""

import pytest

from baremetal import objects
from baremetal.common import exception
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports
from baremetal.objects import node as node_obj


def test_record_classes_name_their_rows():
    assert objects.Node.rows is db_nodes.ROWS
    assert node_obj.Port.rows is db_ports.ROWS
    # what conductor/inspection_rules.py reads: the columns, not a table
    assert 'driver_info' in objects.Node.rows.columns
    assert objects.Node.rows.kind('maintenance') == 'boolean'
    assert not hasattr(objects.Node, 'table')


def test_get_create_refresh_destroy(api):
    node = objects.Node.create({'driver': 'fake-hardware', 'name': 'r1'})
    assert objects.Node.get('r1').uuid == node.uuid
    assert objects.Node.get(node.uuid, ('id', 'name')).as_dict() == {
        'id': node.id, 'name': 'r1'}
    node.destroy()
    with pytest.raises(exception.NodeNotFound) as e:
        node.refresh()      # by id, named by its uuid
    assert str(e.value) == 'Node %s could not be found.' % node.uuid
    with pytest.raises(exception.PortNotFound) as e:
        node_obj.Port.get('p1')
    assert str(e.value) == 'Port p1 could not be found.'


def test_only_columns_may_be_set(api):
    node = objects.Node.create({'driver': 'fake-hardware'})
    node.description = 'set'
    assert node.changes() == {'description': 'set'}
    with pytest.raises(AttributeError):
        node.no_such_field = 1
