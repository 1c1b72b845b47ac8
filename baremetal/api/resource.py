"""Shared machinery for the simple resources (ports, portgroups, chassis,
allocations, deploy templates, volume connectors and targets).

A resource declares its rows (``db.<resource>.ROWS``: the table and
the error of a missing row), fields (with the first version showing
each), the fields of its short list view, and how to turn a row into
the API dict; this module does list / get / create / patch / delete.
"""

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from baremetal.api import collection
from baremetal.api import notify
from baremetal.api import patching
from baremetal.api import policy
from baremetal.api import versions
from baremetal.api.controllers.v1 import node_view
from baremetal.common import exception
from baremetal.db import nodes as db_nodes
from baremetal.db import projects
from baremetal.db import rows as db_rows

# a logical name, as an identifier in a path (Ironic's uuid_or_name)
_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]{1,255}$')


@dataclasses.dataclass
class Resource:
    name: str                       # URL segment: 'ports'
    singular: str                   # 'port' (policy, messages)
    rows: db_rows.Rows              # db.ports.ROWS
    fields: tuple[str, ...]         # every API field, in order
    list_fields: tuple[str, ...]    # the short list view
    field_versions: dict
    readonly: frozenset = frozenset(('uuid', 'created_at', 'updated_at',
                                     'links'))
    sort_keys: frozenset = frozenset(('id', 'uuid', 'created_at',
                                      'updated_at'))
    # row -> API values for derived fields (e.g. node_uuid)
    derive: Callable[[list[dict]], Callable[[dict], dict]] | None = None
    # (version, API values) -> None: what a version shows differently
    adjust: Callable[[int, dict], None] | None = None
    sub_links: tuple[str, ...] = ()
    marker_key: str = 'uuid'
    collection_key: str | None = None   # JSON key of a list (default name)
    detail_since: int = versions.DETAIL_QUERY   # when ?detail= appeared
    # the 400 of ?detail=true with ?fields= (Ironic's text)
    detail_and_fields: str = collection.DETAIL_AND_FIELDS
    # set: a path must name one by UUID (``ident_names``: or by a
    # logical name; DELETE always by UUID), or it is a 400 naming the
    # parameter ``<ident_label>_uuid``/``_ident`` as Ironic does
    ident_label: str | None = None
    ident_names: bool = False
    # whose rows a project-scoped caller sees: 'node' (those of the
    # nodes its project owns or leases), 'owner' (those it owns) or
    # None (system resources: no project sees them)
    project_scope: str | None = None
    # the request-body schema (baremetal/api/schemas/<resource>.py)
    body_schema: Any = None

    def target(self, row: dict) -> dict:
        """The policy target of a row: its node's or its own project."""
        if self.project_scope == 'owner':
            return {'%s.owner' % self.singular: row.get('owner')}
        return policy.node_target(projects.node_projects(row.get('node_id')))

    def project_filter(self, req, asked: str | None = None) -> list:
        """[] when the caller lists every row; else the condition
        narrowing a list to its project's rows (403 when it may do
        neither)."""
        if self.project_scope is None:
            policy.authorize(req, 'baremetal:%s:get' % self.singular)
            return []
        project = policy.list_project(req, self.singular, asked)
        if project is None:
            return []
        if self.project_scope == 'owner':
            return [projects.owned_by(self.rows, project)]
        return [projects.children_of(self.rows, project)]

    def check_ident(self, ident: str, names: bool | None = None) -> None:
        if self.ident_label is None or db_rows.is_uuid_like(ident):
            return
        names = self.ident_names if names is None else names
        if names and _NAME_RE.match(ident):
            return
        raise exception.InvalidParameterValue(
            err='Expected UUID%s for %s_%s: %s' % (
                ' or name' if names else '', self.ident_label,
                'ident' if names else 'uuid', ident))

    def visible(self, version: int) -> list[str]:
        return [f for f in self.fields
                if self.field_versions.get(f, 0) <= version]

    def render(self, req, rows: list[dict], fields, detail=True
               ) -> list[dict]:
        extra = self.derive(rows) if self.derive else (lambda r: {})
        out = []
        for r in rows:
            values = dict(r)
            values.update(extra(r))
            if self.adjust:
                self.adjust(req.version, values)
            d = {}
            for f in fields:
                v = values.get(f)
                if f in ('created_at', 'updated_at'):
                    v = node_view.iso(v)
                d[f] = v
            d['links'] = req.links(self.name, r['uuid'])
            if detail:
                for s in self.sub_links:
                    d[s] = req.links(self.name, r['uuid'], s)
            out.append(d)
        return out

    def get_row(self, req, ident: str) -> dict:
        """The row; 404 also when the caller may not see it, 403 when a
        rule the handler asked for refuses it."""
        if self.project_scope is None:
            policy.authorize(req, 'baremetal:%s:get' % self.singular)
        self.check_ident(ident)
        row = self.rows.get(ident)
        if self.project_scope is not None:
            policy.check_row(req, 'baremetal:%s:get' % self.singular,
                             self.target(row), self.rows.missing(ident))
        return row

    def list(self, req, filters=(), detail: bool | None = None,
             path: str | None = None) -> dict:
        filters = list(filters) + self.project_filter(req)
        if detail is None:
            detail = collection.detail_flag(req, self.detail_since)
        visible = self.visible(req.version)
        fields = collection.shown(req, detail, visible, set(visible),
                                  self.field_versions, self.list_fields,
                                  self.detail_and_fields)
        limit = collection.limit(req)
        sort_key, sort_dir = collection.sort(
            req, set(self.sort_keys), self.field_versions)
        marker = None
        if req.params.get('marker'):
            marker = self.rows.get(req.params['marker'])
        rows = self.rows.list_page(filters, limit, marker, sort_key,
                                   sort_dir)
        out = {self.collection_key or self.name:
               self.render(req, rows, fields, detail)}
        out.update(collection.next_link(req, path or self.name, rows,
                                        limit, self.marker_key))
        return out

    def show(self, req, ident: str) -> dict:
        visible = self.visible(req.version)
        fields = collection.fields(req, set(visible), self.field_versions)
        row = self.get_row(req, ident)
        # an empty ?fields= shows the links alone, as in Ironic
        return self.render(req, [row], visible if fields is None
                           else fields, detail=fields is None)[0]

    def view(self, req, row: dict) -> dict:
        """One row as the API shows it at the request's version, every
        visible field (what a create or a PATCH answers)."""
        return self.render(req, [row], self.visible(req.version))[0]

    def created(self, req, row: dict) -> dict:
        req.response_headers['Location'] = req.link(self.name,
                                                    row['uuid'])['href']
        return self.view(req, row)

    def check_body(self, req, body: dict, allowed: set) -> None:
        if self.body_schema is not None:
            self.body_schema.check_create(body)
        unknown = set(body) - allowed
        if unknown:
            raise exception.InvalidParameterValue(
                err='Unknown attribute(s) for %s: %s'
                % (self.singular, ', '.join(sorted(unknown))))
        too_new = [k for k in body
                   if self.field_versions.get(k, 0) > req.version]
        if too_new:
            raise exception.NotAcceptable(
                reason='Field(s) %s need a newer API version'
                % ', '.join(sorted(too_new)))

    def patched(self, req, row: dict, mandatory=()) -> dict:
        """Apply the request's JSON PATCH to the row's API view; return
        the changed API fields."""
        ops = patching.parse(req.json())
        if self.body_schema is not None:
            self.body_schema.check_patch_paths(ops, req.version)
            mandatory = ()      # the schema's required properties
        visible = self.visible(req.version)
        current = self.render(req, [row], visible, detail=False)[0]
        current.pop('links', None)
        updated = patching.apply(current, ops, req.version,
                                 readonly=self.readonly,
                                 field_versions=self.field_versions,
                                 mandatory=tuple(mandatory))
        if self.body_schema is not None:
            self.body_schema.check_patched(current, updated, ops)
        return {k: v for k, v in updated.items() if current.get(k) != v}

    def delete(self, req, ident: str) -> None:
        policy.authorize(req, 'baremetal:%s:delete' % self.singular)
        self.check_ident(ident, names=False)
        row = self.rows.get(ident)
        if self.project_scope is not None:
            policy.check_row(req, 'baremetal:%s:get' % self.singular,
                             self.target(row), self.rows.missing(ident))
        with notify.crud(req, self.singular, 'delete', row, self.derive):
            self.rows.delete(row['id'])


