"""A Redfish connection's plain GETs, POSTs, PATCHes and DELETEs go
through http.client itself (drivers/modules/redfish/lean_get.py): the
BMC sees the request requests would have sent, redirects followed and
cookies sent back as requests does, and sushy gets the answer (or the
error) requests would have given, however the answer is framed; what
lean_get does not do goes through requests."""

import gzip
import http.server
import json
import subprocess
import threading
import types

import pytest
import requests
import requests.adapters
from oslo_config import cfg

from baremetal.conf import redfish as redfish_conf
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import lean_get
from tests import tls
from tests.bmc import hostile

SYSTEM = {'@odata.id': '/redfish/v1/Systems/1', 'Id': '1',
          'PowerState': 'On', 'Name': 'caf\u00e9'}


class _BMC:
    """Answers per path; records each request's path and headers."""

    def __init__(self, ctx=None):
        self.seen = []
        owner = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def do_GET(self):
                owner.seen.append((self.path, dict(self.headers)))
                self._answer(owner.answer(self.path))

            def _write(self):
                n = int(self.headers.get('Content-Length') or 0)
                owner.seen.append((self.command, self.path,
                                   list(self.headers.items()),
                                   self.rfile.read(n)))
                self._answer(owner.answer(self.path))

            do_POST = do_PATCH = do_DELETE = _write

            def _answer(self, answer):
                status, headers, body = answer
                if status is None:      # the answer's bytes as they are
                    self.wfile.write(body)
                    self.close_connection = True
                    return
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if body is not None:
                    self.send_header('Content-Length', str(len(body)))
                self.send_header('Connection', 'close')
                self.end_headers()
                if body is not None:
                    self.wfile.write(body)
                self.close_connection = True

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        if ctx is not None:
            self.srv.socket = ctx.wrap_socket(self.srv.socket,
                                              server_side=True)
        self.url = '%s://127.0.0.1:%d' % ('https' if ctx else 'http',
                                          self.srv.server_address[1])
        threading.Thread(target=self.srv.serve_forever, args=(0.05,),
                         daemon=True).start()

    def answer(self, path):
        kind = path.rsplit('/', 1)[-1]
        doc = json.dumps(SYSTEM).encode()
        if kind == 'gone':
            return 404, [('Content-Type', 'application/json')], json.dumps(
                {'error': {'code': 'Base.1.0.ResourceMissing',
                           'message': 'no such system'}}).encode()
        if kind == 'broken':
            return 500, [('Content-Type', 'text/html')], b'<html>oops'
        if kind == 'denied':
            return 401, [('WWW-Authenticate', 'Basic realm="bmc"')], b''
        if kind == 'zipped':
            return 200, [('Content-Type', 'application/json'),
                         ('Content-Encoding', 'gzip')], gzip.compress(doc)
        if kind == 'latin':
            return 200, [('Content-Type', 'text/plain; charset=latin-1')], \
                'caf\u00e9'.encode('latin-1')
        if kind == 'moved':
            return 302, [('Location', '/redfish/v1/Systems/1')], b''
        if kind == 'other':
            return 303, [('Location', '/redfish/v1/Systems/1')], b''
        if kind == 'loop':
            return 301, [('Location', '/redfish/v1/Systems/loop')], b''
        if kind.startswith('elsewhere'):     # elsewhere-<port>
            return 307, [('Location', 'http://127.0.0.1:%s/redfish/v1/'
                          'Systems/1' % kind.split('-')[1])], b''
        if kind == 'chunked':
            return None, None, (
                b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n'
                b'Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n'
                b'%x\r\n%s\r\n0\r\n\r\n' % (5, doc[:5], len(doc) - 5,
                                               doc[5:]))
        if kind == 'unframed':      # the body ends where the connection does
            return None, None, (b'HTTP/1.1 200 OK\r\nContent-Type: '
                                b'application/json\r\n\r\n' + doc)
        if kind == 'repeated':
            return 200, [('Content-Type', 'application/json'),
                         ('Link', '</a>; rel=a'), ('link', '</b>; rel=b'),
                         ('X-Empty', '')], doc
        if kind == 'short':         # fewer bytes than it says
            return None, None, (b'HTTP/1.1 200 OK\r\nContent-Length: 500'
                                b'\r\n\r\n' + doc)
        if kind == 'Actions':       # a reset done
            return 204, [], None
        if kind == 'refused':
            return 400, [('Content-Type', 'application/json')], json.dumps(
                {'error': {'code': 'Base.1.0.ActionNotSupported',
                           'message': 'no'}}).encode()
        if kind == 'temporary':
            return 307, [('Location', '/redfish/v1/Systems/1/Actions')], b''
        if kind == 'cookie-moved':
            return 302, [('Location', '/redfish/v1/Systems/1'),
                         ('Set-Cookie', 'bmc=abc; Path=/')], b''
        if kind == 'cookie':
            return 200, [('Content-Type', 'application/json'),
                         ('Set-Cookie', 'bmc=abc; Path=/')], doc
        return 200, [('Content-Type', 'application/json; charset=utf-8'),
                     ('ETag', 'W/"1"')], doc

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def bmcs():
    made = []
    yield lambda ctx=None: made.append(_BMC(ctx)) or made[-1]
    for b in made:
        b.stop()


