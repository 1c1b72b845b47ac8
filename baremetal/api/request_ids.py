"""Request ids: every response names its request (API 1.107).

As Ironic (oslo.middleware's RequestId with Ironic's compat header),
every response, whatever its status or microversion, carries a fresh
``req-<uuid>`` in ``X-OpenStack-Request-Id`` and ``OpenStack-Request-Id``;
1.107 only documents it.  An incoming ``X-OpenStack-Request-Id`` of that
shape is kept as the global request id (``openstack.global_request_id``,
which oslo.context reads), not echoed back.
"""

import re
import uuid

ENV_REQUEST_ID = 'openstack.request_id'
ENV_GLOBAL_REQUEST_ID = 'openstack.global_request_id'
HEADERS = ('X-OpenStack-Request-Id', 'OpenStack-Request-Id')
_ID_RE = re.compile(r'^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-'
                    r'[a-f0-9]{4}-[a-f0-9]{12}$')


def new_id() -> str:
    return 'req-%s' % uuid.uuid4()


class RequestIds:
    """WSGI middleware: the outermost layer, so that errors from the
    layers inside (authentication's 401 too) carry the id as well."""

    def __init__(self, app) -> None:
        self.app = app

    def __call__(self, environ, start_response):
        incoming = environ.get('HTTP_X_OPENSTACK_REQUEST_ID')
        if incoming and _ID_RE.match(incoming):
            environ[ENV_GLOBAL_REQUEST_ID] = incoming
        req_id = new_id()
        environ[ENV_REQUEST_ID] = req_id

        def start(status, headers, exc_info=None):
            # no layer inside sets these headers
            headers = list(headers)
            headers.append((HEADERS[0], req_id))
            headers.append((HEADERS[1], req_id))
            return start_response(status, headers, exc_info)
        return self.app(environ, start)
