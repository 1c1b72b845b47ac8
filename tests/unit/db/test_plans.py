"""PostgreSQL plans the hot single-node statements the same way whether
or not it has statistics on the nodes table yet (a fresh table, or a
server with autovacuum off): by the unique index of the column looked
up, never a walk over every node."""

import json

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from baremetal.db import engine as db_engine
from baremetal.db import nodes as db_nodes
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
    if 'Relation Name' in plan:
        out.append((plan['Relation Name'], plan.get('Index Name'),
                    plan.get('Index Cond')))
    for sub in plan.get('Plans', ()):
        out += _index_scans(sub)
    return out


def _nodes_scan(stmt, ident) -> tuple:
    sql = str(stmt.params(ident=ident).compile(
        dialect=postgresql.dialect(),
        compile_kwargs={'literal_binds': True}))
    with db_engine.reader() as conn:
        stats = conn.exec_driver_sql(
            "SELECT reltuples FROM pg_class WHERE relname = 'nodes'"
        ).scalar()
        assert stats < 0, 'the table must have no statistics yet'
        plan = conn.exec_driver_sql(
            'EXPLAIN (FORMAT JSON) ' + sql).scalar()
    if isinstance(plan, str):
        plan = json.loads(plan)
    return [s for s in _index_scans(plan[0]['Plan']) if s[0] == 'nodes']


def test_single_node_get_uses_the_unique_index_without_statistics(pg_api):
    api = pg_api
    now = db_rows.utcnow()
    with db_engine.writer() as conn:
        conn.execute(db_nodes.NODES.insert(), [
            {'uuid': db_rows.new_uuid(), 'name': 'n%04d' % i,
             'driver': 'fake-hardware', 'provision_state': 'available',
             'maintenance': False, 'conductor_group': '',
             'console_enabled': False, 'protected': False,
             'retired': False, 'created_at': now} for i in range(500)])
        uuid = conn.execute(sa.select(db_nodes.NODES.c.uuid).where(
            db_nodes.NODES.c.name == 'n0250')).scalar()
    for ident, index in ((uuid, 'uniq_nodes0uuid'),
                         ('n0250', 'uniq_nodes0name')):
        assert api.request('GET', '/v1/nodes/' + ident)[0] == 200
        by = 'uuid' if ident == uuid else 'name'
        stmt = db_traits._NODE_TRAITS_STMTS[(by, None)]
        scans = _nodes_scan(stmt, ident)
        assert len(scans) == 1 and scans[0][1] == index, scans
        assert ident in scans[0][2], scans
