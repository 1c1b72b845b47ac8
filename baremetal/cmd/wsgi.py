"""Serving the API over HTTP with cheroot (a thread pool; idle keep-alive
connections wait in the kernel's epoll, not in a Python loop)."""

from cheroot import wsgi as cheroot_wsgi
from oslo_log import log

LOG = log.getLogger(__name__)


class Server:
    def __init__(self, app, host: str, port: int, threads: int,
                 connection_limit: int) -> None:
        self._server = cheroot_wsgi.Server(
            (host, port), app, numthreads=threads,
            request_queue_size=2048, timeout=300,
            server_name='baremetal', accepted_queue_size=connection_limit)
        # idle keep-alive connections kept open (cheroot's default: 10)
        self._server.keep_alive_conn_limit = connection_limit
        self._server.prepare()  # binds now: the port is known

    @property
    def effective_port(self) -> int:
        return self._server.bind_addr[1]

    def run(self) -> None:
        self._server.serve()

    def close(self) -> None:
        self._server.stop()


def make_server(app, conf, default_threads: int) -> Server:
    api = conf.api
    server = Server(app, api.host_ip, api.port,
                    api.api_workers or default_threads,
                    api.connection_limit)
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
