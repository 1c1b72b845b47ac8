"""Process-wide handles the controllers use: config and conductor API.

Set once by ``app.setup_app``.
"""

from typing import Any

CONF: Any = None
RPC: Any = None

