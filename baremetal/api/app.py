"""The WSGI application: pecan, version negotiation, auth, dispatch.

Every request goes through ``Dispatcher.dispatch``: negotiate the
microversion, authenticate, match the route table, check version bounds
and policy, call the handler, render JSON.  Errors of any kind become
Ironic's error body via ``errors.render``.
"""

import functools
import json
import re
import urllib.parse

import orjson

import pecan
import pecan.core
import webob
from oslo_log import log
from oslo_middleware import http_proxy_to_wsgi

from baremetal.api import auth
from baremetal.api import errors
from baremetal.api import event_feed
from baremetal.api import routing
from baremetal.api import request as api_request
from baremetal.api import request_ids
from baremetal.api import request_metrics
from baremetal.api import ui
from baremetal.api import versions
from baremetal.common import exception
from baremetal.common import storable

LOG = log.getLogger(__name__)

_VERSION_HEADERS = {
    'X-OpenStack-Ironic-API-Minimum-Version': versions.MIN_STRING,
    'X-OpenStack-Ironic-API-Maximum-Version': versions.MAX_STRING,
}


@functools.cache
def _version_headers(version: int) -> tuple[tuple[str, str], ...]:
    """The headers of an answer at API ``version``."""
    return (('X-OpenStack-Ironic-API-Version',
             '%d.%d' % (versions.BASE, version)),
            ('OpenStack-API-Version',
             'baremetal %d.%d' % (versions.BASE, version)),
            ('Vary', 'OpenStack-API-Version, X-OpenStack-Ironic-API-Version'),
            *_VERSION_HEADERS.items())


# what URL quoting leaves as it is (webob's safe characters for a path)
_PATH_AS_IS = re.compile(r"[A-Za-z0-9_.\-~/!$&'()*+,;=:@]*")


def _url_text(text: str, part: str, quoted: bool) -> None:
    """A 400 when ``text`` (a URL's path or, ``quoted``, its query
    string, as the server hands them over: latin-1 text of the bytes
    received) is not UTF-8 once percent-decoded (Ironic's pecan answers
    400 too: webob would fail to decode it wherever it is first read), or
    holds a NUL character (``%00``), which no name or value has and
    PostgreSQL cannot even compare."""
    raw = text.encode('latin-1', 'replace')
    if quoted:
        raw = urllib.parse.unquote_to_bytes(raw)
    try:
        raw.decode('utf-8')
    except UnicodeDecodeError as e:
        raise routing.HTTPError(400, (
            "The request URL's %s is not valid UTF-8 once "
            'percent-decoded (byte 0x%02x at %d)'
            % (part, raw[e.start], e.start))) from None
    if b'\x00' in raw:
        raise routing.HTTPError(400, (
            "The request URL's %s holds a NUL character (%%00 at %d)"
            % (part, raw.index(b'\x00'))))


class _Request(webob.Request):
    """pecan's request without its ``__getattribute__`` (a Python call
    around every attribute read, about twenty a request, to turn a
    UnicodeDecodeError into a bare 400): ``_url_text`` refuses such a URL,
    with a message, before anything reads it."""


def _path(req, environ) -> str:
    """``req.path`` (webob's: SCRIPT_NAME and PATH_INFO, URL-quoted),
    without webob's decoding and quoting where they change nothing."""
    path = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
    if _PATH_AS_IS.fullmatch(path):
        return path
    _url_text(path, 'path', quoted=False)
    return req.path


# first path segments Ironic also serves without the /v1 prefix
_V1_RESOURCES = frozenset((
    'nodes', 'ports', 'portgroups', 'drivers', 'chassis', 'conductors',
    'allocations', 'deploy_templates', 'volume', 'lookup', 'heartbeat',
    'events', 'shards', 'runbooks', 'continue_inspection',
    'inspection_rules'))


def _dumps(obj) -> bytes:
    # orjson: a 2.5 MB node detail page encodes in a tenth of the time
    try:
        return orjson.dumps(obj, default=str,
                            option=orjson.OPT_PASSTHROUGH_DATETIME)
    except orjson.JSONEncodeError:
        # what orjson does not write, passed on from a peer by a driver
        # (a BMC's or an agent's answer): a lone UTF-16 surrogate (as its
        # escape, as stored texts have it) or an integer beyond 64 bits
        return json.dumps(storable.deep(obj), default=str,
                          separators=(',', ':')).encode()

# pecan inspects the controller's signature on every request to drop
# unexpected keyword arguments; our one controller never changes, so
# remember the answer (it was a fifth of a node GET's time).
pecan.core.getargspec = functools.lru_cache(maxsize=64)(
    pecan.core.getargspec)


def _load_controllers() -> None:
    # importing registers the routes
    from baremetal.api.controllers import metrics  # noqa: F401
    from baremetal.api.controllers import events_feed  # noqa: F401
    from baremetal.api.controllers import node_plan  # noqa: F401
    from baremetal.api.controllers import root  # noqa: F401
    from baremetal.api.controllers.v1 import load_all
    load_all()


