"""/v1/inspection_rules (API 1.96): conditions on what inspection finds
and the actions to take on the node when they hold.  What a rule may
say is checked by ``common/inspection_rules.py``; the conductor runs the
rules when inspection data arrives.  A sensitive rule never shows its
conditions and actions, and stays sensitive."""

from baremetal.api import patching
from baremetal.api import policy
from baremetal.api import resource
from baremetal.api import versions
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import inspection_rules as rules
from baremetal.db import inspection_rules as db_inspection_rules
from baremetal.db import rows as db_rows

_QUERY = frozenset(('detail', 'fields', 'marker', 'limit', 'phase',
                    'sort_dir', 'sort_key'))
_READONLY = frozenset(('uuid', 'created_at', 'updated_at', 'links'))
# what a PATCH that removes a field leaves
_DEFAULTS = {'priority': 0, 'phase': rules.PHASES[0], 'sensitive': False,
             'conditions': []}


def _shown(items: list | None, conditions: bool) -> list:
    """Conditions or actions as the API shows them: op and args, the
    loop if there is one (and for a condition how its results
    combine)."""
    out = []
    for item in items or ():
        shown = {'op': item['op'], 'args': item['args']}
        if item.get('loop'):
            shown['loop'] = item['loop']
            if conditions:
                shown['multiple'] = item.get('multiple', 'any')
        out.append(shown)
    return out


def _derive(rows):
    def view(r: dict) -> dict:
        if r['sensitive']:
            return {'conditions': None, 'actions': None}
        return {'conditions': _shown(r['conditions'], True),
                'actions': _shown(r['actions'], False)}
    return view


RES = resource.Resource(
    name='inspection_rules', singular='inspection_rule',
    rows=db_inspection_rules.ROWS,
    fields=('uuid', 'created_at', 'updated_at', 'description', 'priority',
            'sensitive', 'phase', 'conditions', 'actions'),
    list_fields=('uuid', 'description', 'priority', 'phase'),
    field_versions={},
    sort_keys=frozenset(('id', 'uuid', 'description', 'priority',
                         'sensitive', 'phase', 'created_at',
                         'updated_at')),
    derive=_derive)


def _stored(items: list, conditions: bool) -> list:
    """What is kept of each condition or action (other keys of an item
    are accepted and dropped, as Ironic never shows them)."""
    keys = ('op', 'args', 'loop', 'multiple') if conditions else \
        ('op', 'args', 'loop')
    return [{k: item[k] for k in keys if k in item} for item in items]


def _values(rule: dict) -> dict:
    checked = rules.validate_rule(rule)
    return {'description': checked['description'],
            'priority': checked['priority'],
            'sensitive': checked['sensitive'],
            'phase': checked['phase'],
            'conditions': _stored(checked['conditions'], True),
            'actions': _stored(checked['actions'], False)}


def _row(req, ident: str) -> dict:
    if not db_rows.is_uuid_like(ident):
        raise exception.InvalidUUID(uuid=ident)
    return RES.get_row(req, ident)


@route('GET', '/v1/inspection_rules', min_version=versions.INSPECTION_RULES)
def list_rules(req):
    unknown = sorted(set(req.params) - _QUERY)
    if unknown:
        raise exception.InvalidParameterValue(
            err='Unexpected arguments: %s' % ', '.join(unknown))
    phase = req.params.get('phase')
    return RES.list(req, filters=(db_inspection_rules.in_phase(phase),)
                    if phase else ())


@route('GET', '/v1/inspection_rules/{rule}',
       min_version=versions.INSPECTION_RULES)
def get_rule(req, rule):
    policy.authorize(req, 'baremetal:inspection_rule:get')
    if not db_rows.is_uuid_like(rule):
        raise exception.InvalidUUID(uuid=rule)
    return RES.show(req, rule)


@route('POST', '/v1/inspection_rules', status=201,
       min_version=versions.INSPECTION_RULES)
def create_rule(req):
    policy.authorize(req, 'baremetal:inspection_rule:create')
    body = req.json_object()
    values = _values(body)
    values['uuid'] = body.get('uuid')    # none: create makes one
    try:
        row = db_inspection_rules.ROWS.create(values)
    except exception.ResourceAlreadyExists:
        raise exception.InspectionRuleAlreadyExists(
            uuid=values['uuid']) from None
    return RES.created(req, row)


def _unsets_sensitive(ops: list[dict]) -> bool:
    return any(op['path'].rstrip('/') == '/sensitive' and
               (op['op'] == 'remove' or
                not rules.to_bool('sensitive', op.get('value')))
               for op in ops)


@route('PATCH', '/v1/inspection_rules/{rule}',
       min_version=versions.INSPECTION_RULES)
def patch_rule(req, rule):
    policy.authorize(req, 'baremetal:inspection_rule:update')
    ops = patching.parse(req.json())
    row = _row(req, rule)
    if row['sensitive'] and _unsets_sensitive(ops):
        raise exception.PatchError(
            patch=ops,
            reason='Inspection rules cannot have the sensitive flag unset.')
    current = {f: row[f] for f in ('uuid', 'description', 'priority',
                                   'sensitive', 'phase', 'conditions',
                                   'actions')}
    current['conditions'] = current['conditions'] or []
    patched = patching.apply(current, ops, req.version, readonly=_READONLY,
                             field_versions={}, mandatory=('actions',))
    for key, default in _DEFAULTS.items():
        if patched.get(key) is None:
            patched[key] = default
    if patched.get('actions') is None:
        raise exception.InvalidParameterValue(
            err="'actions' is a required property")
    values = _values(patched)
    changed = {k: v for k, v in values.items() if row[k] != v}
    if changed:
        db_inspection_rules.ROWS.update(row['id'], changed)
    return RES.view(req, RES.get_row(req, row['uuid']))


@route('DELETE', '/v1/inspection_rules/{rule}', status=204,
       min_version=versions.INSPECTION_RULES)
def delete_rule(req, rule):
    policy.authorize(req, 'baremetal:inspection_rule:delete')
    row = _row(req, rule)
    db_inspection_rules.ROWS.delete(row['id'])
