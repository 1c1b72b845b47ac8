"""Which node's power the sync reads next: one lane per BMC.

The power state sync reads every node at every round.  Many nodes may
sit behind one BMC (a chassis manager serves several systems on one
address), and a BMC answers one request at a time at best.  So the
reads are queued per BMC endpoint (a *lane*) and a lane reads one node
at a time; a pool of ``[conductor]sync_power_state_workers`` threads
serves the lanes.  A lane holds a worker for one read only, then goes to
the back of the pool's queue with its next node: the nodes of a busy or
slow BMC wait in their lane, not in a worker, and the lanes take turns.

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

    # ---- a round ----
    def run_round(self, items: Iterable[tuple[Hashable, Hashable, Any]],
                  read: Callable[[Any], tuple[str, Any]],
                  fail: Callable[[Any, Any], None],
                  timeout: float | None = None) -> dict:
        """Queue ``(bmc key, node id, payload)`` items and wait for them
        (at most ``timeout`` seconds).  ``read(payload)`` reads one node
        and returns ``(outcome, error)``; ``fail(payload, error)`` records
        a failure without reading, for the nodes an erring BMC drops.
        Returns counts: queued, carried (still queued from an earlier
        round), backing_off (nodes of lanes that sit this round out),
        lanes, and unfinished (lanes still busy when the round ended)."""
        stats = dict(queued=0, carried=0, backing_off=0, lanes=0,
                     unfinished=0)
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
        for lane in start:
            self._submit(lane)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                busy = [k for k in touched if self._lanes[k].running]
                if not busy:
                    break
                left = None if deadline is None else \
                    deadline - time.monotonic()
                if left is not None and left <= 0:
                    stats['unfinished'] = len(busy)
                    break
                self._cond.wait(left)
        return stats

    def _submit(self, lane: _Lane) -> None:
        try:
            self.executor.submit(self._step, lane)
        except RuntimeError:        # the executor was shut down
            with self._cond:
                self._idle(lane)

    def _step(self, lane: _Lane) -> None:
        """Read the lane's next node, then give the worker back."""
        with self._cond:
            ident, payload = lane.queue.popleft()
            read, fail = self._read, self._fail
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
                more = True
            else:
                more = False
                self._idle(lane)
        if more:
            self._submit(lane)

    def _idle(self, lane: _Lane) -> None:
        lane.running = False
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
