"""A Redfish connection's plain GETs sent by the standard library's
HTTP client itself.

sushy sends every request through a ``requests`` session, which sends it
through urllib3, which sends it through ``http.client``.  sushy asks
every BMC to close the connection after each answer (``Connection:
close``: some BMCs choke on kept connections), so urllib3's pool keeps
nothing between two requests, and its layer and ``requests``' (merging
the session's settings, preparing the request, building the response
twice) cost more CPU than ``http.client`` sending the request and
reading its answer: a power sync read takes 0.83x the conductor's CPU
through ``http.client`` alone, about half in one thread against a BMC
that answers at once (doc/source/admin/performance.rst).

``send`` does what ``requests`` and urllib3 would for the GETs that need
nothing more - the session's headers and basic credentials, sushy's
headers, TLS verified as ``verify`` says, timeouts, content decoding -
and answers with a ``requests.Response`` carrying the same status,
headers and body, so sushy (its errors, retries and session renewal)
sees no difference.  A GET that needs more goes through ``requests`` as
before: the session has proxies, cookies, hooks, client certificates or
an adapter of its own (sushy's TLS options), the call has other
arguments, or the BMC answers with a redirect (sent again through
``requests``, which follows it).  Errors are raised as the ``requests``
exceptions ``requests`` raises for them.

TLS contexts are kept per CA bundle (built again when its file
changes): urllib3 built one for every connection, loading a ``verify``
path's bundle - or, unverified, the system's whole store - each time
(52 ms of CPU a request on the machine of that guide).
"""

import contextlib
import http.client
import io
import os
import socket
import ssl
import threading
import types
import warnings

import requests
import requests.adapters
import requests.auth
import requests.cookies
import requests.exceptions as rx
import requests.structures
import requests.utils
import urllib3
from urllib3 import exceptions as ux
from urllib3.util import parse_url

_ARGS = frozenset(('json', 'data', 'headers', 'verify', 'timeout'))
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_PORTS = {'http': 80, 'https': 443}
_USER_AGENT = 'python-urllib3/%s' % urllib3.__version__   # urllib3's own


def _plain(session, url: str, kwargs: dict) -> bool:
    """Whether a GET needs nothing ``send`` leaves to requests."""
    if not _ARGS.issuperset(kwargs) or kwargs.get('json') is not None \
            or kwargs.get('data') is not None:
        return False
    auth = session.auth
    if auth is not None and not (isinstance(auth, tuple) and len(auth) == 2):
        return False
    # trust_env: client.py reads the environment once per connection
    if session.trust_env or session.proxies or session.cookies \
            or session.cert is not None or any(session.hooks.values()) \
            or session.params or session.stream:
        return False
    if not url.startswith(('http://', 'https://')):
        return False
    # only requests' own adapter (sushy mounts its own for TLS options)
    return type(session.get_adapter(url)) is requests.adapters.HTTPAdapter


def _headers(session, headers) -> dict | None:
    merged = requests.structures.CaseInsensitiveDict(session.headers)
    merged.update(headers or {})
    out = {}
    for name, value in merged.items():
        if value is None:
            continue
        if not isinstance(value, (str, bytes)) or \
                not isinstance(name, str):
            return None     # requests' own checks and messages
        out[name] = value
    if session.auth is not None:
        requests.auth.HTTPBasicAuth(*session.auth)(
            types.SimpleNamespace(headers=out))
    return out


def _timeouts(timeout) -> tuple:
    """(connect, read) seconds, as requests reads its timeout."""
    if isinstance(timeout, tuple):
        return timeout
    return timeout, timeout


_CONTEXTS: dict = {}
_CONTEXTS_LOCK = threading.Lock()


def _tls_context(verify) -> ssl.SSLContext:
    """The TLS context of ``verify`` as requests' adapter sets urllib3 up
    for it (``cert_verify``): True is requests' CA bundle, a string a CA
    file or directory, False no verification; one per bundle while its
    file does not change."""
    if not verify:
        key = None
    else:
        where = requests.utils.DEFAULT_CA_BUNDLE_PATH if verify is True \
            else verify
        try:
            st = os.stat(where) if where else None
        except OSError:
            st = None
        if st is None:
            # requests' own error and text
            raise OSError('Could not find a suitable TLS CA certificate '
                          'bundle, invalid path: %s' % where)
        key = (where, st.st_mtime_ns, st.st_size, st.st_ino)
    ctx = _CONTEXTS.get(key)
    if ctx is not None:
        return ctx
    from urllib3.util import ssl_
    if key is None:
        ctx = ssl_.create_urllib3_context(cert_reqs=ssl.CERT_NONE)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl_.create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED)
        ctx.check_hostname = True
        if os.path.isdir(where):
            ctx.load_verify_locations(capath=where)
        else:
            ctx.load_verify_locations(cafile=where)
    with _CONTEXTS_LOCK:
        if len(_CONTEXTS) > 64:     # bundles replaced many times over
            _CONTEXTS.clear()
        _CONTEXTS[key] = ctx
    return ctx


