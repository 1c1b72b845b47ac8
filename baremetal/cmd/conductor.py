"""baremetal-conductor: drives nodes; serves RPC over oslo.messaging."""

import oslo_messaging as messaging
from oslo_log import log

from baremetal.cmd import common
from baremetal.common import rpc

LOG = log.getLogger(__name__)


@common.entrypoint
def main(argv: list[str] | None = None) -> None:
    common.parse_args(argv, 'baremetal-conductor')
    conf = common.CONF
    common.setup_database(auto_upgrade=False)
    conductor = common.load_conductor(conf)
    listener = common.start_metrics_listener()
    conductor.manager.target = messaging.Target(version='1.0')
    server = rpc.server(conf, conductor.host, conductor.manager)
    conductor.start()
    server.start()
    LOG.info('Conductor %s serving RPC', conductor.host)
    common.settle_gc()
    stopper = common.Stopper(on_reload=conductor.reload)
    stopper.wait()
    server.stop()
    conductor.stop()
    server.wait()
    if listener is not None:
        listener.shutdown()
    LOG.info('baremetal-conductor %s stopped', conductor.host)


if __name__ == '__main__':
    main()
