"""The fleet's node counts: one statement, on every database, equal to
counting the nodes one by one."""

import collections
import itertools

from baremetal.db import node_stats
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from tests.unit.perf.test_query_count import counting

NODES = db_nodes.NODES
_SHAPES = itertools.cycle([
    ('available', 'power off', False, None),
    ('active', 'power on', False, None),
    ('active', 'power on', True, None),
    ('manageable', None, True, 'power failure'),
    ('clean failed', 'power off', True, 'clean failure'),
    ('enroll', None, False, None),
    ('active', 'power on', False, None),
])


def test_counts_equal_the_nodes_and_take_one_statement(any_db_api):
    for _ in range(23):
        provision, power, maintenance, fault = next(_SHAPES)
        db_rows.create(NODES, {'driver': 'fake-hardware',
                               'provision_state': provision,
                               'power_state': power,
                               'maintenance': maintenance, 'fault': fault})
    with counting() as statements:
        counts = node_stats.count_nodes()
    assert len(statements) == 1, statements

    rows = db_rows.query(NODES, columns=('provision_state', 'power_state',
                                         'maintenance', 'fault'))
    assert counts.total == len(rows) == 23
    assert counts.provision_state == collections.Counter(
        r['provision_state'] for r in rows)
    assert counts.power_state == collections.Counter(
        r['power_state'] for r in rows)
    assert None in counts.power_state
    assert counts.fault == collections.Counter(
        r['fault'] for r in rows if r['fault'])
    assert counts.maintenance == sum(1 for r in rows if r['maintenance'])


def test_no_nodes_count_nothing(api):
    counts = node_stats.count_nodes()
    assert (counts.total, counts.provision_state, counts.power_state,
            counts.fault, counts.maintenance) == (0, {}, {}, {}, 0)