def _session(auth=('admin', 'pa\u00dfword')):
    """A session as sushy and client.py leave it."""
    s = requests.Session()
    s.trust_env = False
    s.headers['Connection'] = 'close'
    s.auth = auth
    return s


# what sushy passes with a GET
_KWARGS = {'json': None, 'timeout': (5, 10),
           'headers': {'Accept': 'application/json',
                       'OData-Version': '4.0', 'Accept-Encoding': 'identity',
                       'Content-Type': None}}


def _both(url, verify=True, session=None):
    """(requests' answer or error, lean_get's) for one GET of ``url``."""
    out = []
    for lean in (False, True):
        s = session or _session()
        try:
            if lean:
                r = lean_get.send(s, url, verify=verify, **_KWARGS)
                assert r is not None, 'lean_get left a plain GET to requests'
            else:
                r = s.request('GET', url, verify=verify, **_KWARGS)
            out.append(r)
        except OSError as e:        # requests' errors among them
            out.append(e)
    return out


@pytest.mark.parametrize('kind', ['1', 'gone', 'broken', 'denied', 'zipped',
                                  'latin', 'chunked', 'unframed',
                                  'repeated'])
def test_the_answer_is_the_one_requests_gives(bmcs, kind):
    bmc = bmcs()
    plain, lean = _both(bmc.url + '/redfish/v1/Systems/' + kind)
    assert (lean.status_code, lean.reason, lean.content, lean.text,
            lean.encoding, lean.url, lean.ok) == \
        (plain.status_code, plain.reason, plain.content, plain.text,
         plain.encoding, plain.url, plain.ok)
    skip = {'date'}
    assert {k: v for k, v in lean.headers.items() if k.lower() not in skip} \
        == {k: v for k, v in plain.headers.items() if k.lower() not in skip}
    assert lean.headers.get('content-type') == \
        plain.headers.get('Content-Type')
    if kind in ('1', 'gone', 'zipped', 'chunked', 'unframed'):
        assert lean.json() == plain.json()


def test_a_body_shorter_than_it_says_is_the_error_requests_raises(bmcs):
    bmc = bmcs()
    plain, lean = _both(bmc.url + '/redfish/v1/Systems/short')
    assert type(lean) is type(plain) is \
        requests.exceptions.ChunkedEncodingError


def test_the_bmc_sees_the_request_requests_sends(bmcs):
    bmc = bmcs()
    s = _session()
    s.headers['X-Auth-Token'] = 'token-1'     # sushy's session auth
    _both(bmc.url + '/redfish/v1/Systems/a%20b?$expand=.', session=s)
    (path1, seen1), (path2, seen2) = bmc.seen
    assert path1 == path2 == '/redfish/v1/Systems/a%20b?$expand=.'
    assert list(seen2.items()) == list(seen1.items())   # in order, Host too
    assert seen2['Authorization'] == requests.auth._basic_auth_str(
        'admin', 'pa\u00dfword')
    assert seen2['X-Auth-Token'] == 'token-1'
    assert seen2['Connection'] == 'close'
    assert 'Content-Type' not in seen2
    # without a User-Agent of the session's, urllib3's own
    s.headers['User-Agent'] = None
    _both(bmc.url + '/redfish/v1/Systems/1', session=s)
    (_, seen3), (_, seen4) = bmc.seen[2:]
    assert list(seen4.items()) == list(seen3.items())
    assert seen4['User-Agent'].startswith('python-urllib3/')


