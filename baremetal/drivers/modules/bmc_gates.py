"""One gate per BMC endpoint in this process.

The protocol clients (``ipmi/client.py``, ``redfish/client.py``) take a
BMC's gate around each request to it, so that a BMC gets one request at
a time whoever asks: a task on a node, the power sync, sensor data.  A
gate also remembers when its BMC last answered, for clients that space
their requests (``[ipmi]min_command_interval``).  Gates are kept for the
life of the process: one small object per BMC endpoint seen.
"""

import threading
from collections.abc import Hashable


class Gate:
    __slots__ = ('lock', 'last')

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last = 0.0         # time.monotonic() of the last answer


_GATES: dict[Hashable, Gate] = {}
_LOCK = threading.Lock()


def gate(endpoint: Hashable) -> Gate:
    """The gate of a BMC endpoint (a protocol's own key, e.g.
    ``('redfish', scheme, host, port)``)."""
    with _LOCK:
        found = _GATES.get(endpoint)
        if found is None:
            found = _GATES[endpoint] = Gate()
        return found
