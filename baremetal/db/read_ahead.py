"""Node list pages read ahead on PostgreSQL, while the client reads the
page before.

A client listing every node (Nova's resource tracker, ``baremetal node
list``) asks for one page, decodes it, then asks for the next with the
last node as its marker: the database, the API and the client each work
in turn while the other two wait.  Here, when a page was asked for with
a marker (the client is walking the list) and came back full, the API
has the database run the next page's statement at once, in a thread of
its own, and keeps the rows (at most ``MAX_PAGES`` pages; one not asked
for within ``KEEP_FOR`` seconds is dropped at the next page asked for).
The request for that page, if it comes, takes them instead of running
the statement again.

Nothing stale is ever served: before the statement, the reader notes
PostgreSQL's current snapshot (``pg_current_snapshot()``: the running
transactions and the next to complete); the request that takes the
rows asks for the snapshot again and uses them only when it is the same,
i.e. when no transaction has committed since before the statement ran
(any commit changes it).  Otherwise the rows are dropped and the page
is read as usual.  The snapshot that request asked for is the one the
read of the page after it starts from (taken before that read, so a
commit since makes that page stale as well): one round trip a page
walked instead of two.  The rows are what the page's own statement returns:
the same SQL and the same parameters, including the caller's project
and every filter, make the key they are kept under.

Transaction ids are the server's, not the database's: a commit in any
database of the PostgreSQL server (another service sharing it) makes
the pages read before it stale too.  Where the rows are often stale (a
busy server), reading ahead would only double the work: after N stale
pages in a row, only one page in 2**N (at most 16) is read ahead, until
one is used again.  One thread reads, at most ``MAX_PAGES`` pages
queued or running: beyond that a page is not read ahead.  What became
of the pages is counted in the metric
``baremetal_api_list_read_ahead_pages_total`` (GET /metrics).
"""

import collections
import threading
import time
from collections.abc import Callable
from typing import Any
from typing import NamedTuple

from oslo_log import log

from baremetal.common import metrics
from baremetal.db import engine
from baremetal.db import prepared

LOG = log.getLogger(__name__)

# pages kept at once (each ~0.6-2.5 MB of JSON text) and for how long
MAX_PAGES = 4
KEEP_FOR = 5.0
# how long a request waits for a read-ahead still running
WAIT_FOR = 30.0
_SNAPSHOT = 'SELECT pg_current_snapshot()::text'

# [api]list_read_ahead (the API sets it)
enabled = True

_lock = threading.Lock()
_pages: 'collections.OrderedDict[tuple, _Ahead]' = collections.OrderedDict()
_executor = None
_stale_streak = 0
_skipped = 0
_busy = 0       # reads queued or running


class Statement(NamedTuple):
    """A page's statement, the values of its parameters left unbound
    (None: all bound), and whether the caller keeps the statement and
    runs it again (its compiled shape is then found by the object:
    ``prepared.page_shape``)."""
    stmt: Any
    values: dict | None
    kept: bool


class _Ahead:
    __slots__ = ('future', 'at')

    def __init__(self, future, at: float) -> None:
        self.future = future
        self.at = at


def _usable(conn) -> bool:
    return enabled and conn.dialect.name == 'postgresql' and \
        engine.prepared_cache is not None and \
        engine.prepared_cache.usable(conn)


def _key(page: Statement, dialect, raw: frozenset,
         tuples: bool) -> tuple | None:
    """What tells a page's statement apart: its SQL and its parameters'
    values (None for a statement that cannot be keyed)."""
    try:
        p, shaped = prepared.page_shape(page.stmt, dialect, raw, page.kept)
        params = p.params({**shaped, **page.values} if page.values
                          else shaped)
        values = (tuple(params) if isinstance(params, tuple)
                  else tuple(sorted(params.items())))
        key = (id(engine.engine()), p.sql, values, raw, tuples)
        hash(key)
    except (prepared.Unsupported, TypeError):
        return None
    return key


def _snapshot(conn) -> str:
    return prepared.driver_scalar(conn, _SNAPSHOT)


def take(conn, page: Statement, raw: frozenset, tuples: bool
         ) -> tuple[list | None, str | None]:
    """The rows of ``page`` read ahead and still current, or None; and
    the snapshot asked for to tell (None when none was), which the
    next page's read may start from (``start``)."""
    global _stale_streak
    if not _pages or not _usable(conn):
        return None, None
    key = _key(page, conn.dialect, raw, tuples)
    with _lock:
        _expire(time.monotonic())
        ahead = _pages.pop(key, None)
    if ahead is None:
        return None, None
    try:
        before, rows = ahead.future.result(timeout=WAIT_FOR)
    except Exception as e:
        metrics.list_read_ahead('failed')
        LOG.debug('a page read ahead failed: %s', e)
        return None, None
    now = _snapshot(conn)
    if now != before:
        metrics.list_read_ahead('stale')
        _stale_streak += 1
        return None, now
    metrics.list_read_ahead('used')
    _stale_streak = 0
    return rows, now


def start(build: Callable[[], Statement], raw: frozenset,
          tuples: bool, before: str | None = None) -> None:
    """Read the page of the statement ``build()`` returns ahead, in the
    background.  ``before``: a snapshot asked for before this call
    (``take``'s), which the read compares with instead of asking for
    one more: a page read ahead is then one round trip to the server
    less, and a commit since that snapshot makes it stale all the same
    (a commit before the read too, which is only cautious)."""
    global _executor, _skipped, _busy
    if not enabled or engine.engine().dialect.name != 'postgresql' or \
            _busy >= MAX_PAGES:
        return
    if _stale_streak:
        _skipped += 1
        if _skipped < 2 ** min(_stale_streak, 4):
            return
    _skipped = 0
    page = build()
    key = _key(page, engine.engine().dialect, raw, tuples)
    if key is None:
        return
    with _lock:
        _expire(time.monotonic())
        if key in _pages:
            return
        if _executor is None:
            import futurist
            _executor = futurist.ThreadPoolExecutor(max_workers=1)
        _busy += 1
        future = _executor.submit(_read, page, raw, tuples, before)
        _pages[key] = _Ahead(future, time.monotonic())
        while len(_pages) > MAX_PAGES:
            _pages.popitem(last=False)
            metrics.list_read_ahead('unused')
    metrics.list_read_ahead('read')


def _expire(now: float) -> None:
    for key in [k for k, a in _pages.items() if now - a.at > KEEP_FOR]:
        del _pages[key]
        metrics.list_read_ahead('unused')


def _read(page: Statement, raw: frozenset, tuples: bool,
          before: str | None) -> tuple[str, list]:
    global _busy
    try:
        with engine.reader() as conn:
            if before is None:
                before = _snapshot(conn)
            return before, prepared.run_once(
                engine.prepared_cache, conn, page.stmt, page.values,
                raw=raw, tuples=tuples, kept=page.kept)
    finally:
        with _lock:
            _busy -= 1


def clear() -> None:
    """Forget every page read ahead (tests)."""
    global _stale_streak, _skipped
    with _lock:
        _pages.clear()
    _stale_streak = _skipped = 0
