"""HTTP requests sent by the standard library's ``http.client`` itself,
for the conductor's most frequent requests: a Redfish ``GET``
(redfish/lean_get.py) and every command to an agent (agent/client.py).

``requests`` sends a request through urllib3, which sends it through
``http.client``; on a new connection each time (sushy asks BMCs to close
theirs; an agent's address changes with every boot) their layers cost
several times what ``http.client`` does for the same request: 0.73
against 0.15 ms of CPU a request to a local agent double, and most of
the conductor's CPU in the agent phases went to them
(doc/source/admin/performance.rst).

Connections are set up as urllib3 sets them up (TCP_NODELAY, TLS
verified as ``verify`` says: True is requests' CA bundle, a string a CA
file or directory, False none), and every error is raised as the
``requests`` exception ``requests`` raises for it, so callers handle
both paths alike.  TLS contexts are kept per CA bundle (built again when
its file changes): urllib3 built one for every connection, loading the
bundle each time.
"""

import base64
import contextlib
import http.client
import io
import os
import socket
import ssl
import threading
import time
import urllib.parse
import warnings

import requests.exceptions as rx
import requests.utils
import urllib3
from urllib3 import exceptions as ux

PORTS = {'http': 80, 'https': 443}
# the largest answer read from a peer, as sent and once decoded: a BMC
# or an agent that sends more (an endless stream, a gzip bomb) is an
# error, not the conductor's memory.  A BIOS attribute registry is a
# few MB, an agent's collected logs tens of MB.  (Requests sent through
# ``requests`` are read with ``read_all``, to the same bound.)
MAX_BODY = 256 << 20


def _too_large(size: int) -> rx.RequestException:
    return rx.ContentDecodingError(
        'the answer is larger than %d MiB, more than any Redfish resource '
        'or agent answer: not read further' % (size >> 20))

_CONTEXTS: dict = {}
_CONTEXTS_LOCK = threading.Lock()


def tls_context(verify) -> ssl.SSLContext:
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
def errors(timeout: type, broken: type):
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


class _Bounded:
    """A connection's socket whose every receive ends by one deadline,
    the read timeout after the connection was set up: a peer that
    trickles its answer (a byte now and then, each within the read
    timeout, as a per-receive timeout allows for ever) cannot hold the
    request, its worker and its BMC's turn beyond the timeout the
    request was given.  Everything else is the socket's."""

    def __init__(self, sock, seconds: float,
                 deadline: float | None = None) -> None:
        self._sock = sock
        self._deadline = time.monotonic() + seconds if deadline is None \
            else deadline
        self._seconds = seconds
        # as a socket: closed once closed and its files are (http.client
        # closes the connection before it reads an answer that ends it)
        self._io_refs = 0
        self._closed = False

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def recv_into(self, *args):
        left = self._deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            self._sock.settimeout(left)
            return self._sock.recv_into(*args)
        except TimeoutError:
            raise TimeoutError('the answer did not arrive within %g '
                               'seconds' % self._seconds) from None

    def makefile(self, mode='rb', buffering=-1):
        # what socket.makefile('rb') makes, on this object's receives
        self._io_refs += 1
        return io.BufferedReader(socket.SocketIO(self, 'rb'))

    def _decref_socketios(self) -> None:
        self._io_refs -= 1
        if self._closed and self._io_refs <= 0:
            self._sock.close()

    def close(self) -> None:
        self._closed = True
        if self._io_refs <= 0:
            self._sock.close()


def connect(scheme: str, host: str, port: int, verify, timeouts: tuple,
            deadline: float | None = None):
    """A connected ``http.client`` connection, TLS set up as urllib3
    does (errors raised as requests raises them); its answer must
    arrive within the read timeout (``_Bounded``), or by ``deadline``
    (``time.monotonic()``) where an exchange of several requests has one."""
    ctx = tls_context(verify) if scheme == 'https' else None
    addr = host[1:-1] if host.startswith('[') else host
    with errors(rx.ConnectTimeout, rx.ConnectionError):
        sock = socket.create_connection((addr, port), timeouts[0])
    try:
        with errors(rx.ReadTimeout, rx.ConnectionError):
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
    conn.sock = _Bounded(sock, timeouts[1], deadline) if timeouts[1] \
        else sock
    conn.default_port = PORTS[scheme]  # not named in the Host header
    return conn