@pytest.mark.parametrize('mode', ['close', 'malformed', 'hang'])
def test_a_failure_is_the_error_requests_raises(mode):
    bmc = hostile.TCPFault(mode)
    try:
        url = bmc.url + '/redfish/v1/Systems/1'
        kwargs = dict(_KWARGS, timeout=(1, 0.5))
        errors = []
        for lean in (False, True):
            s = _session()
            with pytest.raises(requests.RequestException) as e:
                if lean:
                    lean_get.send(s, url, verify=True, **kwargs)
                else:
                    s.request('GET', url, verify=True, **kwargs)
            errors.append(type(e.value))
        assert errors[1] is errors[0], errors
    finally:
        bmc.stop()


def test_nothing_listening_is_the_error_requests_raises(bmcs):
    bmc = bmcs()
    url = bmc.url + '/redfish/v1/Systems/1'
    bmc.stop()
    plain, lean = _both(url)
    assert type(lean) is type(plain) is requests.ConnectionError


def test_tls_is_verified_as_requests_verifies_it(bmcs, tmp_path):
    ctx, cert = tls.server_context(tmp_path, 'bmc')
    bmc = bmcs(ctx)
    url = bmc.url + '/redfish/v1/Systems/1'
    for verify in (True, None):     # None: the session's, True
        plain, lean = _both(url, verify=verify)  # not in the default bundle
        assert type(lean) is type(plain) is requests.exceptions.SSLError
    plain, lean = _both(url, verify=str(tmp_path / 'nonexistent.pem'))
    assert type(lean) is type(plain) is OSError
    assert str(lean) == str(plain)
    for verify in (cert, str(tmp_path), False):
        if verify == str(tmp_path):
            subprocess.run(['openssl', 'rehash', str(tmp_path)], check=True)
        plain, lean = _both(url, verify=verify)
        assert (lean.status_code, lean.json()) == \
            (plain.status_code, plain.json()) == (200, SYSTEM)


def test_a_ca_bundle_replaced_on_disk_is_read_again(bmcs, tmp_path):
    ctx, cert = tls.server_context(tmp_path, 'bmc')
    bmc = bmcs(ctx)
    url = bmc.url + '/redfish/v1/Systems/1'
    bundle = tmp_path / 'bundle.pem'
    with open(cert, 'rb') as f:
        bundle.write_bytes(f.read())
    assert lean_get.send(_session(), url, verify=str(bundle),
                         **_KWARGS).json() == SYSTEM
    other, _ = tls.self_signed(tmp_path, 'other')
    with open(other, 'rb') as f:
        bundle.write_bytes(f.read() + b'\n')    # another size too
    plain, lean = _both(url, verify=str(bundle))
    assert type(lean) is type(plain) is requests.exceptions.SSLError


@pytest.mark.parametrize('kind', ['moved', 'other'])
def test_a_redirect_is_followed_as_requests_follows_it(bmcs, kind):
    bmc = bmcs()
    plain, lean = _both(bmc.url + '/redfish/v1/Systems/' + kind)
    assert (lean.status_code, lean.url, lean.json()) == \
        (plain.status_code, plain.url, plain.json()) == (
            200, bmc.url + '/redfish/v1/Systems/1', SYSTEM)
    assert [(r.status_code, r.url) for r in lean.history] == \
        [(r.status_code, r.url) for r in plain.history]
    (p1, h1), (p2, h2), (p3, h3), (p4, h4) = bmc.seen
    assert (p1, p2) == (p3, p4)
    assert list(h3.items()) == list(h1.items())
    assert list(h4.items()) == list(h2.items())


def test_redirects_without_end_are_the_error_requests_raises(bmcs):
    bmc = bmcs()
    sessions = [_session(), _session()]
    for s in sessions:
        s.max_redirects = 3
    plain, lean = (_both(bmc.url + '/redfish/v1/Systems/loop', session=s)[i]
                   for i, s in enumerate(sessions))
    assert type(lean) is type(plain) is requests.TooManyRedirects
    assert str(lean) == str(plain)


def test_a_redirect_to_another_host_drops_the_credentials_as_requests(
        bmcs):
    """(client.py refuses such redirects for a BMC; a session of lean_get
    alone follows it as requests does)"""
    bmc, other = bmcs(), bmcs()
    port = other.url.rsplit(':', 1)[1]
    plain, lean = _both(bmc.url + '/redfish/v1/Systems/elsewhere-' + port)
    assert lean.json() == plain.json() == SYSTEM
    (_, h1), (_, h2) = other.seen
    assert 'Authorization' not in h2
    assert list(h2.items()) == list(h1.items())


