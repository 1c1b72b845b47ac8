"""The conductor's worker pool: long node work runs here.

A bounded futurist pool that refuses work instead of queueing it when
all workers are busy, so an API caller gets 503 at once rather than a
node stuck behind a long queue.
"""

import threading

import futurist
from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)


class WorkerPool:
    def __init__(self, size: int) -> None:
        self.size = size
        self._executor = futurist.ThreadPoolExecutor(max_workers=size)
        self._lock = threading.Lock()
        self._busy = 0
        self._idle = threading.Condition(self._lock)

    def reserve(self) -> None:
        """Claim a worker now (503 if none is free); ``start`` uses it.
        Claim before changing anything, so a refusal changes nothing."""
        with self._lock:
            if self._busy >= self.size:
                raise exception.NoFreeConductorWorker()
            self._busy += 1

    def release(self) -> None:
        """Give back a claim that will not be used."""
        self._done()

    def start(self, fn, *args, **kwargs):
        """Run ``fn`` on the worker claimed with ``reserve``."""
        try:
            return self._executor.submit(self._wrap, fn, args, kwargs)
        except Exception:
            self._done()
            raise exception.NoFreeConductorWorker() from None

    def submit(self, fn, *args, **kwargs):
        self.reserve()
        return self.start(fn, *args, **kwargs)

    def _wrap(self, fn, args, kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            self._done()

    def _done(self) -> None:
        with self._lock:
            self._busy -= 1
            if self._busy == 0:
                self._idle.notify_all()

    @property
    def busy(self) -> int:
        return self._busy

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no work runs (graceful stop); False on timeout."""
        with self._lock:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def shutdown(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait)
