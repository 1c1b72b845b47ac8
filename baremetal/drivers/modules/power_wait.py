"""Waiting for a BMC to report the power state it was asked for."""

import time
from collections.abc import Callable

from baremetal.common import exception
from baremetal.common import storable

# what the BMC said is quoted up to this many characters (it goes into
# last_error and the node's history, and a BMC may send anything)
SAID_UP_TO = 80


def wait_for(node_uuid: str, read: Callable[[], tuple[str | None, str]],
             wanted: str, timeout: float, interval: float,
             what: str) -> None:
    """Call ``read()`` until its state is ``wanted`` (``states.POWER_*``).

    ``read`` returns (state or None, what the BMC said); the latter goes
    into the error when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        state, said = read()
        if state == wanted:
            return
        if time.monotonic() >= deadline:
            raise exception.PowerStateFailure(
                'Node %s did not reach power state "%s" within %d seconds '
                'of %s (the BMC reports "%s")'
                % (node_uuid, wanted, timeout, what,
                   storable.bounded(str(said), SAID_UP_TO)))
        time.sleep(interval)

