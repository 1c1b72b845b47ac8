"""PostgreSQL plans the hot single-node statements the same way whether
or not it has statistics on the nodes table yet (a fresh table, or a
server with autovacuum off): by the unique index of the column looked
up, never a walk over every node: a node's GET, and taking its lock."""

import json

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from baremetal.db import engine as db_engine
from baremetal.db import nodes as db_nodes
from baremetal.db import reservations as db_reservations
from baremetal.db import rows as db_rows
from baremetal.db import traits as db_traits
from tests import harness
from tests import services


@pytest.fixture
def pg_api(tmp_path):
    h = harness.Harness(
        tmp_path, db_url=services.db_url('postgresql', schema=True))
    yield h
    h.close()


def _index_scans(plan: dict) -> list[tuple[str, str | None]]:
    out = []
    # the scans (an UPDATE's own node names the table too)
    if 'Relation Name' in plan and 'Scan' in plan['Node Type']:
        out.append((plan['Relation Name'], plan.get('Index Name'),
                    plan.get('Index Cond')))
    for sub in plan.get('Plans', ()):
        out += _index_scans(sub)
    return out


def _nodes_scan(stmt, ident, **more) -> tuple:
    compiled = stmt.compile(dialect=postgresql.psycopg2.dialect())
    sql = str(compiled)
    params = compiled.construct_params(dict(ident=ident, **more))
    with db_engine.reader() as conn:
        stats = conn.exec_driver_sql(
            "SELECT reltuples FROM pg_class WHERE relname = 'nodes'"
        ).scalar()
        assert stats < 0, 'the table must have no statistics yet'
        plan = conn.exec_driver_sql(
            'EXPLAIN (FORMAT JSON) ' + sql, params).scalar()
    if isinstance(plan, str):
        plan = json.loads(plan)
    return [s for s in _index_scans(plan[0]['Plan']) if s[0] == 'nodes']


def _many_nodes() -> str:
    """500 nodes; the uuid of the one named n0250."""
    now = db_rows.utcnow()
    with db_engine.writer() as conn:
        conn.execute(db_nodes.NODES.insert(), [
            {'uuid': db_rows.new_uuid(), 'name': 'n%04d' % i,
             'driver': 'fake-hardware', 'provision_state': 'available',
             'maintenance': False, 'conductor_group': '',
             'console_enabled': False, 'protected': False,
             'retired': False, 'created_at': now} for i in range(500)])
        return conn.execute(sa.select(db_nodes.NODES.c.uuid).where(
            db_nodes.NODES.c.name == 'n0250')).scalar()


def test_single_node_get_uses_the_unique_index_without_statistics(pg_api):
    api = pg_api
    uuid = _many_nodes()
    for ident, index in ((uuid, 'uniq_nodes0uuid'),
                         ('n0250', 'uniq_nodes0name')):
        assert api.request('GET', '/v1/nodes/' + ident)[0] == 200
        by = 'uuid' if ident == uuid else 'name'
        stmt = db_traits._NODE_TRAITS_STMTS[(by, None)]
        scans = _nodes_scan(stmt, ident)
        assert len(scans) == 1 and scans[0][1] == index, scans
        assert ident in scans[0][2], scans


def test_taking_a_lock_uses_the_unique_index_without_statistics(pg_api):
    # UPDATE ... WHERE uuid = $1 AND reservation IS NULL: the index on
    # reservation holds only reserved nodes (migration 0009), so the
    # planner cannot walk every unlocked node through it (24 ms a lock
    # with 100,000 nodes, seen in tools/bench-fleet)
    uuid = _many_nodes()
    for ident, by, index in ((uuid, 'uuid', 'uniq_nodes0uuid'),
                             ('n0250', 'name', 'uniq_nodes0name')):
        row = db_reservations.reserve_node('cond-0', ident)
        assert db_reservations.release_node('cond-0', row['id'])
        take = db_reservations._reserve_stmts(by)[0]
        scans = _nodes_scan(take, ident, host='cond-0')
        assert len(scans) == 1 and scans[0][1] == index, scans
        assert ident in scans[0][2], scans
