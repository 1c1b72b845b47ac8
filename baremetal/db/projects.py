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


_N = models.TABLES['nodes'].c
# the nodes a project owns or leases, built once with the project a
# parameter: a list filtered by it keeps its page statement
# (rows.Bound), and so do the other resources' lists narrowed to such
# nodes or to the rows a project owns (each built once per table)
_NODES_OF = db_rows.fixed(sa.or_(
    _N.owner == sa.bindparam('project_owner', type_=_N.owner.type,
                             required=False),
    _N.lessee == sa.bindparam('project_lessee', type_=_N.lessee.type,
                              required=False)))


def _of(project: str) -> dict:
    return {'project_owner': project, 'project_lessee': project}


def nodes_of(project: str) -> db_rows.Bound:
    """Nodes ``project`` owns or leases."""
    return db_rows.Bound(_NODES_OF, _of(project))


def _children(table):
    n = models.TABLES['nodes']
    return table.c.node_id.in_(sa.select(n.c.id).where(_NODES_OF))


def _owned(table):
    return table.c.owner == sa.bindparam(
        'project_owner', type_=table.c.owner.type, required=False)


def children_of(rows: db_rows.Rows, project: str) -> db_rows.Bound:
    """Those of ``rows`` (with a ``node_id``) whose node ``project``
    owns or leases."""
    table = rows.table
    return db_rows.Bound(db_rows.fixed_once(
        ('projects.children', table.name), lambda: _children(table)),
        _of(project))


def owned_by(rows: db_rows.Rows, project: str) -> db_rows.Bound:
    """Those of ``rows`` whose ``owner`` is ``project``."""
    table = rows.table
    return db_rows.Bound(db_rows.fixed_once(
        ('projects.owned', table.name), lambda: _owned(table)),
        {'project_owner': project})


def node_projects(node_id: int | None) -> dict:
    """``owner`` and ``lessee`` of a node by id (neither without one)."""
    if node_id is None:
        return {}
    n = models.TABLES['nodes']
    rows = db_rows.query(n, (n.c.id == node_id,), ('owner', 'lessee'))
    return rows[0] if rows else {}
