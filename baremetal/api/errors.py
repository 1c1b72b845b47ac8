"""The only place where exceptions become HTTP statuses and bodies.

The body is Ironic's: ``{"error_message": "<JSON of {faultcode,
faultstring, debuginfo}>"}``.
"""

import json

from oslo_log import log

from baremetal.common import exception
from baremetal.common import secrets

LOG = log.getLogger(__name__)

# category -> HTTP status; the most specific class in the MRO wins
_STATUS = (
    (exception.NodeIsRetired, 409),
    (exception.NotAcceptable, 406),
    (exception.MethodNotAllowed, 405),
    (exception.NotAuthenticated, 401),
    (exception.Invalid, 400),
    (exception.NotAuthorized, 403),
    (exception.NotFound, 404),
    (exception.Conflict, 409),
    (exception.TooLarge, 413),
    (exception.TemporaryFailure, 503),
    (exception.NotImplementedByDriver, 400),
    (exception.HardwareError, 500),
)


def status_of(exc: BaseException) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def body(status: int, message: str) -> bytes:
    """Ironic's error body.  The message may come from a conductor
    quoting what a driver or a library said: agent tokens and URL
    passwords are masked."""
    fault = {'faultcode': 'Client' if status < 500 else 'Server',
             'faultstring': secrets.mask_text(message), 'debuginfo': None}
    return json.dumps({'error_message': json.dumps(fault)}).encode()


_TITLES = {400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed',
           406: 'Not Acceptable'}


def http_error_body(status: int, description: str = '') -> bytes:
    """Ironic's body for errors of routing and version negotiation:
    ``{"error_message": "<JSON of {code, title, description}>"}``."""
    return json.dumps({'error_message': json.dumps({
        'code': status, 'title': _TITLES.get(status, ''),
        'description': description})}).encode()


_FAULTS = {404: exception.ResourceNotFound, 405: exception.MethodNotAllowed,
           406: exception.NotAcceptable}


def fault(status: int, message: str) -> exception.BaremetalException:
    """The exception answered as ``status`` with ``message`` in the
    fault envelope (404, 405, 406: a version gate's answers)."""
    return _FAULTS[status](message)


def headers(exc: BaseException) -> dict[str, str]:
    """Headers that go with the error response of ``exc``: Retry-After
    for a temporary failure (503)."""
    if isinstance(exc, exception.TemporaryFailure):
        return {'Retry-After': str(exc.retry_after)}
    return {}


def render(exc: BaseException) -> tuple[int, bytes]:
    """(status, body) for any exception; never a traceback."""
    status = status_of(exc)
    if isinstance(exc, exception.BaremetalException):
        message = exc.message
        if isinstance(exc, exception.TemporaryFailure):
            LOG.warning('Request refused for now: %s', message)
        elif status >= 500:
            LOG.error('Request failed: %s', message)
    else:
        LOG.error('Unexpected error while serving a request',
                  exc_info=exc)
        message = 'An internal error occurred: %s' % type(exc).__name__
    return status, body(status, message)
