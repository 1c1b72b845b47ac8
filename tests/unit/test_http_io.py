"""The API's HTTP connections (cmd/http_io.py): C-buffered reads, each
response sent in one call, what was written sent before the server
waits for the client, pipelined requests answered in order."""

import email.utils
import http.client
import socket
import threading
import time

import pytest

from baremetal.cmd import http_io
from baremetal.cmd import wsgi


def _app(environ, start_response):
    path = environ['PATH_INFO']
    if path == '/big':
        body = bytes(range(256)) * 4096          # 1 MiB
    elif path == '/echo':
        n = int(environ.get('CONTENT_LENGTH') or 0)
        body = environ['wsgi.input'].read(n)
    elif path == '/stream':
        environ['baremetal.stream'] = True
        start_response('200 OK', [('Content-Type', 'text/event-stream')])
        return _events(environ)
    else:
        body = ('you asked for %s' % path).encode()
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(body)))])
    return [body]


SECOND = threading.Event()


def _events(environ):
    yield b'data: one\n\n'
    # the client has the first event before the second is written
    SECOND.wait(10)
    yield b'data: two\n\n'


@pytest.fixture
def port():
    server = wsgi.Server(_app, '127.0.0.1', 0, 4, 64, min_threads=1)
    threading.Thread(target=server.run, daemon=True).start()
    yield server.effective_port
    SECOND.set()
    server.close()


@pytest.fixture
def server_sends(monkeypatch, port):
    """``sendall`` calls made on the server's side of its connections."""
    calls = []
    real = socket.socket.sendall

    def sendall(self, data, *a):
        try:
            local = self.getsockname()[1]
        except OSError:
            local = None
        if local == port:
            calls.append(bytes(data))
        return real(self, data, *a)
    monkeypatch.setattr(socket.socket, 'sendall', sendall)
    return calls


def _raw(port):
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    return s


def _read_response(f):
    """One response from a socket file: (status line, headers, body)."""
    status = f.readline()
    headers = {}
    while True:
        line = f.readline()
        if line in (b'\r\n', b''):
            break
        k, v = line.decode().split(':', 1)
        headers[k.strip().lower()] = v.strip()
    body = f.read(int(headers.get('content-length', 0)))
    return status, headers, body


def test_keep_alive_requests_each_in_one_send(port, server_sends):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    for i in range(5):
        c.request('GET', '/n%d' % i)
        r = c.getresponse()
        assert (r.status, r.read()) == (200, b'you asked for /n%d' % i)
    c.close()
    assert len(server_sends) == 5
    for i, sent in enumerate(server_sends):
        # status line, headers and body together
        assert sent.startswith(b'HTTP/1.1 200 OK\r\n')
        assert sent.endswith(b'\r\n\r\nyou asked for /n%d' % i)


def test_pipelined_requests_answered_in_order(port):
    s = _raw(port)
    s.sendall(b''.join(b'GET /p%d HTTP/1.1\r\nHost: x\r\n\r\n' % i
                       for i in range(3)))
    f = s.makefile('rb')
    for i in range(3):
        status, _, body = _read_response(f)
        assert status == b'HTTP/1.1 200 OK\r\n'
        assert body == b'you asked for /p%d' % i
    s.close()


def test_expect_100_continue_is_sent_before_the_body_is_read(port):
    s = _raw(port)
    s.sendall(b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n'
              b'Expect: 100-continue\r\n\r\n')
    f = s.makefile('rb')
    # the server waits for the body: it must have said to send it
    assert f.readline() == b'HTTP/1.1 100 Continue\r\n'
    assert f.readline() == b'\r\n'
    s.sendall(b'hello')
    status, _, body = _read_response(f)
    assert (status, body) == (b'HTTP/1.1 200 OK\r\n', b'hello')
    s.close()


def test_large_body_arrives_whole(port):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    c.request('GET', '/big')
    r = c.getresponse()
    assert r.read() == bytes(range(256)) * 4096
    c.request('GET', '/after')     # the connection is still in step
    assert c.getresponse().read() == b'you asked for /after'
    c.close()


def test_stream_events_are_sent_as_they_come(port):
    SECOND.clear()
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    c.request('GET', '/stream')
    r = c.getresponse()
    assert r.status == 200
    # chunked: the first chunk's size line, then the event
    assert r.fp.readline() == b'b\r\n'
    assert r.fp.read(11) == b'data: one\n\n'
    SECOND.set()
    assert r.fp.readline() == b'\r\n'
    assert r.fp.readline() == b'b\r\n'
    assert r.fp.read(11) == b'data: two\n\n'
    c.close()


def test_malformed_request_gets_its_400(port):
    s = _raw(port)
    s.sendall(b'NONSENSE\r\n\r\n')
    f = s.makefile('rb')
    status, _, body = _read_response(f)
    assert status.startswith(b'HTTP/1.1 400 ')
    assert body
    s.close()


