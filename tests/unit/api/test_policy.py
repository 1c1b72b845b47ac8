"""Policy defaults: admins do anything; project members act on their own
nodes; readers only read."""

import pytest
from oslo_context import context as oslo_context

from baremetal.api import policy
from baremetal.common import exception
from tests import harness


@pytest.fixture(autouse=True)
def parsed_config():
    harness.configure()
    yield
    harness.CONF.reset()


class _Req:
    def __init__(self, **ctx):
        self.context = oslo_context.RequestContext(**ctx)


def test_every_rule_has_a_registered_default():
    names = [r.name for r in policy.list_rules()]
    assert len(names) == len(set(names))
    for rule in ('baremetal:node:get', 'baremetal:node:create',
                 'baremetal:node:set_provision_state',
                 'baremetal:port:create', 'baremetal:driver:get'):
        assert rule in names


def test_admin_may_create_nodes():
    policy.authorize(_Req(roles=['admin'], is_admin=True),
                     'baremetal:node:create')


def test_reader_may_not_create_nodes():
    req = _Req(roles=['reader'], project_id='p1')
    with pytest.raises(exception.NotAuthorized):
        policy.authorize(req, 'baremetal:node:create')


def test_member_sees_own_node_and_not_others():
    req = _Req(roles=['member', 'reader'], project_id='p1')
    policy.check_node(req, 'baremetal:node:get',
                      {'uuid': 'u1', 'owner': 'p1', 'lessee': None})
    policy.check_node(req, 'baremetal:node:update',
                      {'uuid': 'u3', 'owner': None, 'lessee': 'p1'})
    with pytest.raises(exception.NodeNotFound):
        policy.check_node(req, 'baremetal:node:get',
                          {'uuid': 'u2', 'owner': 'p2', 'lessee': None})


def test_project_scoped_list_is_filtered_by_owner_or_lessee():
    req = _Req(roles=['reader'], project_id='p1')
    filters = policy.node_list_filters(req)
    assert len(filters) == 1
    compiled = str(filters[0].compile(
        compile_kwargs={'literal_binds': True}))
    assert "owner = 'p1'" in compiled and "lessee = 'p1'" in compiled
    assert policy.node_list_filters(
        _Req(roles=['admin'], is_admin=True)) == []


def test_only_admins_may_disable_cleaning_by_default():
    rule = 'baremetal:node:disable_cleaning'
    policy.authorize(_Req(roles=['admin'], is_admin=True), rule)
    policy.authorize(_Req(roles=['member'], system_scope='all'), rule)
    for req in (_Req(roles=['member', 'reader'], project_id='p1'),
                _Req(roles=['reader'], system_scope='all')):
        with pytest.raises(exception.NotAuthorized):
            policy.authorize(req, rule, {'node.owner': 'p1',
                                         'node.lessee': None})


def test_member_allowed_to_update_may_not_set_automated_clean_false(
        tmp_path, monkeypatch):
    """A deployment that lets project members update their nodes still
    keeps them from switching off the cleaning between workloads."""
    from baremetal.api import auth
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text('"baremetal:node:update": "role:member"\n')
    ctx = auth.admin_context()
    # the noauth middleware's one context, turned into a member's below
    monkeypatch.setattr(auth, 'admin_context', lambda: ctx)
    monkeypatch.setattr(policy, '_enforcer', None)
    h = harness.Harness(tmp_path, overrides={
        'oslo_policy.policy_file': str(policy_file)})
    try:
        n = h.create_node(owner='p1')
        ctx.is_admin, ctx.system_scope = False, None
        ctx.roles, ctx.project_id = ['member', 'reader'], 'p1'
        path = '/v1/nodes/%s' % n['uuid']
        for value in (False, 'false'):
            status, body, _ = h.request('PATCH', path, [
                {'op': 'replace', 'path': '/automated_clean',
                 'value': value}])
            assert status == 403, body
            assert 'disable_cleaning' in harness.error_message(body)
        for value in (True, None):
            status, body, _ = h.request('PATCH', path, [
                {'op': 'replace', 'path': '/automated_clean',
                 'value': value}])
            assert status == 200, body
            assert body['automated_clean'] is value
        ctx.is_admin, ctx.roles = True, ['admin']
        status, body, _ = h.request('PATCH', path, [
            {'op': 'replace', 'path': '/automated_clean', 'value': False}])
        assert status == 200 and body['automated_clean'] is False
    finally:
        h.close()
