"""Serving the change feed to many clients from one poll of the database.

An API process keeps one ``Feed``: while at least one stream is open, a
thread asks the database every ``[events]poll_interval`` seconds for the
events after the last id it has (one range scan of the primary key,
whatever the number of streams) and keeps the newest in memory.  A
stream behind what memory holds (it resumed from an old id) reads the
database itself, page by page, until it has caught up.

Why nothing is missed or repeated: ids become visible in id order (see
db/events.py), so "every event with an id in (base, head] is in memory"
stays true when the poller appends what it read after ``head``; a stream
delivers in id order from its own cursor and moves it past what it
delivered (or, reading the database, past the last id handed out when it
started to read, since every id up to that one was committed then).

A stream holds one of the HTTP server's threads for as long as it is
open: ``Streams`` admits at most ``[events]max_streams`` at once per
process (and always leaves one thread for other requests); the HTTP
server keeps that many threads on top of its minimum (cmd/wsgi.py).
"""

import bisect
import collections
import itertools
import threading
import time
from collections.abc import Iterator

import orjson
from oslo_log import log

from baremetal.common import exception
from baremetal.db import events as db_events

LOG = log.getLogger(__name__)

# events kept in memory per process, and read per database page
BUFFER = 10000
PAGE = 500


def render(row: dict) -> dict:
    """An event as the API gives it."""
    out = {'id': row['id'], 'node': row['node_uuid'], 'field': row['field'],
           'old': row['old'], 'new': row['new'],
           'time': row['created_at'].isoformat(timespec='microseconds')
           + 'Z'}
    for key in db_events.CONTEXT:
        out[key] = row[key]
    if row.get('detail'):
        out.update(row['detail'])
    return out


class Feed:
    """The events of one process's poll, shared by its streams."""

    def __init__(self, poll_interval: float) -> None:
        self.poll_interval = poll_interval
        self._cond = threading.Condition()
        self._ids: collections.deque[int] = collections.deque()
        self._events: collections.deque[dict] = collections.deque()
        # every event with base < id <= head is in _events (None: not
        # polling)
        self.base: int | None = None
        self.head: int | None = None
        self._users = 0
        self._thread: threading.Thread | None = None
        self.polls = 0      # database queries made (tests look)
        self.closed = False

    def close(self) -> None:
        """The process stops: open streams end at once."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def subscribe(self) -> None:
        with self._cond:
            self._users += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name='event-feed', daemon=True)
                self._thread.start()

    def unsubscribe(self) -> None:
        with self._cond:
            self._users -= 1

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._users <= 0:
                    # the last stream went: forget, a later one starts
                    # afresh from the database
                    self._thread = None
                    self.base = self.head = None
                    self._ids.clear()
                    self._events.clear()
                    return
            try:
                self._poll()
            except Exception as e:   # a lost database: try again later
                LOG.warning('Reading new node events failed: %s', e)
            time.sleep(self.poll_interval)

    def _poll(self) -> None:
        if self.head is None:
            start = db_events.last_id()
            with self._cond:
                self.base = self.head = start
                self._cond.notify_all()
            return
        while True:
            self.polls += 1
            rows = db_events.after(self.head, PAGE)
            if not rows:
                return
            with self._cond:
                for row in rows:
                    self._ids.append(row['id'])
                    self._events.append(row)
                while len(self._ids) > BUFFER:
                    self.base = self._ids.popleft()
                    self._events.popleft()
                self.head = rows[-1]['id']
                self._cond.notify_all()
            if len(rows) < PAGE:
                return

    def after(self, cursor: int, timeout: float
              ) -> tuple[list[dict], int] | None:
        """The events after ``cursor`` and the cursor past them, waiting
        up to ``timeout`` for some; None if memory does not reach back
        to ``cursor`` (the caller reads the database)."""
        with self._cond:
            if self.head is None:
                self._cond.wait(timeout)
            if self.head is None or cursor < self.base:
                return None
            if cursor >= self.head:
                self._cond.wait(timeout)
                if self.head is None or cursor < self.base:
                    return None
            if cursor >= self.head:
                return [], cursor
            i = bisect.bisect_right(self._ids, cursor)
            return (list(itertools.islice(self._events, i, None)),
                    self.head)


class Streams:
    """How many streams this process serves at once, at most."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            if self.active >= self.limit:
                raise exception.TemporaryFailure(
                    reason='this API process already serves %d event '
                           'streams ([events]max_streams); try again later '
                           'or use the JSON pages of GET /events'
                           % self.limit)
            self.active += 1

    def give(self) -> None:
        with self._lock:
            self.active -= 1


class Stream:
    """A text/event-stream response body: an iterable the HTTP server
    closes when the client goes (a write to its socket fails, at the
    latest at the next keep-alive)."""

    def __init__(self, feed: Feed, streams: Streams, cursor: int,
                 filters: dict, keepalive: float) -> None:
        streams.take()
        self._streams = streams
        self._feed = feed
        self._done = False
        self._gen = self._generate(cursor, filters, keepalive)

    def __iter__(self) -> Iterator[bytes]:
        return self._gen

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._gen.close()
        finally:
            self._streams.give()

    def _generate(self, cursor: int, filters: dict, keepalive: float
                  ) -> Iterator[bytes]:
        feed = self._feed
        feed.subscribe()
        try:
            # reconnecting clients wait 2 s (the SSE default is ~3 s)
            yield b'retry: 2000\n: connected\n\n'
            quiet_since = time.monotonic()
            while not feed.closed:
                got = feed.after(cursor, keepalive / 3)
                if got is None:
                    rows, cursor = _from_database(cursor, filters)
                else:
                    rows, cursor = got
                    rows = [r for r in rows
                            if db_events.matches(r, **filters)]
                if rows:
                    yield b''.join(_sse(r) for r in rows)
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since >= keepalive:
                    yield b': keep-alive\n\n'
                    quiet_since = time.monotonic()
        finally:
            feed.unsubscribe()


def _from_database(cursor: int, sql_filters: dict
                   ) -> tuple[list[dict], int]:
    """A page of events after ``cursor`` read from the database, and the
    cursor past it: the last id handed out before the read when the page
    is not full (every id up to it was committed by then)."""
    upto = db_events.last_id()
    rows = db_events.after(cursor, PAGE, until=upto, **sql_filters)
    if len(rows) < PAGE:
        return rows, max(cursor, upto)
    return rows, rows[-1]['id']


def _sse(row: dict) -> bytes:
    return b'id: %d\nevent: node\ndata: %s\n\n' % (
        row['id'], orjson.dumps(render(row)))


_feed: Feed | None = None
_streams: Streams | None = None
_setup_lock = threading.Lock()


def configure(conf, threads: int | None = None) -> None:
    """Set this process's stream limit: [events]max_streams, and fewer
    than the HTTP server's ``threads``."""
    global _streams
    limit = conf.events.max_streams
    if threads is not None:
        limit = min(limit, max(0, threads - 1))
    with _setup_lock:
        _streams = Streams(limit)


def feed(conf) -> Feed:
    global _feed
    with _setup_lock:
        if _feed is None:
            _feed = Feed(conf.events.poll_interval)
        return _feed


def streams(conf) -> Streams:
    global _streams
    with _setup_lock:
        if _streams is None:
            _streams = Streams(conf.events.max_streams)
        return _streams


def close() -> None:
    """End the open streams (the HTTP server stops)."""
    with _setup_lock:
        if _feed is not None:
            _feed.close()


def held() -> int:
    """Threads held by open streams (the HTTP server keeps them)."""
    return _streams.active if _streams is not None else 0
