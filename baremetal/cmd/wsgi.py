"""Serving the API over HTTP with cheroot (a thread pool; idle keep-alive
connections wait in the kernel's epoll, not in a Python loop).

Requests are mostly CPU work under one interpreter lock: every extra
thread that takes part costs a wake-up and a lock hand-over per request
(one thread serves about twice the requests per second of sixteen).  So
the pool is elastic: it starts small and a watchdog adds a thread
whenever requests wait while no request has finished for a while (some
request is blocked, e.g. on a BMC), up to [api]api_workers; threads idle
for a while are retired again.  baremetal-server starts with one thread
and grows after 25 ms without progress; baremetal-api, whose requests
also wait on conductors over RPC (longer under load), starts with eight
and grows after 250 ms.
"""

import threading
import time

from cheroot import wsgi as cheroot_wsgi
from oslo_log import log

LOG = log.getLogger(__name__)

# how often the watchdog looks, and how long threads stay idle before
# the pool shrinks back by one
GROW_TICK = 0.025
SHRINK_AFTER = 2.0


class Server:
    def __init__(self, app, host: str, port: int, threads: int,
                 connection_limit: int, min_threads: int | None = None,
                 grow_after: float = GROW_TICK) -> None:
        self.max_threads = threads
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
        # idle keep-alive connections kept open (cheroot's default: 10)
        self._server.keep_alive_conn_limit = connection_limit
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
        progress_at = time.monotonic()
        idle_since = None
        while not self._stop.wait(GROW_TICK):
            try:
                now = time.monotonic()
                done = self.finished
                if done != seen or not pool.qsize:
                    progress_at = now
                elif now - progress_at >= self.grow_after and \
                        pool.idle == 0 and self.threads < self.max_threads:
                    pool.grow(1)
                    self.threads += 1
                    progress_at = now
                    LOG.debug('API: %d threads (requests were waiting)',
                              self.threads)
                seen = done
                if pool.idle > 0 and self.threads > self.min_threads:
                    if idle_since is None:
                        idle_since = now
                    elif now - idle_since > SHRINK_AFTER:
                        pool.shrink(1)
                        self.threads -= 1
                        idle_since = now
                else:
                    idle_since = None
            except Exception:  # never let the watchdog die
                LOG.exception('API thread watchdog')

    def close(self) -> None:
        self._stop.set()
        self._server.stop()


def make_server(app, conf, default_threads: int, min_threads: int,
                grow_after: float = GROW_TICK) -> Server:
    api = conf.api
    server = Server(app, api.host_ip, api.port,
                    api.api_workers or default_threads,
                    api.connection_limit, min_threads=min_threads,
                    grow_after=grow_after)
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
