"""Which rows a project sees: the SQL conditions the API adds to a list
for a project-scoped caller (api/policy.list_project decides when).

A project sees the nodes it owns or leases, the ports, port groups and
volume connectors/targets of those nodes, and the allocations it owns.
Each is one condition of the list's own statement (a sub-select on the
nodes for the node's children), so pagination and limits stay in SQL.
"""

import sqlalchemy as sa

from baremetal.db import models
from baremetal.db import rows as db_rows


def nodes_of(project: str):
    """Nodes ``project`` owns or leases."""
    n = models.TABLES['nodes']
    return sa.or_(n.c.owner == project, n.c.lessee == project)


def children_of(rows: db_rows.Rows, project: str):
    """Those of ``rows`` (with a ``node_id``) whose node ``project``
    owns or leases."""
    n = models.TABLES['nodes']
    return rows.table.c.node_id.in_(
        sa.select(n.c.id).where(nodes_of(project)))


def owned_by(rows: db_rows.Rows, project: str):
    """Those of ``rows`` whose ``owner`` is ``project``."""
    return rows.table.c.owner == project


def node_projects(node_id: int | None) -> dict:
    """``owner`` and ``lessee`` of a node by id (neither without one)."""
    if node_id is None:
        return {}
    n = models.TABLES['nodes']
    rows = db_rows.query(n, (n.c.id == node_id,), ('owner', 'lessee'))
    return rows[0] if rows else {}
