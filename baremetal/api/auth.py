"""Authentication middleware for ``[DEFAULT]auth_strategy``.

* ``noauth``: every caller is an admin (for loopback use);
* ``http_basic``: users from an htpasswd file with bcrypt hashes, as
  Ironic's standalone mode;
* ``keystone``: keystonemiddleware's auth_token.
Each sets ``environ['baremetal.context']`` to an oslo.context
RequestContext.  The paths of the routes marked ``public=True`` (the
version documents and the agent's lookup, heartbeat and
continue_inspection, as Ironic's public routes) bypass all three: no
credential is asked for or looked at there, and the handler runs without
a caller's context, so a public endpoint answers the same under every
strategy, with or without (right or wrong) credentials.
"""

import base64
import hashlib
import threading
import time

import bcrypt
from oslo_context import context as oslo_context
from oslo_log import log

from baremetal.api import errors
from baremetal.api import routing
from baremetal.common import exception

LOG = log.getLogger(__name__)


class RequestContext(oslo_context.RequestContext):
    pass


def admin_context() -> RequestContext:
    return RequestContext(is_admin=True, roles=['admin'],
                          system_scope='all', user_id='noauth',
                          project_id=None)


class NoAuth:
    def __init__(self, app) -> None:
        self.app = app
        self.ctx = admin_context()

    def __call__(self, environ, start_response):
        environ['baremetal.context'] = self.ctx
        return self.app(environ, start_response)


def _unauthorized(start_response, message: str):
    body = errors.body(401, message)
    start_response('401 Unauthorized', [
        ('Content-Type', 'application/json'),
        ('Content-Length', str(len(body))),
        ('WWW-Authenticate', 'Basic realm="Baremetal API"')])
    return [body]


class HTTPBasic:
    """htpasswd (bcrypt) auth; successful checks are cached for a minute
    so bcrypt's deliberate slowness is paid once per client."""

    def __init__(self, app, user_file: str) -> None:
        self.app = app
        self.user_file = user_file
        self._cache: dict[bytes, tuple[float, str]] = {}
        self._lock = threading.Lock()
        self._users = self._read()

    def _read(self) -> dict[str, bytes]:
        users = {}
        try:
            with open(self.user_file) as f:
                for line in f:
                    line = line.strip()
                    if not line or line.startswith('#') or ':' not in line:
                        continue
                    user, hashed = line.split(':', 1)
                    if not hashed.startswith(('$2y$', '$2b$', '$2a$')):
                        LOG.warning('htpasswd user %s: only bcrypt hashes '
                                    'are supported; ignored', user)
                        continue
                    users[user] = hashed.encode()
        except OSError as e:
            raise exception.ConfigInvalid(
                error_msg='cannot read [DEFAULT]http_basic_auth_user_file '
                '%s: %s' % (self.user_file, e.strerror or e)) from None
        return users

    def _check(self, header: str) -> str | None:
        key = hashlib.sha256(header.encode()).digest()
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            if hit and hit[0] > now:
                return hit[1]
        try:
            scheme, value = header.split(' ', 1)
            if scheme.lower() != 'basic':
                return None
            user, _, password = base64.b64decode(value).decode(
            ).partition(':')
        except (ValueError, UnicodeDecodeError):
            return None
        hashed = self._users.get(user)
        if hashed is None:
            return None
        if hashed.startswith(b'$2y$'):
            hashed = b'$2b$' + hashed[4:]
        if not bcrypt.checkpw(password.encode(), hashed):
            return None
        with self._lock:
            self._cache[key] = (now + 60, user)
        return user

    def __call__(self, environ, start_response):
        header = environ.get('HTTP_AUTHORIZATION')
        if not header:
            return _unauthorized(start_response,
                                 'Authorization required')
        user = self._check(header)
        if user is None:
            return _unauthorized(start_response,
                                 'Invalid user name or password')
        environ['baremetal.context'] = RequestContext(
            is_admin=True, roles=['admin'], system_scope='all',
            user_id=user)
        return self.app(environ, start_response)


class KeystoneContext:
    """After auth_token: build the context from its headers."""

    def __init__(self, app) -> None:
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('HTTP_X_IDENTITY_STATUS') == 'Confirmed':
            environ['baremetal.context'] = RequestContext.from_environ(
                environ)
        return self.app(environ, start_response)


def _protect(app, conf):
    strategy = conf.auth_strategy
    if strategy == 'noauth':
        return NoAuth(app)
    if strategy == 'http_basic':
        return HTTPBasic(app, conf.http_basic_auth_user_file)
    from keystonemiddleware import auth_token
    return auth_token.AuthProtocol(KeystoneContext(app),
                                   {'oslo_config_config': conf})


def protect_page(app, conf):
    """The web page's files (api/ui) behind ``[DEFAULT]auth_strategy``:
    open under ``noauth``; behind the same basic authentication as the
    API under ``http_basic`` (the browser asks once and sends the
    credentials with the page's API requests too); open under
    ``keystone``, where a browser has no token to send for a page: the
    page asks for one and sends it with its API requests."""
    if conf.auth_strategy == 'http_basic':
        return HTTPBasic(app, conf.http_basic_auth_user_file)
    return app


def wrap(app, conf):
    """``app`` behind ``[DEFAULT]auth_strategy``, except for the public
    routes' paths, which reach ``app`` as they came (the dispatcher
    still refuses a non-public route without a context)."""
    protected = _protect(app, conf)

    def auth_app(environ, start_response):
        if routing.is_public(environ.get('PATH_INFO') or '/'):
            return app(environ, start_response)
        return protected(environ, start_response)
    return auth_app
