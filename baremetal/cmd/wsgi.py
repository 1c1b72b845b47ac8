"""Serving the API over HTTP with waitress (threads, keep-alive)."""

import waitress.server
from oslo_log import log

LOG = log.getLogger(__name__)


def make_server(app, conf):
    api = conf.api
    server = waitress.server.create_server(
        app, host=api.host_ip, port=api.port, threads=api.api_workers,
        connection_limit=api.connection_limit, backlog=2048,
        channel_timeout=300, cleanup_interval=30, ident='baremetal',
        clear_untrusted_proxy_headers=True, asyncore_use_poll=True,
        expose_tracebacks=False)
    LOG.info('API listening on http://%s:%s/', api.host_ip,
             server.effective_port)
    return server
