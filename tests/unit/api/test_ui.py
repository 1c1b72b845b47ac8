"""The web page's files at /ui/: served from the package, read-only,
with a policy that lets them load nothing from elsewhere; behind basic
authentication under http_basic, open under noauth and keystone (the
page then asks for a token)."""

import base64

import bcrypt
import pytest
import webob

from tests import harness


def _get(app, path, method='GET', headers=None):
    req = webob.Request.blank(path, method=method)
    req.headers.update(headers or {})
    resp = req.get_response(app)
    return resp.status_int, resp.body, resp.headers


@pytest.mark.parametrize('path,ctype,text', [
    ('/ui/', 'text/html', b'<title>Bare metal fleet</title>'),
    ('/ui/index.html', 'text/html', b'app.js'),
    ('/ui/app.js', 'javascript', b'text/event-stream'),
    ('/ui/style.css', 'text/css', b'.counts'),
])
def test_the_page_files_are_served(api, path, ctype, text):
    status, body, headers = _get(api.app, path)
    assert status == 200
    assert ctype in headers['Content-Type']
    assert text in body
    assert "script-src 'self'" in headers['Content-Security-Policy']
    assert headers['X-Content-Type-Options'] == 'nosniff'


def test_ui_without_slash_redirects_and_unknown_files_are_404(api):
    status, _, headers = _get(api.app, '/ui')
    assert status == 301 and headers['Location'].endswith('/ui/')
    for path in ('/ui/nope.js', '/ui/../setup.cfg', '/ui/static/app.js',
                 '/ui/%2e%2e/__init__.py'):
        assert _get(api.app, path)[0] == 404, path


def test_the_page_is_read_only(api):
    status, _, headers = _get(api.app, '/ui/app.js', method='POST')
    assert status == 405 and headers['Allow'] == 'GET, HEAD'
    status, body, _ = _get(api.app, '/ui/app.js', method='HEAD')
    assert status == 200 and body == b''


def test_the_api_is_unchanged_beside_the_page(api):
    status, body, _ = api.request('GET', '/v1/nodes')
    assert status == 200 and body == {'nodes': []}
    assert api.request('GET', '/uix')[0] == 404


def test_page_is_behind_basic_auth_under_http_basic(tmp_path):
    htpasswd = tmp_path / 'htpasswd'
    htpasswd.write_text('admin:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'http_basic',
        'http_basic_auth_user_file': str(htpasswd)})
    try:
        status, _, headers = _get(h.app, '/ui/')
        assert status == 401
        assert 'Basic' in headers['WWW-Authenticate']
        good = 'Basic ' + base64.b64encode(b'admin:secret').decode()
        assert _get(h.app, '/ui/', headers={'Authorization': good})[0] \
            == 200
    finally:
        h.close()


def test_page_is_open_under_keystone_where_the_api_is_not(tmp_path):
    from keystonemiddleware import auth_token  # noqa: F401 (registers opts)
    h = harness.Harness(tmp_path, overrides={
        'auth_strategy': 'keystone',
        'keystone_authtoken.www_authenticate_uri': 'http://127.0.0.1:9/'})
    try:
        assert h.request('GET', '/v1/nodes')[0] == 401
        assert h.request('GET', '/nodes/x/plan')[0] == 401
        status, body, _ = _get(h.app, '/ui/')
        assert status == 200 and b'id="token"' in body
        # the page asks for a token when the API says 401, and sends it
        status, js, _ = _get(h.app, '/ui/app.js')
        assert b"'X-Auth-Token'" in js and b'status === 401' in js
    finally:
        h.close()
