"""What a handler sees of a request."""

import dataclasses
from typing import Any

from baremetal.common import exception
from baremetal.common import json_depth

DEFAULT_MAX_DEPTH = 25


@dataclasses.dataclass(frozen=True)
class Raw:
    """A handler's answer that is not JSON (sent as it is)."""
    body: bytes
    content_type: str


class Request:
    __slots__ = ('raw', 'version', 'context', 'route', 'response_headers',
                 'status', '_json', 'host_url', 'max_depth',
                 'pending_rules')

    def __init__(self, raw, version: int, context, host_url: str,
                 max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self.raw = raw                  # webob/pecan request
        self.version = version
        self.context = context
        self.route = None
        self.response_headers: dict[str, str] = {}
        self.status: int | None = None
        self._json: Any = ...
        self.host_url = host_url
        self.max_depth = max_depth
        # policy rules waiting for the row they are about (api/policy)
        self.pending_rules: list[str] = []

    @property
    def params(self):
        return self.raw.GET

    @property
    def method(self) -> str:
        return self.raw.method

    def body(self) -> bytes:
        """The request's body, read once.  A body of known length is
        read straight from the server's stream (webob's ``body`` copies
        it into a seekable buffer first: 16 us of a small PUT)."""
        environ = self.raw.environ
        length = environ.get('CONTENT_LENGTH')
        if length and length.isdigit() and \
                not environ.get('wsgi.input_terminated') and \
                not environ.get('webob.is_body_seekable'):
            body = environ['wsgi.input'].read(int(length))
            # webob (pecan's request) still finds it, if anything asks
            self.raw.body = body
            return body
        return self.raw.body

    def json(self) -> Any:
        if self._json is ...:
            body = self.body()
            if not body:
                self._json = None
            else:
                try:
                    self._json = json_depth.loads(body, self.max_depth,
                                                  json_depth.strict)
                except json_depth.TooDeep as e:
                    raise exception.Invalid(
                        reason='the request body is %s ([api]'
                        'max_json_body_depth)' % e) from None
                except ValueError as e:
                    raise exception.Invalid(
                        reason='the request body is not valid JSON: %s'
                        % e) from None
        return self._json

    def json_object(self, optional: bool = False) -> dict:
        """The body, which must be a JSON object (``optional``: or no
        body at all, read as ``{}``)."""
        body = self.json()
        if optional and body is None:
            return {}
        if not isinstance(body, dict):
            raise exception.Invalid(
                reason='the request body must be a JSON object')
        return body

    def allows(self, minor: int) -> bool:
        return self.version >= minor

    def link(self, *parts: str, bookmark: bool = False) -> dict:
        path = '/'.join(str(p) for p in parts)
        if bookmark:
            return {'href': '%s/%s' % (self.host_url, path),
                    'rel': 'bookmark'}
        return {'href': '%s/v1/%s' % (self.host_url, path), 'rel': 'self'}

    def links(self, *parts: str) -> list[dict]:
        return [self.link(*parts), self.link(*parts, bookmark=True)]
