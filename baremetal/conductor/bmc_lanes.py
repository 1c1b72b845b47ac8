"""Which node's power the sync reads next: one lane per BMC.

The power state sync reads every node at every round.  Many nodes may
sit behind one BMC (a chassis manager serves several systems on one
address), and a BMC answers one request at a time at best.  So the
reads are queued per BMC endpoint (a *lane*) and a lane reads one node
at a time; ``[conductor]sync_power_state_workers`` worker threads serve
the lanes.  A lane holds a worker for one read only, then goes to the
back of the queue of ready lanes with its next node: the nodes of a busy
or slow BMC wait in their lane, not in a worker, and the lanes take
turns.

A BMC that cannot be reached, times out or answers with a server error
*errs*: its lane drops the rest of the round (those nodes are recorded as
failed with the same error, without a request, so that
``[conductor]power_state_sync_max_retries`` puts them into maintenance
as it would after reading each) and sits out the next rounds: 0 after
its first erring round, then 1, 3, 7, ... up to the rounds in
``[conductor]power_sync_max_backoff`` seconds.  A read that succeeds
resets it.

A round waits for its reads until the sync interval has passed, no
longer: a lane still busy (a slow BMC) carries its nodes over to the
next round, which does not queue them twice, so it delays no other
lane's next round.
"""

import collections
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import futurist

# what a read reports
OK = 'ok'              # read and recorded
FAILED = 'failed'      # this node's read failed (counted for the node)
BMC_ERROR = 'bmc'      # the BMC itself erred: back off
SKIPPED = 'skipped'    # not read (locked by another task, gone)


class _Lane:
    __slots__ = ('key', 'queue', 'queued', 'running', 'errors',
                 'resume_round')

    def __init__(self, key) -> None:
        self.key = key
        self.queue: collections.deque = collections.deque()
        self.queued: set = set()
        self.running = False
        self.errors = 0          # erring rounds in a row
        self.resume_round = 0    # the first round it is read again


