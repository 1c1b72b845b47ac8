"""Requests below a resource's (or one method's) first version get
Ironic 39's answer for it: its status, its message, and the plain or
the fault form of the error (versions.TOO_OLD)."""

import json

import pytest
import webob

from baremetal.api import app
from baremetal.api import routing
from baremetal.api import versions

U = '11111111-2222-4333-8444-555555555555'


def _error(body) -> tuple[str, str]:
    """('fault', faultstring) or ('plain', description)."""
    inner = json.loads(body['error_message'])
    if 'faultstring' in inner:
        return 'fault', inner['faultstring']
    return 'plain', inner['description']


@pytest.mark.parametrize('method,path,version,status,form,message', [
    # a read is 404, a write 405, in the fault envelope
    ('GET', '/v1/allocations', '1.51', 404, 'fault',
     'The API version does not allow allocations'),
    ('POST', '/v1/allocations', '1.51', 405, 'fault',
     'The API version does not allow allocations'),
    ('DELETE', '/v1/allocations/%s' % U, '1.42', 405, 'fault',
     'The API version does not allow allocations'),
    # the resource is there at 1.52, its PATCH from 1.57
    ('PATCH', '/v1/allocations/%s' % U, '1.56', 405, 'fault',
     'The API version does not allow updating allocations'),
    ('PATCH', '/v1/allocations/%s' % U, '1.51', 405, 'fault',
     'The API version does not allow updating allocations'),
    # the same as a plain HTTP error
    ('GET', '/v1/deploy_templates', '1.54', 404, 'plain',
     'The API version does not allow deploy templates'),
    ('POST', '/v1/deploy_templates', '1.45', 405, 'plain',
     'The API version does not allow deploy templates'),
    ('PATCH', '/v1/deploy_templates/fakedt', '1.54', 405, 'plain',
     'The API version does not allow deploy templates'),
    ('DELETE', '/v1/runbooks/fake_runbook', '1.91', 405, 'plain',
     'The API version does not allow runbooks'),
    ('GET', '/v1/runbooks/rb/traits', '1.111', 404, 'plain',
     'The API version does not allow runbook traits'),
    ('GET', '/v1/conductors', '1.48', 404, 'fault',
     'The API is not supported for this version'),
    ('GET', '/v1/portgroups', '1.22', 404, 'fault',
     'The API is not supported for this version'),
    ('GET', '/v1/volume', '1.31', 404, 'fault',
     'The API is not supported for this version'),
    ('GET', '/v1/volume/connectors', '1.31', 404, 'plain', ''),
    # a node's sub-resources: a plain 404, whatever the method, even one
    # no version serves
    ('GET', '/v1/nodes/%s/vifs' % U, '1.27', 404, 'plain', ''),
    ('PUT', '/v1/nodes/%s/vmedia' % U, '1.79', 404, 'plain', ''),
    ('GET', '/v1/nodes/%s/history' % U, '1.77', 404, 'plain', ''),
    # below 1.37 Ironic's node controller answers for .../traits
    ('GET', '/v1/nodes/%s/traits' % U, '1.36', 406, 'fault',
     'Request not acceptable.'),
    ('PUT', '/v1/nodes/%s/traits' % U, '1.27', 405, 'plain', ''),
    ('PUT', '/v1/nodes/%s/traits/CUSTOM_A' % U, '1.36', 405, 'plain', ''),
    ('POST', '/v1/nodes/%s/traits' % U, '1.36', 405, 'plain', ''),
    ('DELETE', '/v1/nodes/%s/traits' % U, '1.36', 404, 'fault',
     'Resource could not be found.'),
    # RAID before 1.12
    ('PUT', '/v1/nodes/%s/states/raid' % U, '1.11', 406, 'fault',
     'Request not acceptable.'),
    ('GET', '/v1/drivers/fake-hardware/raid/logical_disk_properties',
     '1.2', 406, 'fault', 'Request not acceptable.'),
])
def test_below_the_version_ironic_answers(api, method, path, version,
                                          status, form, message):
    body = {} if method in ('POST', 'PUT') else (
        [] if method == 'PATCH' else None)
    got, out, headers = api.request(method, path, body, version=version)
    assert got == status, out
    assert _error(out) == (form, message)
    # the fault envelope carries the version headers, the plain form not
    assert ('X-OpenStack-Ironic-API-Version' in headers) == (
        form == 'fault')


