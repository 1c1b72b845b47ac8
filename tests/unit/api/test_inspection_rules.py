"""/v1/inspection_rules (API 1.96): every endpoint, the version gate,
validation, sensitive rules and PATCH."""

import pytest

from tests import harness

V = '1.96'
PATH = '/v1/inspection_rules'
LOG = [{'op': 'log', 'args': {'msg': 'seen {node.uuid}'}}]
COND = [{'op': 'eq', 'args': {'values': ['{inventory[cpu][count]}', '4']}}]


def _err(body) -> str:
    return harness.error_message(body)


def _create(api, expect=201, version=V, **body):
    body.setdefault('actions', LOG)
    status, out, headers = api.request('POST', PATH, body, version=version)
    assert status == expect, out
    return out if expect != 201 else dict(out, _location=headers.get(
        'Location'))


def _patch(api, uuid, ops, version=V):
    return api.request('PATCH', '%s/%s' % (PATH, uuid), ops,
                       version=version)


# ------------------------------------------------------ version gate
@pytest.mark.parametrize('method,sub,body', [
    ('GET', '', None), ('POST', '', {'actions': LOG}),
    ('GET', '/%s' % ('1' * 8 + '-1111-1111-1111-' + '1' * 12), None),
    ('PATCH', '/%s' % ('1' * 8 + '-1111-1111-1111-' + '1' * 12),
     [{'op': 'replace', 'path': '/priority', 'value': 1}]),
    ('DELETE', '/%s' % ('1' * 8 + '-1111-1111-1111-' + '1' * 12), None),
])
def test_not_found_before_1_96(api, method, sub, body):
    # as Ironic: a read is 404, a write 405 (in the fault envelope)
    status, out, _ = api.request(method, PATH + sub, body, version='1.95')
    assert status == (404 if method == 'GET' else 405), out
    assert 'inspection rules' in harness.error_message(out)
    assert api.request('GET', PATH, version='1.95')[0] == 404
    # nothing was created
    assert api.request('GET', PATH, version=V)[1] == {'inspection_rules': []}


def test_version_above_maximum_is_not_acceptable(api):
    status, _, _ = api.request('GET', PATH, version='1.999')
    assert status == 406


# ------------------------------------------------------------ create
def test_create_shows_every_field_and_location(api):
    rule = _create(api, description='four CPUs', priority=50,
                   conditions=COND, actions=LOG)
    assert set(rule) == {'uuid', 'created_at', 'updated_at', 'description',
                         'priority', 'sensitive', 'phase', 'conditions',
                         'actions', 'links', '_location'}
    assert rule['description'] == 'four CPUs'
    assert rule['priority'] == 50 and rule['phase'] == 'main'
    assert rule['sensitive'] is False and rule['updated_at'] is None
    assert rule['conditions'] == COND and rule['actions'] == LOG
    assert rule['_location'].endswith('%s/%s' % (PATH, rule['uuid']))
    assert rule['links'][0]['href'].endswith('%s/%s' % (PATH, rule['uuid']))


def test_create_defaults_and_given_uuid(api):
    uuid = '2d3b3c3a-1a43-4f0a-9f3f-6f0b0e9b1c11'
    rule = _create(api, uuid=uuid)
    assert rule['uuid'] == uuid
    assert (rule['priority'], rule['phase'], rule['sensitive'],
            rule['conditions'], rule['description']) == \
        (0, 'main', False, [], None)
    out = _create(api, expect=409, uuid=uuid)
    assert _err(out) == 'A rule with UUID %s already exists.' % uuid


def test_create_shows_loop_and_multiple_only_with_a_loop(api):
    rule = _create(api, conditions=[
        {'op': 'eq', 'args': ['{item}', 'x'], 'loop': ['x', 'y'],
         'other': 1},
        {'op': '!is-empty', 'args': {'value': 1}, 'loop': []}],
        actions=[{'op': 'add-trait', 'args': {'name': 'CUSTOM_{item}'},
                  'loop': ['A', 'B']},
                 {'op': 'log', 'args': {'msg': 'x'}, 'loop': []}])
    assert rule['conditions'] == [
        {'op': 'eq', 'args': ['{item}', 'x'], 'loop': ['x', 'y'],
         'multiple': 'any'},
        {'op': '!is-empty', 'args': {'value': 1}}]
    assert rule['actions'] == [
        {'op': 'add-trait', 'args': {'name': 'CUSTOM_{item}'},
         'loop': ['A', 'B']},
        {'op': 'log', 'args': {'msg': 'x'}}]


