"""Threads that run the RPCs baremetal-api's requests wait on.

A request whose conductor may go silent while it waits runs its RPC here
and waits on the future (conductor/rpcapi.py ``_watched``), so that it
can stop waiting - answer 503 - once the API routes around the
conductor.  The RPC it gave up on goes on in its thread until its answer
or its timeout (``[DEFAULT]rpc_response_timeout_api``).

The threads are daemons and nothing joins them at exit: a process that
stops must not wait a minute for an RPC to a conductor that died (the
executors of futurist and concurrent.futures join their threads at
exit).  A thread is started whenever none is idle, up to ``most``
(beyond, the RPC waits for one); an idle one ends after ``IDLE_FOR``.
"""

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

# seconds an idle thread waits for work before it ends
IDLE_FOR = 60.0


class RpcThreads:
    def __init__(self, most: int) -> None:
        self._most = most
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0          # waiting for work, none meant for them
        self._backlog = 0       # work waiting for a thread (all busy)

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        start = False
        with self._lock:
            if self._idle:
                self._idle -= 1     # one idle thread takes it
            elif self._threads < self._most:
                self._threads += 1
                start = True
            else:
                self._backlog += 1
        self._work.put((fn, future))
        if start:
            threading.Thread(target=self._serve, name='rpc-wait',
                             daemon=True).start()
        return future

    def threads(self) -> int:
        return self._threads

    def _serve(self) -> None:
        while True:
            try:
                fn, future = self._work.get(timeout=IDLE_FOR)
            except queue.Empty:
                with self._lock:
                    if self._idle:
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue    # a submit counted on this one: take it
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as e:
                    future.set_exception(e)
            with self._lock:
                if self._backlog:
                    self._backlog -= 1      # it takes that work next
                else:
                    self._idle += 1