def _sent(s, lean: bool, url: str, method: str = 'GET', **kwargs):
    """lean_get's answer, or requests'."""
    kwargs = dict(_WRITE if method != 'GET' else _KWARGS, **kwargs)
    return lean_get.send(s, url, method, **kwargs) if lean else \
        s.request(method, url, **kwargs)


@pytest.mark.parametrize('kind', ['cookie', 'cookie-moved'])
def test_a_cookie_is_kept_and_sent_back_as_requests_does(bmcs, kind):
    """A cookie set by an answer (or by a redirect, sent with the request
    that follows it), sent back with a read and with a write."""
    bmc = bmcs()
    answers = []
    for lean in (False, True):
        s = _session()
        assert _sent(s, lean, bmc.url + '/redfish/v1/Systems/' + kind
                     ).json() == SYSTEM
        assert s.cookies.get('bmc') == 'abc'
        answers.append(_sent(s, lean, bmc.url + '/redfish/v1/Systems/1'))
        answers.append(_sent(s, lean, bmc.url + '/redfish/v1/Systems/Actions',
                             'POST', json={'a': 1}))
    assert all(a is not None for a in answers)
    # each request as requests sent it, headers in order
    seen = [(w[0], list(w[1].items())) if len(w) == 2 else w
            for w in bmc.seen]
    half = len(seen) // 2
    assert seen[half:] == seen[:half]
    assert dict(bmc.seen[-1][2])['Cookie'] == 'bmc=abc'


@pytest.mark.parametrize('change', [
    lambda s, kw: s.proxies.update({'http': 'http://127.0.0.1:9'}),
    lambda s, kw: setattr(s, 'trust_env', True),
    lambda s, kw: s.hooks['response'].append(lambda r, **k: r),
    lambda s, kw: setattr(s, 'cert', '/nonexistent.pem'),
    lambda s, kw: setattr(s, 'auth', requests.auth.HTTPDigestAuth('a', 'b')),
    lambda s, kw: s.mount('http://', type('A', (requests.adapters.HTTPAdapter,
                                               ), {})()),
    lambda s, kw: kw.update(stream=True),
    lambda s, kw: kw.update(json={'a': 1}),
    lambda s, kw: kw['headers'].update({'X-Count': 3}),
], ids=['proxies', 'environment', 'hooks', 'cert', 'digest', 'adapter',
        'stream', 'body', 'odd-header'])
def test_what_lean_get_does_not_do_is_left_to_requests(bmcs, change):
    bmc = bmcs()
    s = _session()
    kwargs = dict(_KWARGS, headers=dict(_KWARGS['headers']))
    change(s, kwargs)
    assert lean_get.send(s, bmc.url + '/redfish/v1/Systems/1',
                         **kwargs) is None
    assert bmc.seen == []


def test_the_conductors_reads_do_not_go_through_requests(bmcs, monkeypatch):
    conf = cfg.ConfigOpts()
    redfish_conf.register_opts(conf)
    conf([])
    bmc = bmcs()
    node = types.SimpleNamespace(uuid='n-1', driver_info={
        'redfish_address': bmc.url,
        'redfish_system_id': '/redfish/v1/Systems/1',
        'redfish_username': 'u', 'redfish_password': 'p',
        'redfish_auth_type': 'basic'})
    client.forget(client.parse(node, conf))
    sent = []
    real = requests.adapters.HTTPAdapter.send
    monkeypatch.setattr(requests.adapters.HTTPAdapter, 'send',
                        lambda self, r, **kw: sent.append(r.url) or
                        real(self, r, **kw))
    try:
        for _ in range(3):
            assert client.system_fields(node, conf) == SYSTEM
        assert sent == []
        assert [p for p, _ in bmc.seen].count('/redfish/v1/Systems/1') == 3
        # a redirect is followed (to its end, not by requests)
        node.driver_info['redfish_system_id'] = '/redfish/v1/Systems/moved'
        client.forget(client.parse(node, conf))
        assert client.system_fields(node, conf) == SYSTEM
        assert sent == []
        assert [p for p, _ in bmc.seen][-2:] == [
            '/redfish/v1/Systems/moved', '/redfish/v1/Systems/1']
    finally:
        client.forget(client.parse(node, conf))


# what sushy passes with a POST or PATCH
_WRITE = {'timeout': (5, 10),
          'headers': {'Accept': 'application/json',
                      'Content-Type': 'application/json',
                      'OData-Version': '4.0', 'Accept-Encoding': 'identity',
                      'If-Match': 'W/"1"'}}