def answer(conn) -> tuple:
    """(http.client response, body) as urllib3 reads them, at most
    ``MAX_BODY`` bytes of it."""
    with errors(rx.ReadTimeout, rx.ConnectionError):
        raw = conn.getresponse()
    with errors(rx.ConnectionError, rx.ChunkedEncodingError):
        body = raw.read(MAX_BODY + 1)
        if len(body) <= MAX_BODY and raw.length:
            # shorter than its Content-Length (read() of it all says
            # so; a read of some does not)
            raise http.client.IncompleteRead(body, raw.length)
    if len(body) > MAX_BODY:
        raise _too_large(MAX_BODY)
    return raw, body


def read_all(response) -> None:
    """Read the body of a ``requests`` response sent with
    ``stream=True``, at most ``MAX_BODY`` bytes once decoded (as
    ``answer`` and ``decoded`` read theirs), into ``response.content``."""
    chunks, size = [], 0
    for chunk in response.iter_content(1 << 16):
        size += len(chunk)
        if size > MAX_BODY:
            response.close()
            raise _too_large(MAX_BODY)
        chunks.append(chunk)
    response._content = b''.join(chunks)
    response._content_consumed = True
    response.close()


def decoded(raw, body: bytes) -> bytes:
    """The body with its Content-Encoding undone, by urllib3 (at most
    ``MAX_BODY`` bytes of it)."""
    if raw.getheader('content-encoding', 'identity').strip().lower() \
            == 'identity':
        return body
    try:
        out = urllib3.HTTPResponse(
            body=io.BytesIO(body), headers=raw.getheaders(),
            status=raw.status, preload_content=False,
            decode_content=True).read(MAX_BODY + 1)
    except ux.DecodeError as e:
        raise rx.ContentDecodingError(e)
    if len(out) > MAX_BODY:
        raise _too_large(MAX_BODY)
    return out


def exchange(method: str, url: str, headers: dict, body: bytes | None,
             verify, timeout: float) -> tuple[int, bytes, str]:
    """Send one request on a connection of its own (closed after the
    answer); (status, body, charset of the answer or '').  A password in
    the URL is sent as basic credentials, as requests sends it.
    Redirects are answers like others: not followed.  Errors are the
    requests exceptions requests raises for them."""
    try:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or PORTS.get(scheme)
        host = parts.hostname
    except ValueError as e:
        raise rx.InvalidURL('%s' % e) from None
    if scheme not in PORTS or not host:
        raise rx.InvalidURL('not an http or https URL with a host')
    path = parts.path or '/'
    if parts.query:
        path += '?' + parts.query
    headers = dict(headers)
    if parts.username is not None:
        pair = '%s:%s' % (urllib.parse.unquote(parts.username),
                          urllib.parse.unquote(parts.password or ''))
        headers['Authorization'] = 'Basic ' + base64.b64encode(
            pair.encode('latin-1', 'replace')).decode()
    headers.setdefault('Connection', 'close')
    conn = connect(scheme, host, port, verify, (timeout, timeout))
    try:
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for name, value in headers.items():
                conn.putheader(name, value)
        except (ValueError, UnicodeError, http.client.InvalidURL) as e:
            raise rx.InvalidURL('%s' % e) from None
        if body is not None:
            conn.putheader('Content-Length', str(len(body)))
        with errors(rx.ReadTimeout, rx.ConnectionError):
            conn.endheaders(body)
        raw, content = answer(conn)
    finally:
        conn.close()
    charset = ''
    ctype = raw.getheader('content-type') or ''
    if 'charset=' in ctype:
        charset = ctype.split('charset=', 1)[1].split(';')[0].strip(
            ' "\'')
    return raw.status, decoded(raw, content), charset
