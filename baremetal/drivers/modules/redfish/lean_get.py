"""A Redfish connection's plain requests (its GETs, and the POSTs and
PATCHes of its actions and settings) sent by the standard library's HTTP
client itself.

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

``send`` does what ``requests`` and urllib3 would for the requests that
need nothing more - the session's headers and basic credentials, sushy's
headers, a JSON body encoded as requests encodes it, TLS verified as
``verify`` says, timeouts, content decoding -
and answers with a ``requests.Response`` carrying the same status,
headers and body, so sushy (its errors, retries and session renewal)
sees no difference.  A request that needs more goes through ``requests``
as before: the session has proxies, cookies, hooks, client certificates or
an adapter of its own (sushy's TLS options), the call has other
arguments, or the BMC answers with a redirect (sent again through
``requests``, which follows it: a redirect is an answer that the BMC did
not act on, so a POST sent again is acted on once).  Errors are raised
as the ``requests`` exceptions ``requests`` raises for them.

The connection, its TLS (contexts kept per CA bundle: urllib3 built
one for every connection, loading a ``verify`` path's bundle - or,
unverified, the system's whole store - each time, 52 ms of CPU a
request on the machine of that guide) and the errors are
direct_http.py's, which the agent's client shares.
"""

import types

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

from baremetal.drivers.modules import direct_http

_ARGS = frozenset(('json', 'data', 'headers', 'verify', 'timeout'))
# what sushy sends: reads, actions (POST) and settings (PATCH)
METHODS = frozenset(('GET', 'POST', 'PATCH'))
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_USER_AGENT = 'python-urllib3/%s' % urllib3.__version__   # urllib3's own


def _plain(session, method: str, url: str, kwargs: dict) -> bool:
    """Whether a request needs nothing ``send`` leaves to requests."""
    if method not in METHODS or not _ARGS.issuperset(kwargs) \
            or kwargs.get('data') is not None \
            or (method == 'GET' and kwargs.get('json') is not None):
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


def _body(method: str, obj) -> bytes | None:
    """The body requests makes of ``json=obj``; b'' for a body requests
    does not make (a write without one); None where requests would say
    the object is no JSON (its own error)."""
    if obj is None:
        return b'' if method != 'GET' else None
    try:
        text = requests.models.complexjson.dumps(obj, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if isinstance(text, bytes) else text.encode('utf-8')


def _headers(session, headers, body: bytes | None = None) -> dict | None:
    """The headers requests sends, in its order: the session's and the
    call's merged, then those of the body, then the credentials."""
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
    if body is not None:
        # requests' prepare_body: the length (in place where given),
        # then the type unless given
        length = str(len(body))
        given = [k for k in out if k.lower() == 'content-length']
        if given:
            out = {('Content-Length' if k in given else k):
                   (length if k in given else v) for k, v in out.items()}
        else:
            out['Content-Length'] = length
        if body and 'content-type' not in {k.lower() for k in out}:
            out['Content-Type'] = 'application/json'
    if session.auth is not None:
        requests.auth.HTTPBasicAuth(*session.auth)(
            types.SimpleNamespace(headers=out))
    return out


def _timeouts(timeout) -> tuple:
    """(connect, read) seconds, as requests reads its timeout."""
    if isinstance(timeout, tuple):
        return timeout
    return timeout, timeout


def _request(conn, method: str, path: str, headers: dict,
             body: bytes | None = None) -> bool:
    """Send the request as urllib3 sends it (Host, then Accept-Encoding
    and User-Agent unless given, then the headers and the body); False if
    ``http.client`` refuses a header (requests is left to say why,
    nothing sent)."""
    names = {k.lower() for k in headers}
    try:
        conn.putrequest(method, path, skip_host='host' in names,
                        skip_accept_encoding='accept-encoding' in names)
        if 'user-agent' not in names:
            conn.putheader('User-Agent', _USER_AGENT)
        for name, value in headers.items():
            conn.putheader(name, value)
    except (ValueError, UnicodeError):
        return False
    with direct_http.errors(rx.ReadTimeout, rx.ConnectionError):
        conn.endheaders(body or None)
    return True


def send(session, url: str, method: str = 'GET',
         **kwargs) -> requests.Response | None:
    """``method`` ``url`` as ``session.request(method, url, **kwargs)``
    would; None when the request needs requests (see the module's
    docstring)."""
    if not _plain(session, method, url, kwargs):
        return None
    body = _body(method, kwargs.get('json'))
    if body is None and method != 'GET':
        return None
    headers = _headers(session, kwargs.get('headers'), body)
    if headers is None:
        return None
    try:
        url = requests.utils.requote_uri(url)
        parsed = parse_url(url)
    except (ValueError, ux.LocationParseError):
        return None
    scheme = (parsed.scheme or '').lower()
    if not parsed.host or scheme not in direct_http.PORTS:
        return None
    verify = kwargs.get('verify')
    if verify is None:      # requests' merge: the session's then
        verify = session.verify
    conn = direct_http.connect(
        scheme, parsed.host, parsed.port or direct_http.PORTS[scheme],
        verify, _timeouts(kwargs.get('timeout')))
    try:
        if not _request(conn, method, parsed.request_uri, headers, body):
            return None
        raw, body = direct_http.answer(conn)
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
    response._content = direct_http.decoded(raw, body)
    response._content_consumed = True
    if 'set-cookie' in response.headers:
        # kept by the session as requests would (its next requests go
        # through requests, which sends them)
        prepared = requests.PreparedRequest()
        prepared.prepare(method=method, url=url, headers=headers)
        requests.cookies.extract_cookies_to_jar(
            session.cookies, prepared,
            types.SimpleNamespace(_original_response=raw))
    return response