@pytest.mark.parametrize('method, json_body', [
    ('POST', {'ResetType': 'On'}),
    ('PATCH', {'Boot': {'BootSourceOverrideTarget': 'Pxe',
                        'BootSourceOverrideEnabled': 'Once',
                        'Name': 'caf\u00e9'}}),
    ('POST', None),
])
@pytest.mark.parametrize('kind', ['Actions', '1', 'refused'])
def test_a_write_is_sent_and_answered_as_requests_does(bmcs, method,
                                                       json_body, kind):
    """The BMC sees the same request line, headers in the same order and
    the same body bytes from both; sushy gets the same answer."""
    bmc = bmcs()
    url = bmc.url + '/redfish/v1/Systems/' + kind
    answers = []
    for lean in (False, True):
        s = _session()
        s.headers['X-Auth-Token'] = 'token-1'
        if lean:
            r = lean_get.send(s, url, method, json=json_body, **_WRITE)
            assert r is not None, 'lean_get left a plain write to requests'
        else:
            r = s.request(method, url, json=json_body, **_WRITE)
        answers.append(r)
    (m1, p1, h1, b1), (m2, p2, h2, b2) = bmc.seen
    assert (m2, p2, b2) == (m1, p1, b1) == (
        method, '/redfish/v1/Systems/' + kind,
        json.dumps(json_body).encode() if json_body is not None else b'')
    assert h2 == h1     # in order, Host, Content-Length and all
    plain, lean = answers
    assert (lean.status_code, lean.reason, lean.content, lean.ok) == \
        (plain.status_code, plain.reason, plain.content, plain.ok)


@pytest.mark.parametrize('kind, then', [('temporary', 'POST'),
                                        ('moved', 'GET')])
def test_a_redirected_write_is_sent_on_as_requests_sends_it(bmcs, kind,
                                                           then):
    """A 307 keeps the method and the body; a 302 makes a POST a GET
    without its body (as requests does)."""
    bmc = bmcs()
    url = bmc.url + '/redfish/v1/Systems/' + kind
    answers = []
    for lean in (False, True):
        s = _session()
        if lean:
            r = lean_get.send(s, url, 'POST', json={'ResetType': 'On'},
                              **_WRITE)
        else:
            r = s.request('POST', url, json={'ResetType': 'On'}, **_WRITE)
        answers.append(r.status_code)
    assert answers[0] == answers[1]
    writes = [w for w in bmc.seen if len(w) == 4]
    reads = [w for w in bmc.seen if len(w) == 2]
    if then == 'POST':
        (m1, p1, h1, b1), (m2, p2, h2, b2), (m3, p3, h3, b3), \
            (m4, p4, h4, b4) = writes
        assert (m2, p2, b2) == (m4, p4, b4) == (
            'POST', '/redfish/v1/Systems/1/Actions', b'{"ResetType": "On"}')
        assert (h3, h4) == (h1, h2)
    else:
        (_, _, h1, b1), (_, _, h3, b3) = writes
        (p2, h2), (p4, h4) = reads
        assert p2 == p4 == '/redfish/v1/Systems/1'
        assert (h3, b3) == (h1, b1)
        assert list(h4.items()) == list(h2.items())
        assert 'Content-Length' not in h4


def test_a_delete_is_sent_and_answered_as_requests_does(bmcs):
    bmc = bmcs()
    url = bmc.url + '/redfish/v1/SessionService/Sessions/Actions'
    answers = []
    for lean in (False, True):
        s = _session()
        s.headers['X-Auth-Token'] = 'token-1'
        r = lean_get.send(s, url, 'DELETE', **_WRITE) if lean else \
            s.request('DELETE', url, **_WRITE)
        answers.append((r.status_code, r.content))
    (m1, p1, h1, b1), (m2, p2, h2, b2) = bmc.seen
    assert (m2, p2, b2, h2) == (m1, p1, b1, h1)
    assert m1 == 'DELETE' and dict(h1)['Content-Length'] == '0'
    assert answers[1] == answers[0] == (204, b'')


@pytest.mark.parametrize('method, kwargs', [
    ('PUT', {'json': {'a': 1}}),
    ('POST', {'data': b'raw'}),
    ('POST', {'json': {'a': float('nan')}}),
], ids=['put', 'raw-data', 'not-json'])
def test_a_write_lean_get_does_not_do_is_left_to_requests(bmcs, method,
                                                          kwargs):
    bmc = bmcs()
    assert lean_get.send(_session(), bmc.url + '/redfish/v1/Systems/1',
                         method, **dict(_WRITE, **kwargs)) is None
    assert bmc.seen == []