class Lanes:
    """Lanes of one conductor, kept across rounds (for the back-off and
    for the nodes a slow BMC carries over)."""

    def __init__(self, workers: int, max_backoff_rounds: int,
                 executor=None) -> None:
        self.executor = executor or futurist.ThreadPoolExecutor(
            max_workers=workers)
        self.max_backoff_rounds = max(0, max_backoff_rounds)
        self.round = 0
        self._lanes: dict[Hashable, _Lane] = {}
        self._cond = threading.Condition()
        self._read: Callable[[Any], tuple[str, Any]] | None = None
        self._fail: Callable[[Any, Any], None] | None = None
        self._waiting: set = set()
        # lanes with a node to read and no worker on them, in turn
        self._ready: collections.deque = collections.deque()
        self._loops = 0         # worker loops running
        self._max_loops = max(1, workers)
        # the round's pace: (start, reads to do, seconds to do them in);
        # None: as many workers as allowed from the start
        self._pace: tuple[float, int, float] | None = None
        self._taken = 0         # reads taken this round (done or doing)
        self._most = 0          # the most workers at once this round

    # ---- a round ----
    def run_round(self, items: Iterable[tuple[Hashable, Hashable, Any]],
                  read: Callable[[Any], tuple[str, Any]],
                  fail: Callable[[Any, Any], None],
                  timeout: float | None = None,
                  pace: float | None = None) -> dict:
        """Queue ``(bmc key, node id, payload)`` items and wait for them
        (at most ``timeout`` seconds).  ``read(payload)`` reads one node
        and returns ``(outcome, error)``; ``fail(payload, error)`` records
        a failure without reading, for the nodes an erring BMC drops.

        ``pace``: the seconds the round's reads are to take.  The round
        starts with one worker and adds one (up to ``workers``) only
        while the reads fall behind that pace, and a worker stops while
        they are well ahead: as few threads as the BMCs' latency needs
        (threads contending for the interpreter cost CPU: with BMCs
        that answer at once, one worker reads fastest for the least).
        Without it every worker starts at once.

        Returns counts: queued, carried (still queued from an earlier
        round), backing_off (nodes of lanes that sit this round out),
        lanes, unfinished (lanes still busy when the round ended) and
        workers (the most that ran at once)."""
        stats = dict(queued=0, carried=0, backing_off=0, lanes=0,
                     unfinished=0, workers=0)
        start = []
        with self._cond:
            self.round += 1
            self._read, self._fail = read, fail
            touched = set()
            for key, ident, payload in items:
                lane = self._lanes.get(key)
                if lane is None:
                    lane = self._lanes[key] = _Lane(key)
                if lane.resume_round > self.round:
                    stats['backing_off'] += 1
                    continue
                touched.add(key)
                if ident in lane.queued:
                    stats['carried'] += 1
                    continue
                lane.queue.append((ident, payload))
                lane.queued.add(ident)
                stats['queued'] += 1
            for key in touched:
                lane = self._lanes[key]
                if not lane.running and lane.queue:
                    lane.running = True
                    start.append(lane)
            stats['lanes'] = len(touched)
            # the lanes this round waits for; a lane leaves the set when
            # it idles, and only the last one wakes the round (a scan of
            # every lane at every idle cost a fifth of the conductor's
            # CPU at 2,000 BMCs)
            self._waiting = {k for k in touched if self._lanes[k].running}
            self._taken = 0
            self._most = self._loops
            self._pace = None if pace is None else (
                time.monotonic(), stats['queued'] + stats['carried'],
                max(pace, 1e-9))
        self._start(start)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._waiting:
                left = None if deadline is None else \
                    deadline - time.monotonic()
                if left is not None and left <= 0:
                    stats['unfinished'] = len(self._waiting)
                    break
                if self._pace is not None:
                    # every worker may be waiting on a slow BMC: add
                    # one from here too while the round falls behind
                    if self._grow():
                        self._cond.release()
                        try:
                            self._spawn(1)
                        finally:
                            self._cond.acquire()
                    left = 0.5 if left is None else min(left, 0.5)
                self._cond.wait(left)
            self._waiting = set()
            self._pace = None
            stats['workers'] = self._most
        return stats

    # ---- pace (under the lock) ----
    def _expected(self) -> float:
        start, total, seconds = self._pace
        return total * min(1.0, (time.monotonic() - start) / seconds)

    def _grow(self) -> bool:
        """Count one more worker if the round needs it; the caller
        starts it (outside the lock)."""
        if not self._ready or self._loops >= self._max_loops:
            return False
        if self._pace is not None and self._taken + 1 > self._expected():
            # not a whole read behind, the reads in flight counted (a
            # worker that has just taken one is about to do it)
            return False
        self._loops += 1
        self._most = max(self._most, self._loops)
        return True

    def _ahead(self) -> bool:
        """Well ahead of the pace with more than one worker: one may
        stop."""
        return self._pace is not None and self._loops > 1 and \
            self._taken > self._expected() + self._loops

    def _start(self, lanes: list) -> None:
        """Put lanes that have nodes to read in the ready queue; start
        worker loops: one when the round has a pace and none runs, else
        while fewer than ``workers`` run."""
        with self._cond:
            self._ready.extend(lanes)
            if self._pace is not None:
                more = 1 if self._ready and not self._loops else 0
            else:
                more = max(0, min(len(self._ready),
                                  self._max_loops - self._loops))
            self._loops += more
            self._most = max(self._most, self._loops)
        self._spawn(more)

    def _spawn(self, n: int) -> None:
        for _ in range(n):
            try:
                self.executor.submit(self._work)
            except RuntimeError:        # the executor was shut down
                with self._cond:
                    self._loops -= 1
                    if not self._loops:
                        while self._ready:
                            self._idle(self._ready.popleft())

    def _work(self) -> None:
        """A worker: read the next ready lane's next node, put the lane
        back at the end of the ready queue if it has more, and go on
        until no lane is ready (or, on a pace, until the reads are well
        ahead of it).  One pool task per worker, not one per read: a
        future per read cost a tenth of the conductor's CPU at 2,000
        BMCs."""
        while True:
            with self._cond:
                if not self._ready or self._ahead():
                    self._loops -= 1
                    return
                lane = self._ready.popleft()
                ident, payload = lane.queue.popleft()
                self._taken += 1
                read, fail = self._read, self._fail
                grow = self._grow()
            if grow:
                self._spawn(1)
            self._read_one(lane, ident, payload, read, fail)

    def _read_one(self, lane: _Lane, ident, payload, read, fail) -> None:
        try:
            outcome, error = read(payload)
        except Exception as e:     # read() reports; this is a last resort
            outcome, error = FAILED, e
        with self._cond:
            lane.queued.discard(ident)
            if outcome == OK:
                lane.errors = 0
            dropped = []
            if outcome == BMC_ERROR:
                lane.errors += 1
                lane.resume_round = self.round + 1 + self.backoff_rounds(
                    lane.errors)
                dropped = list(lane.queue)
                lane.queue.clear()
                lane.queued.clear()
        for _, other in dropped:
            try:
                fail(other, error)
            except Exception:      # noqa: BLE001 (fail() logs its own)
                pass
        with self._cond:
            if lane.queue:
                self._ready.append(lane)
            else:
                self._idle(lane)

    def _idle(self, lane: _Lane) -> None:
        lane.running = False
        waiting = self._waiting
        if lane.key in waiting:
            waiting.discard(lane.key)
            if not waiting:
                self._cond.notify_all()

    def backoff_rounds(self, errors: int) -> int:
        """Rounds a BMC sits out after its ``errors``-th erring round in
        a row: 0, 1, 3, 7, ... capped."""
        return min((1 << min(errors - 1, 30)) - 1, self.max_backoff_rounds)

    # ---- for the curious (tests, logs) ----
    def backing_off(self) -> dict:
        """BMC key -> rounds left to sit out."""
        with self._cond:
            return {k: lane.resume_round - self.round - 1
                    for k, lane in self._lanes.items()
                    if lane.resume_round > self.round + 1}

    def forget_idle(self, keep: set) -> None:
        """Drop lanes of BMCs no longer seen (nodes deleted, moved)."""
        with self._cond:
            for key in [k for k, lane in self._lanes.items()
                        if k not in keep and not lane.running
                        and not lane.queue and not lane.errors]:
                del self._lanes[key]

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False)
