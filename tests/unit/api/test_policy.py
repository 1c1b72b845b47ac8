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