class Dispatcher:
    def __init__(self, conf, rpcapi) -> None:
        self.conf = conf
        self.rpcapi = rpcapi
        self.public_endpoint = (conf.api.public_endpoint or '').rstrip('/')
        self.max_body = conf.api.max_request_body_size
        self.max_depth = conf.api.max_json_body_depth

    @pecan.expose()
    def dispatch(self, req, resp):
        version = versions.MIN
        version_headers = True
        try:
            try:
                version = versions.parse(req.headers)
            except exception.NotAcceptable as e:
                raise routing.HTTPError(406, e.message) from None
            environ = req.environ
            query = environ.get('QUERY_STRING', '')
            if '%' in query or not query.isascii():
                _url_text(query, 'query string', quoted=True)
            path = _path(req, environ)
            method = environ['REQUEST_METHOD']
            if path.endswith('.json') and \
                    version < versions.NO_JSON_SUFFIX:
                # before 1.91 a ".json" ending only asked for JSON
                path = path[:-len('.json')]
            if path.split('/', 2)[1] in _V1_RESOURCES and \
                    not routing.serves_at_root(method, path):
                # Ironic routes /nodes/... and the like to v1 (this
                # service's own root routes stay: GET /events, the
                # change feed, not Ironic's POST-only /v1/events; GET
                # /nodes/{node}/plan)
                path = '/v1' + path
            ctx = environ.get('baremetal.context')
            try:
                r, params = routing.match(method, path, version)
            except routing.TooOld as e:
                if ctx is None and not e.route.public:
                    raise exception.NotAuthenticated(
                        'Authentication is required') from None
                if e.gate.plain:
                    raise routing.HTTPError(e.gate.status,
                                            e.gate.message) from None
                raise errors.fault(e.gate.status, e.gate.message) from None
            environ[request_metrics.ROUTE_KEY] = r.template
            if ctx is None and not r.public:
                raise exception.NotAuthenticated(
                    'Authentication is required')
            host_url = self.public_endpoint or req.host_url
            areq = api_request.Request(req, version, ctx, host_url,
                                       self.max_depth)
            areq.route = r
            if req.content_length and req.content_length > self.max_body:
                raise exception.TooLarge(
                    reason='the body is %d bytes; the limit is %d'
                    % (req.content_length, self.max_body))
            result = r.handler(areq, **params)
            if areq.pending_rules:
                # a rule about a row the handler never loaded: fail closed
                LOG.error('%s %s: policy rules %s were never checked '
                          'against a row', req.method, path,
                          areq.pending_rules)
                raise exception.NotAuthorized(
                    'Access was denied to the following resource: %s'
                    % areq.pending_rules[0])
            status = areq.status or r.status
            resp.status = status
            for k, v in areq.response_headers.items():
                resp.headers[k] = v
            if isinstance(result, api_request.Raw):
                resp.content_type = None
                resp.headers['Content-Type'] = result.content_type
                resp.body = result.body
            elif isinstance(result, event_feed.Stream):
                resp.content_type = 'text/event-stream'
                resp.app_iter = result
                # the HTTP server sends each chunk at once (cmd/wsgi.py)
                req.environ['baremetal.stream'] = True
            elif status == 204 or result is None:
                resp.body = b''
                resp.content_type = None
            else:
                resp.content_type = 'application/json'
                resp.body = _dumps(result)
        except routing.HTTPError as e:
            resp.status = e.status
            if isinstance(e, routing.MethodNotAllowed):
                resp.headers['Allow'] = ', '.join(e.allowed)
            resp.content_type = 'application/json'
            resp.body = errors.http_error_body(e.status, e.description)
            version_headers = False
            if e.status == 406:
                resp.headers.update(_VERSION_HEADERS)
        except Exception as e:
            status, body = errors.render(e)
            resp.status = status
            resp.content_type = 'application/json'
            resp.body = body
            resp.headers.update(errors.headers(e))
        if not version_headers:
            return resp
        # no layer sets these before: appended, not looked up first
        resp.headerlist.extend(_version_headers(version))
        return resp


class RootController:
    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher

    @pecan.expose()
    def _route(self, args, request=None):
        return self._dispatcher.dispatch, []


class _Pecan(pecan.core.ExplicitPecan):
    """pecan with its object-dispatch routing short-circuited: every
    request goes to ``Dispatcher.dispatch``, which matches our route
    table.  (pecan's generic routing inspects signatures and parses JSON
    bodies into parameters on every request; we need neither.)"""

    def _handle_empty_response_body(self, state):
        # a stream's body is read by the client, not here
        if not state.request.environ.get('baremetal.stream'):
            super()._handle_empty_response_body(state)

    def find_controller(self, state):
        controller = self.root._dispatcher.dispatch
        state.controller = controller
        state.request.pecan['content_type'] = 'application/json'
        return controller, [state.request, state.response], {}


def _json_only(app):
    """Every answer is JSON: keep pecan's content negotiation out."""
    def wrapper(environ, start_response):
        # kept for the one route that also answers otherwise (a stream
        # of the change feed)
        environ['baremetal.accept'] = environ.get('HTTP_ACCEPT', '')
        environ['HTTP_ACCEPT'] = '*/*'
        return app(environ, start_response)
    return wrapper


def setup_app(conf, rpcapi):
    """Build the WSGI app: pecan plus auth and proxy middleware."""
    _load_controllers()
    from baremetal.api import state as api_state
    api_state.CONF = conf
    api_state.RPC = rpcapi
    from baremetal.db import read_ahead
    read_ahead.enabled = conf.api.list_read_ahead
    app = _Pecan(RootController(Dispatcher(conf, rpcapi)),
                 force_canonical=False, guess_content_type_from_ext=False,
                 request_cls=_Request)
    app = auth.wrap(_json_only(app), conf)
    app = ui.mount(app, auth.protect_page(ui.Page(), conf))
    if conf.api.enable_proxy_headers_parsing:
        app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    return request_ids.RequestIds(request_metrics.RequestMetrics(app))
