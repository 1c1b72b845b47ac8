"""API request latency for /metrics: a WSGI middleware around the whole
API (authentication included), labelled with the route template the
dispatcher matched (``environ[ROUTE_KEY]``), the method and the status
class.  One clock read at each end and one histogram observe per
request."""

import time

from baremetal.common import metrics

# set by the dispatcher once a route matched the request
ROUTE_KEY = 'baremetal.route'
# the client's Accept header (the app below replaces it: every answer
# but /metrics is JSON)
ACCEPT_KEY = 'baremetal.accept'


class RequestMetrics:
    def __init__(self, app) -> None:
        self.app = app

    def __call__(self, environ, start_response):
        start = time.monotonic()
        status = '500'

        def recording_start_response(s, headers, exc_info=None):
            nonlocal status
            status = s
            return start_response(s, headers, exc_info)

        if environ.get('PATH_INFO') == '/metrics':
            environ[ACCEPT_KEY] = environ.get('HTTP_ACCEPT')
        try:
            return self.app(environ, recording_start_response)
        finally:
            metrics.observe_api_request(
                environ.get(ROUTE_KEY), environ.get('REQUEST_METHOD', ''),
                status, time.monotonic() - start)
