"""Waiting for a BMC to report the power state it was asked for."""

import time
from collections.abc import Callable

from baremetal.common import exception


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
                % (node_uuid, wanted, timeout, what, said))
        time.sleep(interval)
