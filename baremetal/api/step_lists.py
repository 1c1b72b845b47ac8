"""Named lists of steps stored in a child table: deploy templates (their
steps carry a priority) and runbooks (theirs carry an order)."""

import dataclasses

from baremetal.common import exception
from baremetal.common import step_requests
from baremetal.common import traits
from baremetal.db import step_lists as db_step_lists


@dataclasses.dataclass(frozen=True)
class StepTable:
    stored: db_step_lists.StepLists     # db.runbooks.STEPS
    sort_key: str       # 'priority' or 'order'
    what: str           # 'deploy template', 'runbook' (messages)

    def steps_of(self, ids: list[int]) -> dict[int, list[dict]]:
        out: dict[int, list[dict]] = {}
        if not ids:
            return out
        fk = self.stored.fk
        rows = self.stored.steps_of(ids)
        rows.sort(key=lambda r: (r[fk], r['id']))
        for r in rows:
            out.setdefault(r[fk], []).append({
                'interface': r['interface'], 'step': r['step'],
                'args': r['args'] or {}, self.sort_key: r[self.sort_key]})
        return out

    def derive(self, rows):
        steps = self.steps_of([r['id'] for r in rows])
        return lambda r: {'steps': steps.get(r['id'], []),
                          'extra': r.get('extra') or {}}

    def check_name(self, name) -> None:
        """A list's name is a trait (the node trait it applies to)."""
        if not traits.is_valid(name):
            raise exception.InvalidParameterValue(
                err='%s name: %s' % (self.what.capitalize(),
                                     traits.describe(name)))

    def check_steps(self, value, kind: str, **shape) -> list[dict]:
        """A non-empty list of well-formed steps, none twice."""
        if not isinstance(value, list) or not value:
            raise exception.InvalidParameterValue(
                err='"steps" must be a non-empty list')
        return self.check_unique(step_requests.check_request_shape(
            value, kind, **shape))

    def check_unique(self, steps: list[dict]) -> list[dict]:
        seen = set()
        for s in steps:
            key = (s['interface'], s['step'])
            if key in seen:
                raise exception.InvalidParameterValue(
                    err='Duplicate step %s.%s in the %s' % (key + (
                        self.what,)))
            seen.add(key)
        return steps

    def save(self, parent_id: int, steps: list[dict]) -> None:
        self.stored.replace(parent_id, steps)

    def update(self, parent_id: int, values: dict,
               steps: list[dict] | None) -> None:
        """A PATCH's writes: the list's own fields, then its steps."""
        if values:
            self.stored.lists.update(parent_id, values)
        if steps is not None:
            self.save(parent_id, steps)

    def delete(self, parent_id: int) -> None:
        self.stored.delete(parent_id)
