"""The elastic HTTP thread pool of baremetal-server: one thread while
requests finish, more when a request blocks and others wait, and back
down once they are idle."""

import http.client
import threading
import time

import pytest

from baremetal.cmd import wsgi


ENTERED = threading.Event()


def _app(release: threading.Event):
    def app(environ, start_response):
        if environ['PATH_INFO'] == '/slow':
            ENTERED.set()
            release.wait(10)
        start_response('200 OK', [('Content-Type', 'text/plain'),
                                  ('Content-Length', '2')])
        return [b'ok']
    return app


@pytest.fixture
def serve():
    made = []

    def start(threads, elastic, release):
        server = wsgi.Server(_app(release), '127.0.0.1', 0, threads, 64,
                             min_threads=1 if elastic else None)
        threading.Thread(target=server.run, daemon=True).start()
        made.append((server, release))
        return server
    yield start
    for server, release in made:
        release.set()
        server.close()


def _get(port, path, timeout=10):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=timeout)
    c.request('GET', path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


def test_blocked_request_does_not_hold_up_the_others(serve, monkeypatch):
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 60)
    release = threading.Event()
    server = serve(4, True, release)
    port = server.effective_port
    assert server.threads == 1
    assert _get(port, '/fast') == (200, b'ok')

    slow = []
    t = threading.Thread(target=lambda: slow.append(_get(port, '/slow')))
    ENTERED.clear()
    t.start()
    assert ENTERED.wait(10)  # the only thread now waits in /slow
    t0 = time.monotonic()
    assert _get(port, '/fast') == (200, b'ok')
    assert time.monotonic() - t0 < 5   # served by an added thread
    assert server.threads >= 2
    release.set()
    t.join(10)
    assert slow == [(200, b'ok')]

    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 0.3)
    deadline = time.monotonic() + 5
    while server.threads > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.threads == 1
    assert _get(port, '/fast') == (200, b'ok')


def test_never_more_threads_than_the_limit(serve):
    release = threading.Event()
    server = serve(2, True, release)
    port = server.effective_port
    blocked = [threading.Thread(target=_get, args=(port, '/slow'))
               for _ in range(3)]
    for t in blocked:
        t.start()
    time.sleep(0.5)
    assert server.threads == 2
    release.set()
    for t in blocked:
        t.join(10)
    assert _get(port, '/fast') == (200, b'ok')


def test_fixed_pool_is_not_elastic(serve):
    server = serve(3, False, threading.Event())
    assert server.threads == 3 and not server.elastic
    assert _get(server.effective_port, '/fast') == (200, b'ok')


def test_a_minimum_stays(serve, monkeypatch):
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 0.1)
    server = wsgi.Server(_app(threading.Event()), '127.0.0.1', 0, 8, 64,
                         min_threads=3)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        assert server.elastic and server.threads == 3
        assert _get(server.effective_port, '/fast') == (200, b'ok')
        time.sleep(0.5)
        assert server.threads == 3
    finally:
        server.close()


def test_threads_waiting_on_conductors_make_room_at_once(monkeypatch):
    """baremetal-api: when every thread waits on a conductor (the
    ``waiting`` count) while requests queue, the pool grows by as many
    as queue at the next tick, without waiting for grow_after; the
    threads none of them needs go again together."""
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 60)
    release = threading.Event()
    waiting = [0]
    lock = threading.Lock()

    def app(environ, start_response):
        if environ['PATH_INFO'] == '/rpc':
            with lock:
                waiting[0] += 1
            try:
                release.wait(10)
            finally:
                with lock:
                    waiting[0] -= 1
        start_response('200 OK', [('Content-Length', '2')])
        return [b'ok']
    server = wsgi.Server(app, '127.0.0.1', 0, 16, 64, min_threads=1,
                         grow_after=60, waiting=lambda: waiting[0])
    threading.Thread(target=server.run, daemon=True).start()
    try:
        port = server.effective_port
        rpc = [threading.Thread(target=_get, args=(port, '/rpc'))
               for _ in range(6)]
        for t in rpc:
            t.start()
        deadline = time.monotonic() + 5
        while waiting[0] < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert waiting[0] == 6          # all six wait together
        assert 6 <= server.threads <= 7
        t0 = time.monotonic()
        assert _get(port, '/fast') == (200, b'ok')
        assert time.monotonic() - t0 < 5
        release.set()
        for t in rpc:
            t.join(10)
        monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 0.3)
        deadline = time.monotonic() + 3
        while server.threads > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.threads == 1
    finally:
        release.set()
        server.close()


