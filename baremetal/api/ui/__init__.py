"""The read-only web page at ``/ui/``: static files shipped in the
package (``static/``: index.html, app.js, style.css), drawn in the
browser from the API itself (``/v1/nodes``, ``/events``,
``/nodes/{node}/plan``).

The files hold no data, so only who may fetch them differs by
``[DEFAULT]auth_strategy`` (``auth.protect_page``): anyone under
``noauth``; under ``http_basic`` whoever the browser's basic
authentication lets in (it then sends the same credentials with the
page's API requests); under ``keystone`` anyone, the page asking for a
token it sends as ``X-Auth-Token``.
"""

import mimetypes
import os

PREFIX = '/ui'
_DIR = os.path.join(os.path.dirname(__file__), 'static')
# what the page may load: itself only (no inline script, no other host)
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'")


def _files() -> dict[str, tuple[bytes, str]]:
    out = {}
    for name in sorted(os.listdir(_DIR)):
        path = os.path.join(_DIR, name)
        if not os.path.isfile(path):
            continue
        with open(path, 'rb') as f:
            body = f.read()
        ctype = mimetypes.guess_type(name)[0] or 'application/octet-stream'
        if ctype.startswith('text/') or ctype.endswith('javascript'):
            ctype += '; charset=utf-8'
        out[name] = (body, ctype)
    return out


class Page:
    """WSGI app serving the page's files (read once, at start)."""

    def __init__(self) -> None:
        self.files = _files()

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO') or '/'
        method = environ.get('REQUEST_METHOD', 'GET')
        if path == PREFIX:
            start_response('301 Moved Permanently', [
                ('Location', PREFIX + '/'), ('Content-Length', '0')])
            return [b'']
        name = path[len(PREFIX) + 1:] or 'index.html'
        found = self.files.get(name)
        if found is None:
            return _plain(start_response, '404 Not Found',
                          b'No such file in the web page\n')
        if method not in ('GET', 'HEAD'):
            return _plain(start_response, '405 Method Not Allowed',
                          b'The web page is read-only\n',
                          [('Allow', 'GET, HEAD')])
        body, ctype = found
        start_response('200 OK', [
            ('Content-Type', ctype), ('Content-Length', str(len(body))),
            ('Cache-Control', 'no-cache'),
            ('X-Content-Type-Options', 'nosniff'),
            ('Content-Security-Policy', _CSP)])
        return [b''] if method == 'HEAD' else [body]


def _plain(start_response, status: str, body: bytes, extra=()):
    start_response(status, [('Content-Type', 'text/plain; charset=utf-8'),
                            ('Content-Length', str(len(body))),
                            *extra])
    return [body]


def mount(api, page):
    """``api`` with ``page`` answering under ``/ui``."""
    def app(environ, start_response):
        path = environ.get('PATH_INFO') or '/'
        if path == PREFIX or path.startswith(PREFIX + '/'):
            return page(environ, start_response)
        return api(environ, start_response)
    return app
