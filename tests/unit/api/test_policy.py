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
        self.pending_rules = []


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
    policy.check_node(req, 'baremetal:node:get',
                      {'uuid': 'u3', 'owner': None, 'lessee': 'p1'},
                      ['baremetal:node:update'])
    with pytest.raises(exception.NodeNotFound):
        policy.check_node(req, 'baremetal:node:get',
                          {'uuid': 'u2', 'owner': 'p2', 'lessee': None})


def test_project_scoped_list_is_filtered_by_owner_or_lessee():
    from baremetal.db import projects
    req = _Req(roles=['reader'], project_id='p1')
    assert policy.list_project(req, 'node') == 'p1'
    bound = projects.nodes_of('p1')
    compiled = str(bound.clause.compile())
    assert 'owner = ' in compiled and 'lessee = ' in compiled
    assert set(bound.params.values()) == {'p1'}
    assert policy.list_project(_Req(roles=['admin'], is_admin=True),
                               'node') is None
    assert policy.list_project(_Req(roles=['reader'], system_scope='all'),
                               'node') is None
    # another project's nodes may not be asked for
    with pytest.raises(exception.NotAuthorized):
        policy.list_project(req, 'node', 'p2')
    # a token with no role on the API lists nothing
    with pytest.raises(exception.NotAuthorized):
        policy.list_project(_Req(roles=['other'], project_id='p1'), 'node')


def test_row_rules_wait_for_the_row_then_403_after_404():
    req = _Req(roles=['reader'], project_id='p1')
    policy.authorize(req, 'baremetal:node:set_power_state')
    assert req.pending_rules == ['baremetal:node:set_power_state']
    with pytest.raises(exception.NodeNotFound):
        policy.check_node(req, 'baremetal:node:get',
                          {'uuid': 'u2', 'owner': 'p2', 'lessee': None})
    policy.authorize(req, 'baremetal:node:set_power_state')
    with pytest.raises(exception.NotAuthorized):
        policy.check_node(req, 'baremetal:node:get',
                          {'uuid': 'u1', 'owner': 'p1', 'lessee': None})
    assert req.pending_rules == []


def test_lessee_sees_driver_info_redacted_and_owner_does_not():
    row = {'owner': 'p1', 'lessee': 'p2'}
    shown = {'driver_info': {'a': 1}, 'last_error': 'x'}
    owner = policy.node_redactor(_Req(roles=['reader'], project_id='p1'))
    out = dict(shown)
    owner(row, out)
    assert out == shown
    lessee = policy.node_redactor(_Req(roles=['member', 'reader'],
                                       project_id='p2'))
    out = dict(shown)
    lessee(row, out)
    assert 'Redacted' in out['driver_info']['content']
    assert 'Redacted' in out['last_error']
    assert policy.node_redactor(_Req(roles=['reader'],
                                     system_scope='all')) is None