def test_create_accepts_the_strings_the_cli_sends(api):
    rule = _create(api, priority='7', sensitive='true')
    assert rule['priority'] == 7 and rule['sensitive'] is True


_BAD = [
    ({'actions': None}, 'actions must be a list'),
    ({'actions': []}, 'actions must hold at least 1'),
    ({'actions': [{'op': 'log'}]}, "'args' is a required property"),
    ({'actions': [{'op': 'log', 'args': 'x'}]},
     'args must be a list or an object'),
    ({'actions': [{'op': 'nope', 'args': {}}]},
     'Unsupported action operator: nope'),
    ({'actions': [{'op': 'log', 'args': {}}]},
     'Invalid parameters for action operator log: missing required '
     'argument(s): msg'),
    ({'actions': [{'op': 'log', 'args': {'msg': 1, 'bogus': 2}}]},
     'unexpected argument(s): bogus'),
    ({'actions': [{'op': 'log', 'args': {'msg': 1, 'level': 'loud'}}]},
     'Invalid log level: loud'),
    ({'actions': [{'op': 'log', 'args': ['a', 'b', 'c']}]},
     'too many arguments'),
    ({'actions': [{'op': 'log', 'args': []}]},
     'missing required argument(s): msg'),
    ({'actions': LOG, 'loop': 1}, 'Unknown attribute(s) for inspection '
     'rule: loop'),
    ({'actions': [dict(LOG[0], loop='x')]}, 'loop must be a list'),
    ({'actions': LOG, 'conditions': None}, 'conditions must be a list'),
    ({'actions': LOG, 'conditions': [{'op': 'nope', 'args': {}}]},
     'Unsupported condition operator: nope'),
    ({'actions': LOG, 'conditions': [{'op': '!!eq', 'args': {}}]},
     'Multiple exclamation marks'),
    ({'actions': LOG, 'conditions': [{'op': 'eq', 'args': {'value': 1}}]},
     'Invalid parameters for condition operator eq: missing required '
     'argument(s): values; unexpected argument(s): value'),
    ({'actions': LOG, 'conditions': [
        {'op': 'eq', 'args': {'values': []}, 'multiple': 'some'}]},
     'multiple must be one of any, all, first, last'),
    ({'actions': LOG, 'conditions': [
        {'op': 'matches', 'args': {'value': 'a', 'regex': '('}}]},
     'invalid regular expression'),
    ({'actions': LOG, 'priority': -1},
     'Priority must be between 0 and 9999 for user-defined rules.'),
    ({'actions': LOG, 'priority': 10000},
     'Priority must be between 0 and 9999 for user-defined rules.'),
    ({'actions': LOG, 'priority': 1.5}, 'priority must be an integer'),
    ({'actions': LOG, 'priority': True}, 'priority must be an integer'),
    ({'actions': LOG, 'phase': 'late'},
     'Invalid phase: late. Valid phases are: main'),
    ({'actions': LOG, 'phase': None},
     'Invalid phase: None. Valid phases are: main'),
    ({'actions': LOG, 'sensitive': 'maybe'}, 'sensitive must be a boolean'),
    ({'actions': LOG, 'description': 'x' * 256},
     'description must be a string of at most 255'),
    ({'actions': LOG, 'uuid': 'not-a-uuid'}, 'Expected a UUID'),
    ({'actions': LOG, 'scope': 'rack1'},
     'Unknown attribute(s) for inspection rule: scope'),
    ({}, "'actions' is a required property"),
]


@pytest.mark.parametrize('body,message', _BAD)
def test_create_refuses_bad_rules(api, body, message):
    status, out, _ = api.request('POST', PATH, body, version=V)
    assert status == 400, out
    assert message in _err(out)
    assert api.request('GET', PATH, version=V)[1] == {'inspection_rules': []}


