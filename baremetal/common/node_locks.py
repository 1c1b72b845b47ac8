"""Waiting a little for a node another task holds.

As in Ironic, a request that meets a node locked by another task (a power
change finishing, a heartbeat, a periodic check) is not answered 409 at
once: it tries again for up to ``(node_locked_retry_attempts - 1) x
node_locked_retry_interval`` seconds.  Unlike Ironic's fixed interval, the
first tries come after a few milliseconds, backing off to a quarter of a
second, so a lock held for a moment delays the request by a moment.
Periodic tasks call without waiting: they skip a busy node and see it at
their next turn.
"""

import time
from collections.abc import Callable
from typing import Any

from baremetal.common import exception

_FIRST_PAUSE = 0.01     # seconds; doubled after each try
_MAX_PAUSE = 0.25       # seconds: the longest pause


def budget(conf) -> float:
    """Seconds a request waits for a held node (0: it does not)."""
    c = conf.conductor
    return max(c.node_locked_retry_attempts - 1, 0) * \
        c.node_locked_retry_interval


def retrying(conf, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``, called again while it raises NodeLocked
    and the wait ``conf`` allows (``budget``; None: no wait) has not
    passed; then the last NodeLocked.  The options are read only when
    the node is found held: the common case costs one call."""
    try:
        return fn(*args, **kwargs)
    except exception.NodeLocked:
        wait = budget(conf) if conf is not None else 0.0
        if wait <= 0:
            raise
    deadline = time.monotonic() + wait
    pause = _FIRST_PAUSE
    while True:
        time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
        pause = min(pause * 2, _MAX_PAUSE)
        try:
            return fn(*args, **kwargs)
        except exception.NodeLocked:
            if time.monotonic() >= deadline:
                raise
