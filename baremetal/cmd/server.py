"""baremetal-server: API and conductor in one process (embedded mode).

With no config file it listens on 127.0.0.1:6385, keeps its SQLite
database under [DEFAULT]state_path, uses noauth and calls the conductor
directly (rpc_transport = none).
"""

import sys
import threading

# The embedded server uses OS threads only.  eventlet is installed (as a
# dependency of oslo.service, for oslo.messaging) and futurist imports it
# whenever it can, which costs ~20 MiB of RSS and 0.1 s of start-up (with
# dnspython and cryptography behind it).  Nothing in this process uses
# green threads or oslo.messaging, so keep it out; baremetal-api and
# baremetal-conductor are not affected.
if 'eventlet' not in sys.modules:
    sys.modules['eventlet'] = None  # type: ignore[assignment]

from oslo_log import log  # noqa: E402

from baremetal.api import app as api_app  # noqa: E402
from baremetal.cmd import common  # noqa: E402
from baremetal.cmd import wsgi  # noqa: E402
from baremetal.common import exception  # noqa: E402
from baremetal.conductor import rpcapi  # noqa: E402

LOG = log.getLogger(__name__)


@common.entrypoint
def main(argv: list[str] | None = None) -> None:
    common.parse_args(argv, 'baremetal-server')
    conf = common.CONF
    common.setup_database(auto_upgrade=True)
    conductor = common.load_conductor(conf)
    conductor.start()
    try:
        app = api_app.setup_app(conf, rpcapi.ConductorAPI(conf,
                                                          local=conductor))
        server = wsgi.make_server(app, conf, default_threads=16,
                                 min_threads=1)
    except (common.CannotStart, exception.ConfigInvalid):
        conductor.stop()    # registered by now: offline again
        raise
    common.settle_gc()
    stopper = common.Stopper(on_reload=conductor.reload)
    thread = threading.Thread(target=server.run, name='wsgi', daemon=True)
    thread.start()
    stopper.wait()
    server.close()
    conductor.stop()
    LOG.info('baremetal-server stopped')


if __name__ == '__main__':
    main()