def test_create_reports_every_bad_op_at_once(api):
    out = _create(api, expect=400, phase='x', actions=[
        {'op': 'log', 'args': {}}, {'op': 'fail', 'args': {}}])
    msg = _err(out)
    assert msg.startswith('Multiple validation errors occurred: ')
    assert 'Invalid phase: x' in msg and 'operator fail' in msg


@pytest.mark.parametrize('raw', [b'[1]', b'"x"', b'{bad json'])
def test_create_refuses_a_body_that_is_no_object(api, raw):
    status, out, _ = api.request('POST', PATH, raw=raw, version=V)
    assert status == 400, out


# ---------------------------------------------------------- list/show
def _three(api):
    a = _create(api, description='a', priority=5)
    b = _create(api, description='b', priority=9, conditions=COND)
    c = _create(api, description='c', priority=1, sensitive=True,
                conditions=COND)
    return a, b, c


def test_list_short_detail_and_fields(api):
    a, b, c = _three(api)
    rules = api.request('GET', PATH, version=V)[1]['inspection_rules']
    assert [r['uuid'] for r in rules] == [a['uuid'], b['uuid'], c['uuid']]
    assert set(rules[0]) == {'uuid', 'description', 'priority', 'phase',
                             'links'}
    detail = api.request('GET', PATH + '?detail=True', version=V)[1]
    by = {r['uuid']: r for r in detail['inspection_rules']}
    assert by[b['uuid']]['conditions'] == COND
    assert by[c['uuid']]['conditions'] is None      # sensitive
    assert by[c['uuid']]['actions'] is None
    some = api.request('GET', PATH + '?fields=uuid,actions',
                       version=V)[1]['inspection_rules']
    assert set(some[0]) == {'uuid', 'actions', 'links'}
    assert [r['actions'] for r in some] == [LOG, LOG, None]


def test_list_sort_limit_marker_and_phase(api):
    a, b, c = _three(api)
    status, out, _ = api.request(
        'GET', PATH + '?sort_key=priority&sort_dir=desc&limit=2', version=V)
    assert status == 200
    assert [r['uuid'] for r in out['inspection_rules']] == \
        [b['uuid'], a['uuid']]
    assert 'marker=%s' % a['uuid'] in out['next']
    assert '/v1/inspection_rules?' in out['next']
    rest = api.request('GET', PATH + '?sort_key=priority&sort_dir=desc'
                       '&marker=%s' % a['uuid'], version=V)[1]
    assert [r['uuid'] for r in rest['inspection_rules']] == [c['uuid']]
    assert len(api.request('GET', PATH + '?phase=main',
                           version=V)[1]['inspection_rules']) == 3
    assert api.request('GET', PATH + '?phase=other',
                       version=V)[1]['inspection_rules'] == []


@pytest.mark.parametrize('query,status,message', [
    ('detail=True&fields=uuid', 400,
     'Can not specify ?detail=True and fields in the same request.'),
    ('fields=bogus', 400, 'Field(s) "bogus" are not valid'),
    ('sort_key=actions', 400, 'is an invalid field for sorting'),
    ('sort_key=conditions', 400, 'is an invalid field for sorting'),
    ('sort_dir=up', 400, 'Invalid sort direction'),
    ('limit=-1', 400, 'Limit must be positive'),
    ('limit=x', 400, 'expected an integer'),
    ('detail=maybe', 400, 'expected a boolean'),
    ('scope=rack1', 400, 'Unexpected arguments: scope'),
    ('marker=nope', 404, 'Rule nope could not be found.'),
])
def test_list_refuses_bad_queries(api, query, status, message):
    _create(api)
    got, out, _ = api.request('GET', PATH + '?' + query, version=V)
    assert got == status, out
    assert message in _err(out)


