"""auth_strategy: noauth, http_basic (htpasswd + bcrypt), keystone."""

import base64

import bcrypt
import pytest

from baremetal.api import versions

from tests import harness


def _basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode()).decode()
    return {'Authorization': 'Basic ' + token}


@pytest.fixture
def basic_api(tmp_path):
    htpasswd = tmp_path / 'htpasswd'
    hashed = bcrypt.hashpw(b'secret', bcrypt.gensalt(4)).decode()
    # Apache writes $2y$; both spellings must work
    htpasswd.write_text('admin:%s\nlegacy:{SHA}abc\n'
                        % hashed.replace('$2b$', '$2y$', 1))
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'http_basic',
        'http_basic_auth_user_file': str(htpasswd)})
    yield h
    h.close()


def test_basic_auth_accepts_valid_credentials(basic_api):
    status, body, _ = basic_api.request('GET', '/v1/nodes',
                                        headers=_basic('admin', 'secret'))
    assert status == 200
    assert body == {'nodes': []}


@pytest.mark.parametrize('headers', [
    {},
    _basic('admin', 'wrong'),
    _basic('nobody', 'secret'),
    _basic('legacy', 'abc'),
    {'Authorization': 'Bearer xyz'},
    {'Authorization': 'Basic !!!notbase64'},
])
def test_basic_auth_refuses_bad_credentials(basic_api, headers):
    status, body, resp_headers = basic_api.request('GET', '/v1/nodes',
                                                   headers=headers)
    assert status == 401
    assert 'Basic' in resp_headers['WWW-Authenticate']
    assert harness.error_message(body)


def test_version_documents_need_no_credentials(basic_api):
    for path in ('/', '/v1', '/v1/'):
        status, body, _ = basic_api.request('GET', path)
        assert status == 200, path
        key = 'default_version' if path == '/' else 'id'
        assert body[key]


def test_noauth_is_the_default(api):
    status, _, _ = api.request('GET', '/v1/nodes')
    assert status == 200


def test_keystone_requires_a_token(tmp_path):
    from keystonemiddleware import auth_token  # noqa: F401 (registers opts)
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'keystone',
        'keystone_authtoken.www_authenticate_uri': 'http://127.0.0.1:9/'})
    try:
        status, body, _ = h.request('GET', '/v1/nodes')
        assert status == 401
        status, body, _ = h.request('GET', '/')
        assert status == 200
        assert body['default_version']['version'] == versions.MAX_STRING
    finally:
        h.close()


# ---- public endpoints: the routes marked public=True, as Ironic's ----

@pytest.mark.parametrize('path,public', [
    ('/', True), ('/v1', True), ('/v1/', True), ('/v1//', True),
    ('/v1.json', True), ('/v1/lookup', True), ('/v1/lookup/', True),
    ('/v1/lookup.json', True), ('/v1/heartbeat/node-1', True),
    ('/v1/heartbeat/node-1/', True), ('/v1/continue_inspection', True),
    ('/v1/continue_inspection.xml', True),
    # Ironic serves these without /v1 too, but only with auth
    ('/lookup', False), ('/heartbeat/node-1', False),
    ('/continue_inspection', False),
    ('/v1/lookup/x', False), ('/v1/lookupx', False),
    ('/v1/heartbeat', False), ('/v1/heartbeat/', False),
    ('/v1/heartbeat/a/b', False), ('/v1/nodes', False),
    ('/v1/nodes.json', False), ('/v2', False), ('/v1/drivers', False),
])
def test_public_paths_are_those_of_public_routes(api, path, public):
    from baremetal.api import routing
    assert routing.is_public(path) is public


_UNKNOWN_MAC = '52:54:00:00:0e:99'
_INVENTORY = {'inventory': {'interfaces': [{'mac_address': _UNKNOWN_MAC}]}}
# (method, path, body, version, status): unknown MAC, unknown node
_PUBLIC_REQUESTS = [
    ('GET', '/', None, '1.1', 200),
    ('GET', '/v1/', None, '1.1', 200),
    ('GET', '/v1/lookup?addresses=%s' % _UNKNOWN_MAC, None, '1.62', 404),
    ('POST', '/v1/heartbeat/%s' % '5c3e4a1e-0000-4000-8000-000000000001',
     {'callback_url': 'http://127.0.0.1:9999'}, '1.62', 404),
    ('POST', '/v1/continue_inspection', _INVENTORY, '1.1', 404),
]


def test_basic_auth_public_endpoints_ignore_credentials(basic_api):
    for method, path, body, version, want in _PUBLIC_REQUESTS:
        answers = []
        for headers in ({}, _basic('admin', 'wrong'),
                        _basic('admin', 'secret'),
                        {'Authorization': 'Bearer xyz'}):
            status, got, resp_headers = basic_api.request(
                method, path, body, version=version, headers=headers)
            assert status == want, (path, headers, got)
            assert 'WWW-Authenticate' not in resp_headers
            answers.append(got)
        assert all(a == answers[0] for a in answers), path
    # and the routes without /v1 are not public, as in Ironic
    assert basic_api.request('GET', '/lookup?addresses=%s'
                             % _UNKNOWN_MAC, version='1.62')[0] == 401


def test_keystone_public_endpoints_ignore_tokens(tmp_path):
    from keystonemiddleware import auth_token  # noqa: F401 (registers opts)
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'keystone',
        'keystone_authtoken.www_authenticate_uri': 'http://127.0.0.1:9/'})
    try:
        for method, path, body, version, want in _PUBLIC_REQUESTS:
            answers = []
            # a client's own identity headers are not believed either
            for headers in ({}, {'X-Auth-Token': 'bogus'},
                            {'X-Identity-Status': 'Confirmed',
                             'X-Roles': 'reader',
                             'X-Project-Id': 'p1'}):
                status, got, _ = h.request(method, path, body,
                                           version=version,
                                           headers=headers)
                assert status == want, (path, headers, got)
                answers.append(got)
            assert all(a == answers[0] for a in answers), path
        assert h.request('POST', '/continue_inspection',
                         _INVENTORY)[0] == 401
    finally:
        h.close()
