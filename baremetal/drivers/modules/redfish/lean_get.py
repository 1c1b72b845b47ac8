"""A Redfish connection's plain GETs sent by urllib3 itself.

sushy sends every request through a ``requests`` session.  For a GET,
``requests`` spends about 0.35 ms of CPU merging the session's settings,
preparing the request and building its response on top of the 0.24 ms
urllib3 takes to send it and read the answer (one thread, a BMC on
loopback that answers at once); in the conductor, sending GETs here took
a fifth off a power sync read's CPU (doc/source/admin/performance.rst).
``send`` does what ``requests`` would for the GETs that need nothing
more - the session's headers and basic credentials, sushy's headers,
verify and timeout - and answers with a ``requests.Response`` carrying
the same status, headers and body, so sushy (its errors, retries and
session renewal) sees no difference. A GET that needs more goes through
``requests`` as before: the session has proxies, cookies, hooks, client
certificates or an adapter of its own (sushy's TLS options), the call
has other arguments, or the BMC answers with a redirect (sent again
through ``requests``, which follows it). Errors are raised as the
``requests`` exceptions ``requests`` raises for them.
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

_ARGS = frozenset(('json', 'data', 'headers', 'verify', 'timeout'))
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
# requests' own: no retries, and no re-reading of a read that failed
_RETRIES = urllib3.Retry(0, read=False)


def _adapter(session, url: str, kwargs: dict):
    """requests' adapter of a GET that needs nothing ``send`` leaves to
    requests; None otherwise."""
    if not _ARGS.issuperset(kwargs) or kwargs.get('json') is not None \
            or kwargs.get('data') is not None:
        return None
    auth = session.auth
    if auth is not None and not (isinstance(auth, tuple) and len(auth) == 2):
        return None
    # trust_env: client.py reads the environment once per connection
    if session.trust_env or session.proxies or session.cookies \
            or session.cert is not None or any(session.hooks.values()) \
            or session.params or session.stream:
        return None
    if not url.startswith(('http://', 'https://')):
        return None
    # only requests' own adapter (sushy mounts its own for TLS options)
    adapter = session.get_adapter(url)
    return adapter if type(adapter) is requests.adapters.HTTPAdapter \
        else None


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


def _timeout(timeout):
    if isinstance(timeout, tuple):
        connect, read = timeout
        return urllib3.Timeout(connect=connect, read=read)
    return urllib3.Timeout(connect=timeout, read=timeout)


def send(session, url: str, **kwargs) -> requests.Response | None:
    """GET ``url`` as ``session.request('GET', url, **kwargs)`` would;
    None when the GET needs requests (see the module's docstring)."""
    adapter = _adapter(session, url, kwargs)
    if adapter is None:
        return None
    headers = _headers(session, kwargs.get('headers'))
    if headers is None:
        return None
    try:
        url = requests.utils.requote_uri(url)
        parsed = parse_url(url)
    except (ValueError, ux.LocationParseError):
        return None
    if not parsed.host:
        return None
    verify = kwargs.get('verify')
    if verify is None:      # requests' merge: the session's then
        verify = session.verify
    # the pool requests would take, set up for TLS as requests sets it
    target = requests.PreparedRequest()
    target.url = url
    try:
        host, pool_kwargs = adapter.build_connection_pool_key_attributes(
            target, verify, None)
    except ValueError:
        return None         # requests' InvalidURL
    pool = adapter.poolmanager.connection_from_host(
        **host, pool_kwargs=pool_kwargs)
    adapter.cert_verify(pool, url, verify, None)
    try:
        raw = pool.urlopen('GET', parsed.request_uri, headers=headers,
                           redirect=False, assert_same_host=False,
                           preload_content=False, decode_content=False,
                           retries=_RETRIES,
                           timeout=_timeout(kwargs.get('timeout')))
    except (ux.ProtocolError, OSError) as e:
        raise rx.ConnectionError(e)
    except ux.MaxRetryError as e:
        reason = e.reason
        if isinstance(reason, ux.ConnectTimeoutError) and \
                not isinstance(reason, ux.NewConnectionError):
            raise rx.ConnectTimeout(e)
        if isinstance(reason, ux.SSLError):
            raise rx.SSLError(e)
        raise rx.ConnectionError(e)
    except ux.ClosedPoolError as e:
        raise rx.ConnectionError(e)
    except ux.SSLError as e:
        raise rx.SSLError(e)
    except ux.ReadTimeoutError as e:
        raise rx.ReadTimeout(e)
    try:
        content = raw.read(decode_content=True)
    except ux.ProtocolError as e:
        raise rx.ChunkedEncodingError(e)
    except ux.DecodeError as e:
        raise rx.ContentDecodingError(e)
    except ux.ReadTimeoutError as e:
        raise rx.ConnectionError(e)
    except ux.SSLError as e:
        raise rx.SSLError(e)
    finally:
        raw.release_conn()
    if raw.status in _REDIRECTS and 'location' in raw.headers:
        return None         # requests follows it
    response = requests.Response()
    response.status_code = raw.status
    response.headers = requests.structures.CaseInsensitiveDict(raw.headers)
    response.reason = raw.reason
    response.url = url
    response.encoding = requests.utils.get_encoding_from_headers(
        response.headers)
    response._content = content
    response._content_consumed = True
    if 'set-cookie' in raw.headers:
        # kept by the session as requests would (its next requests go
        # through requests, which sends them)
        prepared = requests.PreparedRequest()
        prepared.prepare(method='GET', url=url, headers=headers)
        requests.cookies.extract_cookies_to_jar(session.cookies, prepared,
                                                raw)
    return response