def test_show_and_fields(api):
    b = _create(api, description='b', conditions=COND)
    shown = api.request('GET', '%s/%s' % (PATH, b['uuid']), version=V)[1]
    assert shown['conditions'] == COND and shown['description'] == 'b'
    some = api.request('GET', '%s/%s?fields=uuid,priority' % (
        PATH, b['uuid']), version=V)[1]
    assert set(some) == {'uuid', 'priority', 'links'}
    status, out, _ = api.request('GET', '%s/%s?fields=nope' % (
        PATH, b['uuid']), version=V)
    assert status == 400 and 'nope' in _err(out)


def test_show_masks_a_sensitive_rule(api):
    c = _create(api, sensitive=True, conditions=COND)
    assert c['conditions'] is None and c['actions'] is None
    shown = api.request('GET', '%s/%s' % (PATH, c['uuid']), version=V)[1]
    assert shown['sensitive'] is True
    assert shown['conditions'] is None and shown['actions'] is None


def test_show_unknown_and_malformed(api):
    uuid = '9d3b3c3a-1a43-4f0a-9f3f-6f0b0e9b1c11'
    status, out, _ = api.request('GET', '%s/%s' % (PATH, uuid), version=V)
    assert status == 404 and _err(out) == 'Rule %s could not be found.' % uuid
    status, out, _ = api.request('GET', PATH + '/nope', version=V)
    assert status == 400 and 'nope' in _err(out)


# -------------------------------------------------------------- patch
def test_patch_fields_and_updated_at(api):
    r = _create(api, conditions=COND)
    status, out, _ = _patch(api, r['uuid'], [
        {'op': 'replace', 'path': '/priority', 'value': 70},
        {'op': 'add', 'path': '/description', 'value': 'new'},
        {'op': 'add', 'path': '/conditions/-', 'value': {
            'op': 'is-true', 'args': {'value': True}}},
        {'op': 'add', 'path': '/actions/0/args/level', 'value': 'debug'}])
    assert status == 200, out
    assert out['priority'] == 70 and out['description'] == 'new'
    assert out['conditions'][1] == {'op': 'is-true',
                                    'args': {'value': True}}
    assert out['actions'] == [{'op': 'log', 'args': {
        'msg': 'seen {node.uuid}', 'level': 'debug'}}]
    assert out['updated_at'] is not None
    shown = api.request('GET', '%s/%s' % (PATH, r['uuid']), version=V)[1]
    assert shown == out


def test_patch_remove_resets_to_defaults(api):
    r = _create(api, priority=5, description='d', conditions=COND)
    status, out, _ = _patch(api, r['uuid'], [
        {'op': 'remove', 'path': '/priority'},
        {'op': 'remove', 'path': '/description'},
        {'op': 'remove', 'path': '/phase'},
        {'op': 'remove', 'path': '/conditions'}])
    assert status == 200, out
    assert (out['priority'], out['description'], out['phase'],
            out['conditions']) == (0, None, 'main', [])


@pytest.mark.parametrize('ops,status,message', [
    ([{'op': 'remove', 'path': '/actions'}], 400, 'mandatory attribute'),
    ([{'op': 'replace', 'path': '/actions', 'value': []}], 400,
     'actions must hold at least 1'),
    ([{'op': 'replace', 'path': '/actions/0/op', 'value': 'bogus'}], 400,
     'Unsupported action operator: bogus'),
    ([{'op': 'replace', 'path': '/priority', 'value': 10000}], 400,
     'Priority must be between 0 and 9999'),
    ([{'op': 'replace', 'path': '/phase', 'value': 'x'}], 400,
     'Invalid phase: x'),
    ([{'op': 'replace', 'path': '/uuid', 'value':
       '9d3b3c3a-1a43-4f0a-9f3f-6f0b0e9b1c11'}], 400, 'internal attribute'),
    ([{'op': 'replace', 'path': '/created_at', 'value': 'x'}], 400,
     'internal attribute'),
    ([{'op': 'add', 'path': '/scope', 'value': 'x'}], 400,
     'unknown attribute scope'),
    ([{'op': 'remove', 'path': '/conditions/5'}], 400, "Couldn't apply"),
    ([{'op': 'move', 'path': '/description', 'from': '/phase'}], 400,
     'Invalid patch operation'),
    ({}, 400, 'non-empty list'),
])
def test_patch_refuses_bad_changes(api, ops, status, message):
    r = _create(api, conditions=COND)
    got, out, _ = _patch(api, r['uuid'], ops)
    assert got == status, out
    assert message in _err(out)
    shown = api.request('GET', '%s/%s' % (PATH, r['uuid']), version=V)[1]
    assert shown['conditions'] == COND and shown['updated_at'] is None