def test_only_admins_may_disable_cleaning_by_default():
    rule = 'baremetal:node:disable_cleaning'
    policy.authorize(_Req(roles=['admin'], is_admin=True), rule)
    policy.authorize(_Req(roles=['admin'], system_scope='all'), rule)
    for req in (_Req(roles=['member', 'reader'], project_id='p1'),
                _Req(roles=['member'], system_scope='all'),
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


def test_patch_rules_per_field_as_ironic():
    from baremetal.api.controllers.v1 import nodes
    assert nodes.patch_rules([{'op': 'add', 'path': '/extra/a'}]) == [
        'baremetal:node:update_extra']
    assert nodes.patch_rules([
        {'op': 'add', 'path': '/instance_info/x'},
        {'op': 'replace', 'path': '/description', 'value': 'd'}]) == [
        'baremetal:node:update_instance_info', 'baremetal:node:update']
    assert nodes.patch_rules([{'op': 'replace', 'path': '/power_interface',
                               'value': 'fake'}]) == [
        'baremetal:node:update:driver_interfaces']
    assert nodes.patch_rules([{'op': 'replace', 'path': '/automated_clean',
                               'value': 'false'}]) == [
        'baremetal:node:disable_cleaning']
    assert nodes.patch_rules([]) == ['baremetal:node:update']


def test_service_role_is_elevated_only_when_configured():
    req = _Req(roles=['service'], project_id='svc', project_name='service')
    assert policy.list_project(req, 'node') == 'svc'
    harness.CONF.set_override('rbac_service_role_elevated_access', True)
    assert policy.list_project(req, 'node') is None
    other = _Req(roles=['service'], project_id='p', project_name='other')
    assert policy.list_project(other, 'node') == 'p'


def test_policy_sample_is_generated_from_the_code(tmp_path):
    import os
    import subprocess
    import sys
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    out = tmp_path / 'policy.yaml.sample'
    subprocess.run([os.path.join(os.path.dirname(sys.executable),
                                 'oslopolicy-sample-generator'),
                    '--namespace', 'baremetal.api', '--output-file',
                    str(out)], check=True, capture_output=True)
    with open(os.path.join(top, 'etc', 'baremetal',
                           'policy.yaml.sample')) as f:
        assert out.read_text() == f.read(), 'run tox -e genpolicy'


def test_a_policy_file_overrides_one_rule(tmp_path, monkeypatch):
    """The example of doc/source/configuration/policy.rst: the lessee's
    members may run provision verbs; other rules keep their defaults."""
    rule = 'baremetal:node:set_provision_state'
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text(
        '"%s": "rule:service_role or (role:member and system_scope:all) or '
        '(role:member and (project_id:%%(node.owner)s or '
        'project_id:%%(node.lessee)s))"\n' % rule)
    target = {'node.owner': 'p1', 'node.lessee': 'p2'}
    lessee = _Req(roles=['member', 'reader'], project_id='p2')
    assert not policy.allows(lessee, rule, target)
    monkeypatch.setattr(policy, '_enforcer', None)
    harness.CONF.set_override('policy_file', str(policy_file),
                              group='oslo_policy')
    try:
        assert policy.allows(lessee, rule, target)
        assert not policy.allows(lessee, 'baremetal:node:vif:attach',
                                 target)
    finally:
        policy._enforcer = None


def test_ports_groups_and_volume_objects_only_on_nodes_the_project_may_change(
        tmp_path, monkeypatch):
    """A project's admin creates a port, port group or volume connector
    only on a node its project owns, and moves a port only to such a
    node: on another project's node the answer is the unknown-node 400
    and nothing is written (the rules were once checked only after the
    write, which answered 403 but kept the row)."""
    from baremetal.api import auth
    ctx = auth.admin_context()
    monkeypatch.setattr(auth, 'admin_context', lambda: ctx)
    monkeypatch.setattr(policy, '_enforcer', None)
    h = harness.Harness(tmp_path)
    try:
        mine = h.create_node(owner='p1')['uuid']
        other = h.create_node(owner='p2')['uuid']
        ctx.is_admin, ctx.system_scope = False, None
        ctx.roles = ['admin', 'manager', 'member', 'reader']
        ctx.project_id = 'p1'
        bodies = {
            '/v1/ports': lambda n, i: {'address': '52:54:00:00:00:%02x' % i,
                                       'node_uuid': n},
            '/v1/portgroups': lambda n, i: {'node_uuid': n},
            '/v1/volume/connectors': lambda n, i: {
                'node_uuid': n, 'type': 'iqn',
                'connector_id': 'iqn.2026-11.org:%d' % i}}
        for path, body in bodies.items():
            status, got, _ = h.request('POST', path, body(other, 1))
            assert status == 400, (path, got)
            assert 'could not be found' in harness.error_message(got)
            status, got, _ = h.request('POST', path, body(mine, 2))
            assert status == 201, (path, got)
        port = h.request('GET', '/v1/ports')[1]['ports'][0]['uuid']
        status, got, _ = h.request('PATCH', '/v1/ports/%s' % port, [
            {'op': 'replace', 'path': '/node_uuid', 'value': other}])
        assert status == 400, got
        ctx.is_admin, ctx.roles, ctx.project_id = True, ['admin'], None
        for path, key in (('/v1/ports?fields=node_uuid', 'ports'),
                          ('/v1/portgroups?fields=node_uuid', 'portgroups'),
                          ('/v1/volume/connectors?fields=node_uuid',
                           'connectors')):
            rows = h.request('GET', path)[1][key]
            assert [r['node_uuid'] for r in rows] == [mine], (path, rows)
    finally:
        h.close()


# Who may PATCH which field of a node owned by p1 and leased to p2, by
# Ironic's secure-RBAC defaults (its update, update_extra,
# update_instance_info and update:* rules).  Roles are a token's, with
# Keystone's implied ones (admin > manager > member > reader).
_FIELD_PATCHES = {
    'extra': {'op': 'add', 'path': '/extra/by', 'value': 'x'},
    'description': {'op': 'replace', 'path': '/description',
                    'value': 'd'},
    'instance_info': {'op': 'add', 'path': '/instance_info/x',
                      'value': 'y'},
    'driver_info': {'op': 'add', 'path': '/driver_info/x', 'value': 'y'},
    'properties': {'op': 'add', 'path': '/properties/cpus', 'value': 2},
    'name': {'op': 'replace', 'path': '/name', 'value': 'renamed'},
    'lessee': {'op': 'replace', 'path': '/lessee', 'value': 'p3'},
    'owner': {'op': 'replace', 'path': '/owner', 'value': 'p3'},
    'power_interface': {'op': 'replace', 'path': '/power_interface',
                        'value': 'fake'},
}
_ROLES = {'reader': ['reader'], 'member': ['member', 'reader'],
          'manager': ['manager', 'member', 'reader'],
          'admin': ['admin', 'manager', 'member', 'reader']}
_MAY_PATCH = {
    ('lessee', 'reader'): set(),
    ('lessee', 'member'): {'extra', 'description'},
    ('lessee', 'manager'): {'extra', 'description', 'instance_info'},
    ('lessee', 'admin'): {'extra', 'description', 'instance_info'},
    ('owner', 'reader'): set(),
    ('owner', 'member'): {'extra', 'description', 'instance_info',
                          'driver_info', 'properties', 'name', 'lessee'},
    ('owner', 'manager'): {'extra', 'description', 'instance_info',
                           'driver_info', 'properties', 'name', 'lessee',
                           'power_interface'},
}


@pytest.mark.parametrize('relation,role', sorted(_MAY_PATCH))
def test_which_fields_the_owner_and_lessee_may_patch(tmp_path, monkeypatch,
                                                     relation, role):
    """Each field PATCHed on its own through the API, as a project-scoped
    caller of the node's owner or lessee: 200 where Ironic's defaults
    allow it, else 403 naming the rule, the node unchanged."""
    from baremetal.api import auth
    ctx = auth.admin_context()
    monkeypatch.setattr(auth, 'admin_context', lambda: ctx)
    monkeypatch.setattr(policy, '_enforcer', None)
    h = harness.Harness(tmp_path)
    h.version = '1.65'          # lessee
    try:
        allowed = _MAY_PATCH[(relation, role)]
        for field, op in sorted(_FIELD_PATCHES.items()):
            ctx.is_admin, ctx.system_scope = True, None
            ctx.roles, ctx.project_id = ['admin'], None
            n = h.create_node(owner='p1', lessee='p2')
            path = '/v1/nodes/%s' % n['uuid']
            before = h.node(n['uuid'])
            ctx.is_admin = False
            ctx.roles = _ROLES[role]
            ctx.project_id = 'p1' if relation == 'owner' else 'p2'
            status, body, _ = h.request('PATCH', path, [op])
            ctx.is_admin, ctx.roles, ctx.project_id = True, ['admin'], None
            if field in allowed:
                assert status == 200, (field, body)
                continue
            assert status == 403, (field, status, body)
            assert 'baremetal:node:' in harness.error_message(body), body
            after = h.node(n['uuid'])
            assert {k: v for k, v in after.items() if k != 'updated_at'} \
                == {k: v for k, v in before.items()
                    if k != 'updated_at'}, field
    finally:
        h.close()


def test_the_effective_policy_tool_knows_the_service(tmp_path):
    """oslopolicy-policy-generator loads the service's enforcer (the
    oslo.policy.enforcer entry point) with the configuration named on its
    command line: defaults, and the overrides of [oslo_policy]
    policy_file."""
    import os
    import subprocess
    import sys
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text(
        '"baremetal:node:delete": "role:admin"\n'
        '"show_password": "!"\n')          # as its default
    conf_file = tmp_path / 'baremetal.conf'
    conf_file.write_text('[oslo_policy]\npolicy_file = %s\n' % policy_file)
    tool = os.path.join(os.path.dirname(sys.executable),
                        'oslopolicy-policy-generator')
    out = subprocess.run([tool, '--namespace', 'baremetal.api',
                          '--config-file', str(conf_file)],
                         check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    assert '"baremetal:node:delete": "role:admin"' in lines
    assert ('"baremetal:node:list_all": "(role:reader and system_scope:all)'
            ' or (role:service and system_scope:all) or rule:service_role"'
            in lines)
    redundant = subprocess.run(
        [os.path.join(os.path.dirname(tool), 'oslopolicy-list-redundant'),
         '--namespace', 'baremetal.api', '--config-file', str(conf_file)],
        check=True, capture_output=True, text=True).stdout
    assert redundant.splitlines() == ['"show_password": "!"']
    # without a configuration: every default, none overridden
    out = subprocess.run([tool, '--namespace', 'baremetal.api'], cwd=tmp_path,
                         check=True, capture_output=True, text=True).stdout
    assert '"baremetal:node:delete": "role:admin"' not in out.splitlines()
    assert '"baremetal:node:delete": ' in out


def test_only_configuration_arguments_reach_the_service_config():
    argv = ['--namespace', 'baremetal.api', '--config-file', 'a.conf',
            '--output-file=x', '--config-dir=d', '--exclude-deprecated']
    assert policy._config_args(argv) == ['--config-file', 'a.conf',
                                         '--config-dir=d']