@contextlib.contextmanager
def _errors(timeout: type, broken: type):
    """Errors of the socket and ``http.client`` raised as requests
    raises them at this point of a request: a timeout as ``timeout``,
    TLS errors as its SSLError, others as ``broken``."""
    try:
        yield
    except TimeoutError as e:
        raise timeout(e)
    except ssl.SSLError as e:
        raise rx.SSLError(e)
    except (http.client.HTTPException, OSError) as e:
        raise broken(e)


def _connect(scheme: str, host: str, port: int, verify, timeouts: tuple):
    """A connected ``http.client`` connection, TLS set up as urllib3
    does (errors raised as requests raises them)."""
    ctx = _tls_context(verify) if scheme == 'https' else None
    addr = host[1:-1] if host.startswith('[') else host
    with _errors(rx.ConnectTimeout, rx.ConnectionError):
        sock = socket.create_connection((addr, port), timeouts[0])
    try:
        with _errors(rx.ReadTimeout, rx.ConnectionError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ctx is not None:
                if not verify:
                    warnings.warn(
                        "Unverified HTTPS request is being made to host "
                        "'%s'. Adding certificate verification is strongly "
                        'advised. See: https://urllib3.readthedocs.io/en/'
                        'latest/advanced-usage.html#tls-warnings' % addr,
                        ux.InsecureRequestWarning, stacklevel=3)
                sock = ctx.wrap_socket(sock, server_hostname=addr)
            sock.settimeout(timeouts[1])
    except rx.RequestException:
        sock.close()
        raise
    conn = http.client.HTTPConnection(addr, port)
    conn.sock = sock
    conn.default_port = _PORTS[scheme]  # not named in the Host header
    return conn


def _request(conn, path: str, headers: dict) -> bool:
    """Send the GET as urllib3 sends it (Host, then Accept-Encoding and
    User-Agent unless given); False if ``http.client`` refuses a header
    (requests is left to say why, nothing sent)."""
    names = {k.lower() for k in headers}
    try:
        conn.putrequest('GET', path, skip_host='host' in names,
                        skip_accept_encoding='accept-encoding' in names)
        if 'user-agent' not in names:
            conn.putheader('User-Agent', _USER_AGENT)
        for name, value in headers.items():
            conn.putheader(name, value)
    except (ValueError, UnicodeError):
        return False
    with _errors(rx.ReadTimeout, rx.ConnectionError):
        conn.endheaders()
    return True


def _answer(conn) -> tuple:
    """(http.client response, body) as urllib3 reads them."""
    with _errors(rx.ReadTimeout, rx.ConnectionError):
        raw = conn.getresponse()
    with _errors(rx.ConnectionError, rx.ChunkedEncodingError):
        body = raw.read()
    return raw, body


def _decoded(raw, body: bytes) -> bytes:
    """The body with its Content-Encoding undone, by urllib3."""
    if raw.getheader('content-encoding', 'identity').strip().lower() \
            == 'identity':
        return body
    try:
        return urllib3.HTTPResponse(
            body=io.BytesIO(body), headers=raw.getheaders(),
            status=raw.status, preload_content=False,
            decode_content=True).read()
    except ux.DecodeError as e:
        raise rx.ContentDecodingError(e)


def send(session, url: str, **kwargs) -> requests.Response | None:
    """GET ``url`` as ``session.request('GET', url, **kwargs)`` would;
    None when the GET needs requests (see the module's docstring)."""
    if not _plain(session, url, kwargs):
        return None
    headers = _headers(session, kwargs.get('headers'))
    if headers is None:
        return None
    try:
        url = requests.utils.requote_uri(url)
        parsed = parse_url(url)
    except (ValueError, ux.LocationParseError):
        return None
    scheme = (parsed.scheme or '').lower()
    if not parsed.host or scheme not in _PORTS:
        return None
    verify = kwargs.get('verify')
    if verify is None:      # requests' merge: the session's then
        verify = session.verify
    conn = _connect(scheme, parsed.host, parsed.port or _PORTS[scheme],
                    verify, _timeouts(kwargs.get('timeout')))
    try:
        if not _request(conn, parsed.request_uri, headers):
            return None
        raw, body = _answer(conn)
    finally:
        conn.close()
    if raw.status in _REDIRECTS and raw.getheader('location') is not None:
        return None         # requests follows it
    response = requests.Response()
    response.status_code = raw.status
    # as requests shows urllib3's: a repeated header once, its values
    # joined by ', ', named as first seen
    response.headers = requests.structures.CaseInsensitiveDict(
        urllib3.HTTPHeaderDict(raw.getheaders()))
    response.reason = raw.reason
    response.url = url
    response.encoding = requests.utils.get_encoding_from_headers(
        response.headers)
    response._content = _decoded(raw, body)
    response._content_consumed = True
    if 'set-cookie' in response.headers:
        # kept by the session as requests would (its next requests go
        # through requests, which sends them)
        prepared = requests.PreparedRequest()
        prepared.prepare(method='GET', url=url, headers=headers)
        requests.cookies.extract_cookies_to_jar(
            session.cookies, prepared,
            types.SimpleNamespace(_original_response=raw))
    return response
