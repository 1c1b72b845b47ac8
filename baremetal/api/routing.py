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
# routes whose template's second segment is a parameter
# (``/nodes/{node}/plan``), by their first segment
_BY_HEAD: dict[str, list[Route]] = {}
# the routes served without credentials (auth.py lets their paths through)
_PUBLIC: list[Route] = []
# the routes of paths outside /v1 whose first segment is also a v1
# resource's (the dispatcher asks serves_at_root)
_ROOT: list[Route] = []


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


def _by_head(template: str) -> str | None:
    """The first segment of a template whose second one is a parameter
    (such a route is looked up by its first segment only)."""
    segs = template.strip('/').split('/')
    if len(segs) > 1 and segs[1].startswith('{'):
        return segs[0]
    return None


def route(method: str, template: str, min_version: int = versions.MIN,
          max_version: int = versions.MAX, status: int = 200,
          public: bool = False):
    """Register a handler ``fn(req, **path_params)``."""
    def wrap(fn):
        r = Route(method, template, _compile(template), fn, min_version,
                  max_version, status, public)
        _ROUTES.append(r)
        head = _by_head(template)
        if head is None:
            _BY_PREFIX.setdefault(_prefix(template), []).append(r)
        else:
            _BY_HEAD.setdefault(head, []).append(r)
        if public:
            _PUBLIC.append(r)
        if template.strip('/').split('/')[0] not in ('', 'v1'):
            _ROOT.append(r)
        return fn
    return wrap


def match(method: str, path: str, version: int = versions.MAX
          ) -> tuple[Route, dict]:
    """The route for a request at API ``version``; NotFound or 405 (via
    MethodNotAllowed) for what no route serves, ``TooOld`` for what a
    later (or earlier) version serves."""
    allowed = []
    too_old = None
    for r in _candidates(path):
        m = r.regex.match(path)
        if m is None:
            continue
        served = r.min_version <= version <= r.max_version
        if r.method == method:
            if served:
                return r, m.groupdict()
            too_old = r
        elif served:
            allowed.append(r.method)
        elif too_old is None:
            too_old = r
    if too_old is not None and (too_old.method == method or not allowed):
        # the method's route is of another version, or the whole
        # resource is: Ironic's answer for it
        gate = versions.too_old(too_old.template, method)
        if too_old.method != method and not gate.plain:
            # Ironic's controllers that answer in the fault envelope
            # refuse a method none of their paths serves before looking
            # at the version
            served = {r.method for r in _ROUTES if versions.same_resource(
                too_old.template, r.template)}
            if method not in served:
                raise MethodNotAllowed(list(served))
        raise TooOld(too_old, gate)
    if allowed:
        raise MethodNotAllowed(allowed)
    raise HTTPError(404)


def _candidates(path: str) -> list[Route]:
    found = _BY_PREFIX.get(_prefix(path), [])
    head = _BY_HEAD.get(path.lstrip('/').split('/', 1)[0])
    return found + head if head else found


def serves_at_root(method: str, path: str) -> bool:
    """Whether a route outside ``/v1`` serves ``method`` on ``path``
    (``GET /nodes/{node}/plan``): the dispatcher then leaves the path
    as it is instead of reading ``/nodes/...`` as ``/v1/nodes/...``."""
    return any(r.method == method and r.regex.match(path)
               for r in _ROOT)


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


class TooOld(Exception):
    """A request for a resource (or a method of one) the requested
    version does not have; ``gate`` is how Ironic answers it."""

    def __init__(self, route: Route, gate: versions.Gate) -> None:
        super().__init__(route.template)
        self.route = route
        self.gate = gate


def routes() -> list[Route]:
    return list(_ROUTES)
