"""How many nodes are in each state: the fleet gauges of /metrics.

One statement, run at scrape time, in which the database counts: nodes
per provision state, per power state and per fault, and in maintenance.
Python receives one row per state that exists (a few dozen), whatever
the number of nodes.  Each count is its own ``GROUP BY`` (joined with
``UNION ALL``) so that the database answers the provision state,
maintenance and fault counts from their indexes alone; only the power
state, which has no index, reads the table.  With 100,000 nodes of
about 6 kB each, the statement took 100 ms on SQLite and 75 ms on
PostgreSQL (a single ``GROUP BY`` of all four columns: 190 ms and 86
ms).
"""

import dataclasses

import sqlalchemy as sa

from baremetal.db import engine
from baremetal.db import models

_NODES = models.TABLES['nodes']
_N = _NODES.c


def _part(kind: str, column, *where):
    label = sa.literal(kind, sa.String(1))
    value = column if column is not None \
        else sa.cast(sa.null(), sa.String(255))
    stmt = sa.select(label, value, sa.func.count()).select_from(_NODES)
    if where:
        stmt = stmt.where(*where)
    if column is not None:
        stmt = stmt.group_by(column)
    return stmt


_STMT = sa.union_all(
    _part('p', _N.provision_state),
    _part('w', _N.power_state),
    _part('m', None, _N.maintenance == sa.true()),
    _part('f', _N.fault, _N.fault.is_not(None)))


@dataclasses.dataclass
class NodeCounts:
    total: int = 0
    # provision state / power state / fault -> nodes; None: not set
    provision_state: dict = dataclasses.field(default_factory=dict)
    power_state: dict = dataclasses.field(default_factory=dict)
    fault: dict = dataclasses.field(default_factory=dict)
    maintenance: int = 0


def count_nodes() -> NodeCounts:
    """Nodes per provision state, power state and fault, and in
    maintenance (one statement)."""
    out = NodeCounts()
    with engine.reader() as conn:
        rows = conn.execute(_STMT).all()
    for kind, value, n in rows:
        if kind == 'p':
            out.provision_state[value] = n
            out.total += n
        elif kind == 'w':
            out.power_state[value] = n
        elif kind == 'f':
            out.fault[value] = n
        else:
            out.maintenance = n
    return out