def test_patch_sensitive_cannot_be_unset(api):
    r = _create(api, conditions=COND)
    status, out, _ = _patch(api, r['uuid'], [
        {'op': 'replace', 'path': '/sensitive', 'value': True}])
    assert status == 200 and out['sensitive'] is True
    assert out['conditions'] is None and out['actions'] is None
    for ops in ([{'op': 'replace', 'path': '/sensitive', 'value': False}],
                [{'op': 'remove', 'path': '/sensitive'}]):
        status, out, _ = _patch(api, r['uuid'], ops)
        assert status == 400, out
        assert 'cannot have the sensitive flag unset' in _err(out)
    # its hidden conditions and actions can still be patched
    status, out, _ = _patch(api, r['uuid'], [
        {'op': 'replace', 'path': '/actions/0/args/msg', 'value': 'y'}])
    assert status == 200, out
    from baremetal.db import inspection_rules as db_inspection_rules
    row = db_inspection_rules.ROWS.get(r['uuid'])
    assert row['actions'] == [{'op': 'log', 'args': {'msg': 'y'}}]
    assert row['conditions'] == COND


def test_patch_unknown_and_malformed(api):
    uuid = '9d3b3c3a-1a43-4f0a-9f3f-6f0b0e9b1c11'
    ops = [{'op': 'replace', 'path': '/priority', 'value': 1}]
    assert _patch(api, uuid, ops)[0] == 404
    status, out, _ = _patch(api, 'nope', ops)
    assert status == 400 and 'nope' in _err(out)


# ------------------------------------------------------------- delete
def test_delete(api):
    r = _create(api)
    path = '%s/%s' % (PATH, r['uuid'])
    status, out, _ = api.request('DELETE', path, version=V)
    assert status == 204 and out is None
    assert api.request('GET', path, version=V)[0] == 404
    assert api.request('DELETE', path, version=V)[0] == 404
    assert api.request('DELETE', PATH + '/nope', version=V)[0] == 400


def test_delete_on_the_collection_is_not_allowed(api):
    _create(api)
    status, _, headers = api.request('DELETE', PATH, version=V)
    assert status == 405
    assert 'POST' in headers['Allow']
    assert len(api.request('GET', PATH, version=V)[1][
        'inspection_rules']) == 1


# ------------------------------------------------------------- policy
class _Req:
    """What the controller sees of a keystone-authenticated caller."""

    def __init__(self, **ctx):
        from oslo_context import context as oslo_context
        self.context = oslo_context.RequestContext(**ctx)
        self.version = 96

    def json(self):
        return {'actions': LOG}

    def json_object(self):
        return self.json()


@pytest.mark.parametrize('call', ['create_rule', 'patch_rule',
                                  'delete_rule', 'get_rule'])
def test_project_member_may_not_use_rules(api, call):
    from baremetal.api.controllers.v1 import inspection_rules as ctl
    from baremetal.common import exception
    req = _Req(roles=['member', 'reader'], project_id='p1')
    args = () if call == 'create_rule' else ('nope',)
    with pytest.raises(exception.NotAuthorized):
        getattr(ctl, call)(req, *args)


def test_system_reader_may_read_but_not_write(api):
    from baremetal.api import policy
    from baremetal.common import exception
    req = _Req(roles=['reader'], system_scope='all')
    policy.authorize(req, 'baremetal:inspection_rule:get')
    with pytest.raises(exception.NotAuthorized):
        policy.authorize(req, 'baremetal:inspection_rule:create')


def test_policy_rules_are_registered():
    from baremetal.api import policy
    names = {r.name for r in policy.list_rules()}
    for action in ('get', 'list', 'list_all', 'create', 'update',
                   'delete'):
        assert 'baremetal:inspection_rule:%s' % action in names
