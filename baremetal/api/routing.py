"""A route table: (method, path template) -> handler, with version bounds.

Controllers register handlers with ``@route``; the app matches a request
against the table once, with one regex per path template.
"""

import dataclasses
import re
from collections.abc import Callable

from baremetal.api import versions


@dataclasses.dataclass
class Route:
    method: str
    template: str
    regex: re.Pattern
    handler: Callable
    min_version: int
    max_version: int
    status: int
    public: bool


_ROUTES: list[Route] = []
_BY_PREFIX: dict[str, list[Route]] = {}
# the routes served without credentials (auth.py lets their paths through)
_PUBLIC: list[Route] = []


def _compile(template: str) -> re.Pattern:
    parts = []
    for seg in template.strip('/').split('/'):
        if seg.startswith('{') and seg.endswith('}'):
            parts.append('(?P<%s>[^/]+)' % seg[1:-1])
        else:
            parts.append(re.escape(seg))
    return re.compile('^/' + '/'.join(parts) + '/?$')


def _prefix(path: str) -> str:
    segs = path.strip('/').split('/')
    return '/'.join(segs[:2])


def route(method: str, template: str, min_version: int = versions.MIN,
          max_version: int = versions.MAX, status: int = 200,
          public: bool = False):
    """Register a handler ``fn(req, **path_params)``."""
    def wrap(fn):
        r = Route(method, template, _compile(template), fn, min_version,
                  max_version, status, public)
        _ROUTES.append(r)
        _BY_PREFIX.setdefault(_prefix(template), []).append(r)
        if public:
            _PUBLIC.append(r)
        return fn
    return wrap


def match(method: str, path: str) -> tuple[Route, dict]:
    """The route for a request; NotFound or 405 (via MethodNotAllowed)."""
    candidates = _BY_PREFIX.get(_prefix(path), ())
    allowed = []
    for r in candidates:
        m = r.regex.match(path)
        if m is None:
            continue
        if r.method == method:
            return r, m.groupdict()
        allowed.append(r.method)
    if allowed:
        raise MethodNotAllowed(allowed)
    raise HTTPError(404)


def is_public(path: str) -> bool:
    """Whether ``path`` is one a ``public=True`` route serves, whatever
    the method: the authentication middleware lets it through without
    looking at credentials.  As Ironic's public routes: trailing slashes
    and one ``.json``/``.xml`` ending are ignored; the paths Ironic also
    serves without ``/v1`` (``/lookup``) are public only with it."""
    path = path.rstrip('/') or '/'
    for ending in ('.json', '.xml'):
        if path.endswith(ending):
            path = path[:-len(ending)]
            break
    return any(r.regex.match(path) for r in _PUBLIC)


class HTTPError(Exception):
    """An answer from routing or version negotiation, before any
    handler: Ironic gives these as plain HTTP errors (``code``,
    ``title``, ``description``) without the version headers."""

    def __init__(self, status: int, description: str = '') -> None:
        super().__init__(description or str(status))
        self.status = status
        self.description = description


class MethodNotAllowed(HTTPError):
    def __init__(self, allowed: list[str]) -> None:
        super().__init__(405)
        self.allowed = sorted(set(allowed))


def routes() -> list[Route]:
    return list(_ROUTES)
