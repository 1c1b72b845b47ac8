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
