"""A Redfish connection's plain requests (its GETs, the POSTs and
PATCHes of its actions and settings, its DELETEs) sent by the standard
library's HTTP client itself.

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
need nothing more - the session's headers, cookies and basic
credentials, sushy's headers, a JSON body encoded as requests encodes
it, TLS verified as ``verify`` says, timeouts, content decoding,
redirects followed as requests follows them (the session's
``get_redirect_target``, which client.py makes refuse another host) -
and answers with a ``requests.Response`` carrying the same status,
headers and body, so sushy (its errors, retries and session renewal)
sees no difference.  The whole exchange, its redirects included, ends
within the read timeout (direct_http's deadline; ``requests`` times each
receive, which a BMC trickling its answer, or one that redirects or
sets a cookie to be served by ``requests``, could stretch for ever).  A
request that needs more goes through ``requests`` as before: the
session has proxies, hooks, client certificates or an adapter of its
own (sushy's TLS options) - the operator's settings, none a BMC's - or
the call has other arguments.  Errors are raised as the ``requests``
exceptions ``requests`` raises for them.

The connection, its TLS (contexts kept per CA bundle: urllib3 built
one for every connection, loading a ``verify`` path's bundle - or,
unverified, the system's whole store - each time, 52 ms of CPU a
request on the machine of that guide) and the errors are
direct_http.py's, which the agent's client shares.
"""

import time
import types
import urllib.parse

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
# what sushy sends: reads, actions (POST), settings (PATCH), deletions
# (sessions, volumes)
METHODS = frozenset(('GET', 'POST', 'PATCH', 'DELETE'))
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
    if session.trust_env or session.proxies \
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


def _headers(session, headers, body: bytes | None = None,
             url: str = '') -> dict | None:
    """The headers requests sends, in its order: the session's and the
    call's merged, then the session's cookies for ``url``, then those of
    the body, then the credentials."""
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
    cookie = _cookie(session, url, out)
    if cookie is not None:      # in place of one given, as requests
        given = [k for k in out if k.lower() == 'cookie']
        out = {('Cookie' if k in given else k): (cookie if k in given
                                                 else v)
               for k, v in out.items()}
        out['Cookie'] = cookie
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


def _cookie(session, url: str, headers: dict) -> str | None:
    """The Cookie header requests sends of the session's cookies for a
    request of ``url`` with ``headers``; None for none."""
    if not session.cookies:
        return None
    return requests.cookies.get_cookie_header(
        session.cookies, types.SimpleNamespace(url=url, headers=headers))


# what a redirect that changes the method drops, as requests drops them
_BODY_HEADERS = frozenset(('content-length', 'content-type',
                           'transfer-encoding'))


def _redirected(session, response, method: str, headers: dict,
                body: bytes | None) -> tuple | None:
    """(url, method, headers, body) of the request that follows a
    redirect, as requests' ``resolve_redirects`` makes it; None where the
    answer is no redirect.  The session's cookies go last (requests
    sends the request it sent again, its cookies made anew)."""
    target = session.get_redirect_target(response)
    if target is None:
        return None
    if target.startswith('//'):
        target = '%s:%s' % (urllib.parse.urlsplit(response.url).scheme,
                            target)
    if urllib.parse.urlsplit(target).netloc:
        url = requests.utils.requote_uri(target)
    else:
        url = urllib.parse.urljoin(response.url,
                                   requests.utils.requote_uri(target))
    if session.should_strip_auth(response.url, url):
        headers = {k: v for k, v in headers.items()
                   if k.lower() != 'authorization'}
    status = response.status_code
    if method != 'HEAD' and (status in (303, 302) or
                             (status == 301 and method == 'POST')):
        method = 'GET'
    if status not in (307, 308):
        headers = {k: v for k, v in headers.items()
                   if k.lower() not in _BODY_HEADERS}
        body = None
    headers = {k: v for k, v in headers.items() if k.lower() != 'cookie'}
    cookie = _cookie(session, url, headers)
    if cookie is not None:
        headers['Cookie'] = cookie
    return url, method, headers, body


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
    try:
        url = requests.utils.requote_uri(url)
    except ValueError:
        return None
    headers = _headers(session, kwargs.get('headers'), body, url)
    if headers is None:
        return None
    verify = kwargs.get('verify')
    if verify is None:      # requests' merge: the session's then
        verify = session.verify
    timeouts = _timeouts(kwargs.get('timeout'))
    read = timeouts[1]
    deadline = time.monotonic() + read if read else None
    history: list[requests.Response] = []
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            raise rx.ReadTimeout('the answer did not arrive within %g '
                                 'seconds' % read)
        response = _exchange(session, url, method, headers, body, verify,
                             timeouts, deadline)
        if response is None:
            return None
        step = _redirected(session, response, method, headers, body)
        if step is None:
            response.history = history
            return response
        if len(history) >= session.max_redirects:
            raise rx.TooManyRedirects(
                'Exceeded %s redirects.' % session.max_redirects,
                response=response)
        history.append(response)
        url, method, headers, body = step


def _exchange(session, url: str, method: str, headers: dict,
              body: bytes | None, verify, timeouts: tuple,
              deadline: float | None) -> requests.Response | None:
    """One request of ``url`` (quoted as requests quotes it, by ``send``
    or ``_redirected``) and its answer (by the exchange's ``deadline``);
    None where requests must send it."""
    try:
        parsed = parse_url(url)
    except (ValueError, ux.LocationParseError):
        return None
    scheme = (parsed.scheme or '').lower()
    if not parsed.host or scheme not in direct_http.PORTS:
        return None
    conn = direct_http.connect(
        scheme, parsed.host, parsed.port or direct_http.PORTS[scheme],
        verify, timeouts, deadline)
    try:
        if not _request(conn, method, parsed.request_uri, headers, body):
            return None
        raw, body = direct_http.answer(conn)
    finally:
        conn.close()
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
