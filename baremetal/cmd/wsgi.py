"""Serving the API over HTTP with cheroot (a thread pool; idle keep-alive
connections wait in the kernel's epoll, not in a Python loop).

baremetal-api, whose requests wait on conductors, serves with a fixed
pool of threads.  baremetal-server's requests are CPU work under one
interpreter lock: every extra thread that takes part costs a wake-up and
a lock hand-over per request (one thread serves about twice the requests
per second of sixteen).  Its pool is elastic: it starts with one thread
and a watchdog adds one whenever requests wait while no request has
finished for a tick (some request is blocked, e.g. on a BMC), up to
[api]api_workers; threads idle for a while are retired again.
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
                 connection_limit: int, elastic: bool = False) -> None:
        self.max_threads = threads
        self.elastic = elastic and threads > 1
        self.finished = 0   # requests answered; the watchdog's progress
        if self.elastic:
            app = self._counting(app)
        self._server = cheroot_wsgi.Server(
            (host, port), app, numthreads=1 if self.elastic else threads,
            max=threads, request_queue_size=2048, timeout=300,
            server_name='baremetal', accepted_queue_size=connection_limit)
        # idle keep-alive connections kept open (cheroot's default: 10)
        self._server.keep_alive_conn_limit = connection_limit
        self._server.prepare()  # binds now: the port is known
        self._stop = threading.Event()
        self.threads = 1 if self.elastic else threads

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
        idle_since = None
        while not self._stop.wait(GROW_TICK):
            try:
                now = time.monotonic()
                done = self.finished
                if pool.qsize and done == seen and pool.idle == 0 and \
                        self.threads < self.max_threads:
                    pool.grow(1)
                    self.threads += 1
                    LOG.debug('API: %d threads (requests were waiting)',
                              self.threads)
                seen = done
                if pool.idle > 0 and self.threads > 1:
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


def make_server(app, conf, default_threads: int,
                elastic: bool = False) -> Server:
    api = conf.api
    server = Server(app, api.host_ip, api.port,
                    api.api_workers or default_threads,
                    api.connection_limit, elastic=elastic)
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
