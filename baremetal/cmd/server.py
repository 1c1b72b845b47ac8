"""baremetal-server: API and conductor in one process (embedded mode).

With no config file it listens on 127.0.0.1:6385, keeps its SQLite
database under [DEFAULT]state_path, uses noauth and calls the conductor
directly (rpc_transport = none).
"""

import threading

from oslo_log import log

from baremetal.api import app as api_app
from baremetal.cmd import common
from baremetal.cmd import wsgi
from baremetal.conductor import rpcapi

LOG = log.getLogger(__name__)


def main(argv: list[str] | None = None) -> None:
    common.parse_args(argv, 'baremetal-server')
    conf = common.CONF
    common.setup_database(auto_upgrade=True)
    conductor = common.load_conductor(conf)
    conductor.start()
    app = api_app.setup_app(conf, rpcapi.ConductorAPI(conf,
                                                      local=conductor))
    server = wsgi.make_server(app, conf)
    stopper = common.Stopper(on_reload=conductor.reload)
    thread = threading.Thread(target=server.run, name='wsgi', daemon=True)
    thread.start()
    stopper.event.wait()
    server.close()
    conductor.stop()
    LOG.info('baremetal-server stopped')


if __name__ == '__main__':
    main()