def test_client_gone_mid_request_leaves_the_server_serving(port):
    s = _raw(port)
    s.sendall(b'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n'
              b'\r\nonly part')
    s.close()
    for _ in range(3):
        s = _raw(port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     b'\x01\x00\x00\x00\x00\x00\x00\x00')   # RST
        s.sendall(b'GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
        s.close()
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    c.request('GET', '/still')
    assert c.getresponse().read() == b'you asked for /still'


def test_date_header_is_now(port):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    c.request('GET', '/d')
    r = c.getresponse()
    r.read()
    dates = r.headers.get_all('Date')
    assert len(dates) == 1
    when = email.utils.parsedate_to_datetime(dates[0]).timestamp()
    assert abs(when - time.time()) < 5


def test_http_date_is_formatted_once_a_second(monkeypatch):
    now = [1_800_000_000.2]
    monkeypatch.setattr(http_io.time, 'time', lambda: now[0])
    formatted = []
    real = http_io.email.utils.formatdate

    def formatdate(t, usegmt):
        formatted.append(t)
        return real(t, usegmt=usegmt)
    monkeypatch.setattr(http_io.email.utils, 'formatdate', formatdate)
    first = http_io.http_date()
    now[0] += 0.5
    assert http_io.http_date() is first
    now[0] += 0.5
    second = http_io.http_date()
    assert formatted == [1_800_000_000, 1_800_000_001]
    assert first == b'Fri, 15 Jan 2027 08:00:00 GMT'
    assert second == b'Fri, 15 Jan 2027 08:00:01 GMT'


class _Sock:
    def __init__(self):
        self.sent = []

    def sendall(self, data):
        self.sent.append(bytes(data))


def test_writer_joins_small_and_sends_large_parts_apart():
    sock = _Sock()
    w = http_io.Writer(sock)
    w.write(b'head')
    w.write(memoryview(b'body'))
    assert sock.sent == [] and w.pending
    w.flush()
    assert sock.sent == [b'headbody'] and not w.pending
    big = b'x' * (http_io.JOIN_UP_TO + 1)
    w.write(b'head')
    w.write(big)
    w.flush()
    assert sock.sent[1:] == [b'head', big]
    assert w.bytes_written == 8 + 4 + len(big)
    with pytest.raises(TypeError):
        w.write('text')


def test_has_data_sends_what_is_pending_whole_first():
    """A response still pending when the server looks for a next request
    goes out whole (not through the non-blocking peek, where a full send
    buffer would stop it halfway)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(30)
    try:
        w = http_io.Writer(ours)
        r = http_io.Reader(ours, w)
        # more than the socket takes at once, as much as the writer holds
        big = bytes(range(256)) * (http_io.HOLD_UP_TO // 256)
        w.write(big)
        got = bytearray()

        def drain():
            while len(got) < len(big):
                chunk = theirs.recv(1 << 16)
                if not chunk:
                    return
                got.extend(chunk)
        t = threading.Thread(target=drain)
        t.start()
        assert r.has_data() is False
        t.join(30)
        assert bytes(got) == big
        theirs.sendall(b'GET / HTTP/1.1\r\n')
        deadline = time.monotonic() + 10
        while not r.has_data() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert r.readline() == b'GET / HTTP/1.1\r\n'
        assert ours.gettimeout() == 30
    finally:
        ours.close()
        theirs.close()


def test_writer_holds_back_at_most_a_mebibyte():
    sock = _Sock()
    w = http_io.Writer(sock)
    piece = b'y' * (256 * 1024)
    for _ in range(4):
        w.write(piece)
    assert sock.sent == []       # 1 MiB: still held
    w.write(b'z')
    assert b''.join(sock.sent) == piece * 4 + b'z' and not w.pending


def _reader_pair(linger, pool=None):
    ours, theirs = socket.socketpair()
    ours.settimeout(30)
    r = http_io.Reader(ours, http_io.Writer(ours))
    r.linger, r.pool = linger, pool
    return ours, theirs, r


def test_has_data_waits_a_while_for_the_next_request():
    ours, theirs, r = _reader_pair(5.0)
    try:
        timer = threading.Timer(0.05, theirs.sendall,
                                (b'GET / HTTP/1.1\r\n',))
        t0 = time.monotonic()
        timer.start()
        assert r.has_data() is True
        assert 0.04 <= time.monotonic() - t0 < 4
        assert r.readline() == b'GET / HTTP/1.1\r\n'
        assert ours.gettimeout() == 30
        # nothing comes: False once the linger is over
        r.linger = 0.05
        t0 = time.monotonic()
        assert r.has_data() is False
        assert time.monotonic() - t0 >= 0.04
        # the client went away: not data, and no wait for it
        r.linger = 5.0
        theirs.close()
        t0 = time.monotonic()
        assert r.has_data() is False
        assert time.monotonic() - t0 < 4
    finally:
        timer.join()
        ours.close()
        theirs.close()


class _Pool:
    def __init__(self, qsize):
        self.qsize = qsize


def test_has_data_does_not_wait_while_other_requests_queue():
    ours, theirs, r = _reader_pair(5.0, _Pool(1))
    try:
        t0 = time.monotonic()
        assert r.has_data() is False
        assert time.monotonic() - t0 < 1
        r.pool = _Pool(0)
        theirs.sendall(b'GET / HTTP/1.1\r\n')
        assert r.has_data() is True
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize('linger', [0.0, 2.0])
def test_a_prompt_next_request_skips_the_selector(monkeypatch, linger):
    """With a linger, the thread that answered a keep-alive connection
    reads its next request itself; without, the connection goes back to
    cheroot's selector after each response."""
    from cheroot import connections
    registered = []
    real = connections._ThreadsafeSelector.register

    def register(self, fileobj, events, data=None):
        if isinstance(data, http_io.Connection):
            registered.append(data)
        return real(self, fileobj, events, data)
    monkeypatch.setattr(connections._ThreadsafeSelector, 'register',
                        register)
    monkeypatch.setattr(wsgi, 'LINGER', linger)
    server = wsgi.Server(_app, '127.0.0.1', 0, 4, 64, min_threads=1)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        c = http.client.HTTPConnection('127.0.0.1', server.effective_port,
                                       timeout=10)
        for i in range(5):
            # the next request comes 20 ms after the answer
            time.sleep(0.02)
            c.request('GET', '/n%d' % i)
            r = c.getresponse()
            assert (r.status, r.read()) == (200, b'you asked for /n%d' % i)
        c.close()
    finally:
        server.close()
    if linger:
        # at most once: when the client closes
        assert len(registered) <= 1
    else:
        assert len(registered) >= 4
