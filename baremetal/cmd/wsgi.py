"""Serving the API over HTTP with waitress (threads, keep-alive)."""

import waitress.channel
import waitress.server
import waitress.task
from oslo_log import log

LOG = log.getLogger(__name__)


class _KeepAliveTask(waitress.task.WSGITask):
    """waitress closes HTTP/1.1 connections after every 204 answer (it
    may not send a Content-Length there, then treats the length as
    unknown).  A 204 has no body by definition: keep the connection."""

    def set_close_on_finish(self) -> None:
        if (self.status.startswith('204') and self.version == '1.1'
                and self.request.headers.get('CONNECTION', '').lower()
                != 'close' and not self.close_on_finish):
            return
        super().set_close_on_finish()


class _Channel(waitress.channel.HTTPChannel):
    task_class = _KeepAliveTask


def make_server(app, conf, default_threads: int):
    api = conf.api
    server = waitress.server.create_server(
        app, host=api.host_ip, port=api.port,
        threads=api.api_workers or default_threads,
        connection_limit=api.connection_limit, backlog=2048,
        channel_timeout=300, cleanup_interval=30, ident='baremetal',
        clear_untrusted_proxy_headers=True, asyncore_use_poll=True,
        expose_tracebacks=False)
    server.channel_class = _Channel
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
