"""Serving the API over HTTP with cheroot (a thread pool; idle keep-alive
connections wait in the kernel's epoll, not in a Python loop).

Requests are mostly CPU work under one interpreter lock: every extra
thread that takes part costs a wake-up and a lock hand-over per request
(one thread serves about twice the requests per second of sixteen).  So
the pool is elastic: it starts small and a watchdog adds a thread
whenever requests wait while no request has finished for a while (some
request is blocked, e.g. on a BMC), up to [api]api_workers; threads idle
for a while (none of them was needed for two seconds) are retired
again.  Both baremetal-server and baremetal-api start with one thread
and grow after 25 ms without progress.  baremetal-api's requests also
wait on conductors over RPC, so there the watchdog also counts the
threads that wait so: when all of them do while requests queue, it adds
as many threads as requests queue, at once.  Once two seconds pass with
no stall and no thread waiting on a conductor, the pool goes back to one
thread (busy threads finish their request first): under a steady load of
CPU-bound requests the extra threads would only contend for the lock.
Streams of the change feed (GET /events) hold a thread each for as long
as they are open: the pool keeps that many on top of its minimum, and
admits at most [events]max_streams of them (api/event_feed.py).
"""

import ipaddress
import socket
import threading
import time
from collections.abc import Callable

from cheroot import wsgi as cheroot_wsgi
from oslo_log import log

from baremetal.cmd import common
from baremetal.cmd import http_io

LOG = log.getLogger(__name__)

# how often the watchdog looks, and how long threads stay idle before
# the pool shrinks back by one
GROW_TICK = 0.025
SHRINK_AFTER = 2.0
# how long a thread that answered a request waits for the same
# connection's next one, when no other request waits: a client that asks
# again at once skips the selector's round trip (a wake-up of its thread
# and a hand-over to this one); a request on another connection that
# comes meanwhile waits at most this long
LINGER = 0.0005


class _Gateway(cheroot_wsgi.Gateway_10):
    """cheroot's WSGI 1.0 gateway, which sends a stream's every chunk as
    it comes (cheroot buffers what it writes until the response ends)."""

    def write(self, chunk):
        super().write(chunk)
        if self.env.get('baremetal.stream'):
            self.req.conn.wfile.flush()