def extra_of(value) -> dict:
    """An ``extra`` field as a request gives it: an object (null is an
    empty one), or a 400."""
    if value is not None and not isinstance(value, dict):
        raise exception.InvalidParameterValue(
            err='extra must be a JSON object')
    return value or {}


def node_uuid_map(rows: list[dict]) -> dict[int, str]:
    ids = {r['node_id'] for r in rows if r.get('node_id')}
    if not ids:
        return {}
    return db_nodes.uuids_by_id(ids)


def node_id_for(ident: Any, field: str = 'node_uuid', req=None,
                rules=()) -> int:
    """The id of the node named by a body field (uuid or name).  With
    ``req``, before anything is written: a node the caller may not see
    is not found, and the rules waiting on the request (the create rule
    of a port, port group or volume object) and ``rules`` (a row moved
    to this node) must allow the caller on this node (403)."""
    if not isinstance(ident, str):
        raise exception.InvalidParameterValue(
            err='%s must be a node UUID or name' % field)
    not_found = exception.InvalidParameterValue(
        err='%s: node %s could not be found' % (field, ident))
    try:
        row = db_nodes.get_node(ident, ('id', 'uuid', 'owner', 'lessee'))
    except exception.NodeNotFound:
        raise not_found from None
    if req is not None:
        try:
            policy.check_node(req, 'baremetal:node:get', row, rules)
        except exception.NodeNotFound:
            raise not_found from None
    return row['id']