def test_threads_go_back_under_steady_load(serve, monkeypatch):
    """Threads added for a blocked request go once no request has
    stalled for SHRINK_AFTER, even while clients keep every thread busy
    (CPU-bound requests are served best by one thread)."""
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 60)
    release = threading.Event()
    server = serve(8, True, release)
    port = server.effective_port
    ENTERED.clear()
    slow = threading.Thread(target=_get, args=(port, '/slow'))
    slow.start()
    assert ENTERED.wait(10)
    assert _get(port, '/fast') == (200, b'ok')     # a thread was added
    assert server.threads == 2
    release.set()
    slow.join(10)
    stop = time.monotonic() + 3
    answered = []

    def hammer():
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        while time.monotonic() < stop:
            c.request('GET', '/fast')
            answered.append(c.getresponse().read())
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 0.3)
    # a busy test machine (the other test worker) may pause every thread
    # for 25 ms now and then: that is not what this test is about
    server.grow_after = 0.5
    clients = [threading.Thread(target=hammer) for _ in range(6)]
    for t in clients:
        t.start()
    deadline = time.monotonic() + 2.5
    while server.threads > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.threads == 1
    for t in clients:
        t.join(10)
    assert answered and set(answered) == {b'ok'}


def test_threads_held_by_streams_are_kept_on_top_of_the_minimum(
        monkeypatch):
    """A long response (a stream of the change feed) holds its thread:
    the pool counts it as held and does not shrink below minimum + held,
    so the next request does not wait for a thread to be added again;
    once the stream ends the pool goes back to its minimum."""
    monkeypatch.setattr(wsgi, 'SHRINK_AFTER', 0.2)
    release = threading.Event()
    held = [0]

    def app(environ, start_response):
        start_response('200 OK', [('Content-Type', 'text/event-stream')])
        if environ['PATH_INFO'] != '/stream':
            return [b'ok']
        environ['baremetal.stream'] = True   # as api/app.py marks one

        def body():
            held[0] += 1
            try:
                yield b': connected\n\n'
                release.wait(10)
            finally:
                held[0] -= 1
        return body()
    server = wsgi.Server(app, '127.0.0.1', 0, 8, 64, min_threads=1,
                         held=lambda: held[0])
    threading.Thread(target=server.run, daemon=True).start()
    try:
        port = server.effective_port
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        c.request('GET', '/stream')
        r = c.getresponse()
        # the first chunk arrives at once (cheroot alone would keep it
        # in its buffer until the response ends)
        assert r.status == 200
        assert r.fp.readline() == b'd\r\n'
        assert r.fp.readline() == b': connected\n'
        deadline = time.monotonic() + 5
        while held[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _get(port, '/fast') == (200, b'ok')   # a thread added
        time.sleep(1.0)                               # > SHRINK_AFTER
        assert server.threads == 2
        assert _get(port, '/fast') == (200, b'ok')
        release.set()
        c.close()
        deadline = time.monotonic() + 5
        while server.threads > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.threads == 1
    finally:
        release.set()
        server.close()


def test_close_does_not_wait_for_the_selectors_next_look():
    """cheroot's selector looks at its stop flag between waits (half a
    second by default; here a minute): close() wakes it."""
    server = wsgi.Server(_app(threading.Event()), '127.0.0.1', 0, 2, 64,
                         min_threads=1)
    server._server.expiration_interval = 60
    threading.Thread(target=server.run, daemon=True).start()
    c = http.client.HTTPConnection('127.0.0.1', server.effective_port,
                                   timeout=10)
    c.request('GET', '/')
    assert c.getresponse().read() == b'ok'
    c.close()
    closing = threading.Thread(target=server.close, daemon=True)
    closing.start()
    closing.join(20)
    assert not closing.is_alive(), 'close() waited for the selector'


def test_a_server_bound_to_every_address_is_woken_on_loopback():
    assert wsgi._reachable('0.0.0.0') == '127.0.0.1'   # noqa: S104
    assert wsgi._reachable('') == '127.0.0.1'
    assert wsgi._reachable('::') == '::1'
    for host in ('127.0.0.1', '::1', '192.0.2.7', 'localhost'):
        assert wsgi._reachable(host) == host
