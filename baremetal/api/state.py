"""Process-wide handles the controllers use: config and conductor API.

Set once by ``app.setup_app``.
"""

from typing import Any

CONF: Any = None
RPC: Any = None


def lock_wait() -> float:
    """Seconds an API update waits for a node another task holds."""
    from baremetal.common import node_locks
    return node_locks.budget(CONF)
