"""Log output without agent tokens or URL passwords.

The conductor sends the agent token in the query string of every
command (IPA reads it nowhere else), so every text quoting such a URL
carries it: urllib3's debug line for each request, and any exception
requests raises, logged with its message, as ``error_summary`` or in a
traceback.  ``install()`` puts a ``MaskingFilter`` on every handler of
the root logger, which all loggers (ours, urllib3's, oslo's) propagate
to: it masks the record's message (``secrets.mask_text``) and wraps the
handler's formatter so that the whole formatted line is masked too.

Both are needed: oslo.log's formatter renders a traceback and the
error summary from the live exception itself, after any filter ran, so
only the finished line shows what is really written; the message is
masked on the record as well for handlers that read it rather than
format it (journald's fields, oslo.messaging's error notifications).
"""

import logging
from typing import Any

from baremetal.common import secrets


class MaskingFilter(logging.Filter):
    """Masks a record's message, rendered with its arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True     # the formatter reports the broken record
        masked = secrets.mask_text(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class MaskingFormatter(logging.Formatter):
    """Another formatter's output, masked (the traceback too)."""

    def __init__(self, inner: logging.Formatter | None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        text = secrets.mask_text(self.inner.format(record))
        if record.exc_text:
            # left on the record by the inner formatter; handlers such as
            # journald's send it on its own
            record.exc_text = secrets.mask_text(record.exc_text)
        return text

    def formatException(self, ei: Any) -> str:
        return secrets.mask_text(self.inner.formatException(ei))

    def formatTime(self, record: logging.LogRecord,
                   datefmt: str | None = None) -> str:
        return self.inner.formatTime(record, datefmt)


_FILTER = MaskingFilter()


def install(logger: logging.Logger | None = None) -> None:
    """Mask every handler of ``logger`` (the root logger): call once
    logging is set up, and again after anything that replaces handlers
    (a reload of ``log_config_append``).  Calling it twice is harmless.
    """
    logger = logger or logging.getLogger()
    for handler in logger.handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
        if not isinstance(handler.formatter, MaskingFormatter):
            handler.setFormatter(MaskingFormatter(handler.formatter))
