"""baremetal-api: the REST API of a scale-out deployment (oslo.messaging
to baremetal-conductor processes)."""

import threading

from oslo_log import log

from baremetal.api import app as api_app
from baremetal.cmd import common
from baremetal.cmd import wsgi
from baremetal.conductor import rpcapi

LOG = log.getLogger(__name__)
# the most threads serving requests, unless [api]api_workers says
THREADS = 64


@common.entrypoint
def main(argv: list[str] | None = None) -> None:
    common.parse_args(argv, 'baremetal-api')
    conf = common.CONF
    common.setup_database(auto_upgrade=False)
    rpc = rpcapi.ConductorAPI(conf, threads=THREADS)
    app = api_app.setup_app(conf, rpc)
    server = wsgi.make_server(app, conf, default_threads=THREADS,
                             min_threads=1, waiting=rpc.waiting)
    common.settle_gc()
    stopper = common.Stopper(on_reload=rpc.rings.reset)
    thread = threading.Thread(target=server.run, name='wsgi', daemon=True)
    thread.start()
    stopper.wait()
    server.close()
    LOG.info('baremetal-api stopped')


if __name__ == '__main__':
    main()