class Server:
    def __init__(self, app, host: str, port: int, threads: int,
                 connection_limit: int, min_threads: int | None = None,
                 grow_after: float = GROW_TICK,
                 waiting: Callable[[], int] | None = None,
                 held: Callable[[], int] | None = None) -> None:
        self.max_threads = threads
        # how many threads long responses hold (streams of the change
        # feed): the pool keeps them on top of its minimum
        self.held = held
        # how many request threads wait on something else (conductors
        # over RPC) rather than work: when all do while requests queue,
        # the pool grows at the next tick, by as many as queue
        self.waiting = waiting
        self.min_threads = min(min_threads or threads, threads)
        self.elastic = self.min_threads < threads
        self.finished = 0   # requests answered; the watchdog's progress
        # how long no request may finish, while others wait, before a
        # thread is added
        self.grow_after = grow_after
        if self.elastic:
            app = self._counting(app)
        self._server = cheroot_wsgi.Server(
            (host, port), app, numthreads=self.min_threads,
            max=threads, request_queue_size=2048, timeout=300,
            server_name='baremetal', accepted_queue_size=connection_limit)
        self._server.gateway = _Gateway
        self._server.ConnectionClass = http_io.Connection
        # idle keep-alive connections kept open (cheroot's default: 10)
        self._server.keep_alive_conn_limit = connection_limit
        # a worker waits this long for a keep-alive connection's next
        # request before handing it back to the selector (cmd/http_io.py)
        self._server.keep_alive_linger = LINGER
        self._server.prepare()  # binds now: the port is known
        self._stop = threading.Event()
        self.threads = self.min_threads

    def _counting(self, app):
        def counted(environ, start_response):
            try:
                return app(environ, start_response)
            finally:
                # a lost update under a race still changes the value,
                # which is all the watchdog looks at
                self.finished += 1
        return counted

    @property
    def effective_port(self) -> int:
        return self._server.bind_addr[1]

    def run(self) -> None:
        if self.elastic:
            threading.Thread(target=self._watchdog, name='wsgi-watchdog',
                             daemon=True).start()
        self._server.serve()

    def _watchdog(self) -> None:
        pool = self._server.requests
        seen = self.finished
        # progress_at: a request finished (or none queued); needed_at:
        # the extra threads were last needed (a stall, or a thread
        # waiting on a conductor)
        progress_at = needed_at = time.monotonic()
        idle_since = None
        while not self._stop.wait(GROW_TICK):
            try:
                now = time.monotonic()
                done = self.finished
                queued = pool.qsize
                waiting = self.waiting() if self.waiting is not None else 0
                if waiting:
                    needed_at = now
                if queued and pool.idle == 0 and waiting >= self.threads \
                        and self.threads < self.max_threads:
                    # every thread waits on a conductor: nobody would
                    # take the queued requests for a long while
                    self._grow(min(queued, self.max_threads - self.threads))
                    progress_at = now
                elif done != seen or not queued:
                    progress_at = now
                elif now - progress_at >= self.grow_after and \
                        pool.idle == 0:
                    needed_at = now      # a stall, even at the limit
                    if self.threads < self.max_threads:
                        self._grow(1)
                        progress_at = now
                seen = done
                floor = min(self.max_threads, self.min_threads + (
                    self.held() if self.held is not None else 0))
                if now - needed_at > SHRINK_AFTER and \
                        self.threads > floor:
                    # no stall and no wait on a conductor for a while:
                    # back to the few threads that serve CPU-bound
                    # requests best (busy ones finish their request)
                    pool.shrink(self.threads - floor)
                    self.threads = floor
                    idle_since = None
                    continue
                idle = pool.idle
                if idle > 0 and self.threads > floor:
                    if idle_since is None:
                        idle_since, spare = now, idle
                    spare = min(spare, idle)
                    if now - idle_since > SHRINK_AFTER:
                        # threads no request needed for SHRINK_AFTER
                        n = min(spare, self.threads - floor)
                        pool.shrink(n)
                        self.threads -= n
                        idle_since = None
                else:
                    idle_since = None
            except Exception:  # never let the watchdog die
                LOG.exception('API thread watchdog')

    def _grow(self, n: int) -> None:
        # counted first: the new thread may answer a request before this
        # thread runs again
        self.threads += n
        self._server.requests.grow(n)
        LOG.debug('API: %d threads (requests were waiting)', self.threads)

    def close(self) -> None:
        from baremetal.api import event_feed
        self._stop.set()
        # streams of the change feed end, or the threads that serve
        # them would keep the server from stopping
        event_feed.close()
        done = threading.Event()
        threading.Thread(target=self._nudge, args=(done,), daemon=True,
                         name='wsgi-stop').start()
        try:
            self._server.stop()
        finally:
            done.set()

    def _nudge(self, done: threading.Event) -> None:
        """cheroot's selector looks at its stop flag between waits of up
        to half a second: a connection to the listening socket ends the
        wait, so that a stop takes milliseconds."""
        host, port = self._server.bind_addr[:2]
        host = _reachable(host)
        while not done.wait(0.01):
            try:
                socket.create_connection((host, port), timeout=1).close()
            except OSError:
                return      # no longer listening: stopped


def _reachable(host: str) -> str:
    """Where this machine reaches a server bound to ``host``: loopback
    for every address (of the family), else the address itself."""
    try:
        anywhere = not host or ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return host             # a host name
    if anywhere:
        return '::1' if ':' in host else '127.0.0.1'
    return host


class CannotListen(common.CannotStart):
    """The API's address cannot be bound (in use, not this host's)."""


def make_server(app, conf, default_threads: int, min_threads: int,
                grow_after: float = GROW_TICK,
                waiting: Callable[[], int] | None = None) -> Server:
    """The API's server, listening; CannotListen if it cannot."""
    from baremetal.api import event_feed
    api = conf.api
    threads = api.api_workers or default_threads
    # a stream of the change feed holds a thread while it is open
    event_feed.configure(conf, threads)
    try:
        server = Server(app, api.host_ip, api.port, threads,
                        api.connection_limit, min_threads=min_threads,
                        grow_after=grow_after, waiting=waiting,
                        held=event_feed.held)
    except OSError as e:
        # cheroot's: "No socket could be created -- ((host, port): why)"
        why = str(e).removeprefix('No socket could be created -- ')
        raise CannotListen('cannot listen on %s port %d ([api]host_ip, '
                           '[api]port): %s' % (api.host_ip, api.port,
                                               why)) from None
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