@pytest.mark.parametrize('method,path,version,allow', [
    ('PUT', '/v1/allocations', '1.51', 'DELETE, GET, PATCH, POST'),
    ('GET', '/v1/heartbeat/%s' % U, '1.21', 'POST'),
    ('DELETE', '/v1/conductors', '1.48', 'GET'),
    ('PUT', '/v1/portgroups/%s' % U, '1.22', 'DELETE, GET, PATCH, POST'),
])
def test_a_method_never_served_is_405_first(api, method, path, version,
                                           allow):
    """As Ironic's controllers that check the version themselves: a
    method none of the resource's paths serves is refused before the
    version is looked at (a plain 405 with Allow: the resource's
    methods)."""
    body = {} if method in ('POST', 'PUT') else None
    status, out, headers = api.request(method, path, body, version=version)
    assert status == 405, out
    assert _error(out) == ('plain', '')
    assert headers['Allow'] == allow


def test_at_the_version_the_resource_answers(api):
    n = api.create_node()
    assert api.request('PUT', '/v1/nodes/%s/vmedia' % n['uuid'], {},
                       version='1.89')[0] == 405
    assert api.request('GET', '/v1/nodes/%s/traits' % n['uuid'],
                       version='1.37')[0] == 200
    assert api.request('GET', '/v1/allocations', version='1.52')[0] == 200
    assert api.request('GET', '/v1/runbooks', version='1.92')[0] == 200


def test_every_gate_names_a_served_template():
    templates = {r.template for r in routing.routes()}
    for prefix in versions.TOO_OLD:
        assert any(t == prefix or t.startswith(prefix + '/')
                   for t in templates), prefix


def test_states_with_the_node_after_them(api):
    """Ironic also serves /v1/nodes/states/{node} and
    /v1/nodes/states/console/{node} (ironic-tempest-plugin reads the
    console so)."""
    n = api.create_node()
    status, out, _ = api.request('GET', '/v1/nodes/states/console/%s'
                                 % n['uuid'], version='1.1')
    assert status == 200, out
    assert out == {'console_enabled': False, 'console_info': None}
    status, out, _ = api.request('GET', '/v1/nodes/states/%s' % n['uuid'],
                                 version='1.1')
    assert status == 200 and out['provision_state'] == 'enroll', out
    status, out, _ = api.request('PUT', '/v1/nodes/states/console/%s'
                                 % n['uuid'], {'enabled': False},
                                 version='1.1')
    assert status == 202, out


# ------------------------------------------------------ the version header
def test_an_empty_version_header_asks_for_the_minimum(api):
    status, out, headers = api.request(
        'GET', '/v1/nodes', headers={'X-OpenStack-Ironic-API-Version': ''})
    assert status == 200, out
    assert headers['X-OpenStack-Ironic-API-Version'] == '1.1'


@pytest.mark.parametrize('value,start', [
    ('one.two', 'Invalid value for X-OpenStack-Ironic-API-Version header'),
    ('1.5a', 'Invalid value for X-OpenStack-Ironic-API-Version header'),
    ('1.999', 'Version 1.999 was requested but the minor version is not '
              'supported'),
])
def test_a_bad_version_header_is_406_in_ironic_words(api, value, start):
    status, out, headers = api.request('GET', '/v1/nodes', version=value)
    assert status == 406, out
    form, message = _error(out)
    assert form == 'plain' and message.startswith(start), message
    # a deliberate difference (differences.rst, version-garbage): the
    # range is always given
    assert headers['X-OpenStack-Ironic-API-Maximum-Version'] == \
        versions.MAX_STRING


@pytest.mark.parametrize('script, path', [
    ('', '/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123'),
    ('', "/v1/nodes/a_b.c~d-e!$&'()*+,;=:@"),
    ('/baremetal', '/v1/nodes/detail'),
    ('', '/v1/nodes/with space'),
    ('', '/v1/nodes/per%cent'),
    ('', '/v1/nodes/q?x'),
    ('', '/v1/nodes/' + 'nœud'.encode().decode('latin-1')),
    ('/b r', '/v1/nodes'),
])
def test_dispatch_path_is_webobs(script, path):
    """The dispatcher's path is webob's req.path (quoted), taken from the
    environ as it is when quoting would change nothing."""
    environ = webob.Request.blank('/').environ
    environ['SCRIPT_NAME'], environ['PATH_INFO'] = script, path
    req = webob.Request(environ)
    assert app._path(req, environ) == req.path
