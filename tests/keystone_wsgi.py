"""Serve Keystone's WSGI application with cheroot on 127.0.0.1:PORT.

Run with the Keystone venv's Python (tests/keystone_service.py does):
``python keystone_wsgi.py PORT``; the config files come from
``OS_KEYSTONE_CONFIG_FILES``.  Keystone parses ``sys.argv`` as its own
command line when the application loads, so the port is taken out of
it first.  SIGTERM stops the server.
"""

import signal
import sys

from cheroot import wsgi

port = int(sys.argv[1])
sys.argv = sys.argv[:1]
from keystone.wsgi import api  # noqa: E402

server = wsgi.Server(('127.0.0.1', port), api.application, numthreads=4)


def _stop(signum, frame):
    # not server.stop() here: the handler runs on the thread that serves,
    # which stop() waits for (a stop took SIGTERM's 20 s, then SIGKILL)
    raise SystemExit(0)         # safe_start stops the server on it


signal.signal(signal.SIGTERM, _stop)
server.safe_start()
