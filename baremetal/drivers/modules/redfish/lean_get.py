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
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
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
    with direct_http.errors(rx.ReadTimeout, rx.ConnectionError):
        conn.endheaders()
    return True


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
    if not parsed.host or scheme not in direct_http.PORTS:
        return None
    verify = kwargs.get('verify')
    if verify is None:      # requests' merge: the session's then
        verify = session.verify
    conn = direct_http.connect(
        scheme, parsed.host, parsed.port or direct_http.PORTS[scheme],
                    verify, _timeouts(kwargs.get('timeout')))
    try:
        if not _request(conn, parsed.request_uri, headers):
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
        prepared.prepare(method='GET', url=url, headers=headers)
        requests.cookies.extract_cookies_to_jar(
            session.cookies, prepared,
            types.SimpleNamespace(_original_response=raw))
    return response
