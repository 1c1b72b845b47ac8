"""[metrics] options: where a standalone conductor serves its metrics.

baremetal-api and baremetal-server serve GET /metrics on the API's own
address; baremetal-conductor has no HTTP server of its own, so it opens
a small one when ``conductor_listen_port`` is set.
"""

from oslo_config import cfg

opts = [
    cfg.PortOpt('conductor_listen_port', default=0,
                help='TCP port on which baremetal-conductor serves its '
                     'Prometheus metrics (GET /metrics, without '
                     'authentication); 0 serves none. Each conductor on '
                     'a host needs its own port. Not used by '
                     'baremetal-server, which serves them on the API '
                     'port.'),
    cfg.HostAddressOpt('conductor_listen_host', default='127.0.0.1',
                       help='Address the conductor\'s metrics listener '
                            'binds to. The listener asks for no '
                            'credentials: keep it on the loopback '
                            'address or a network only the monitoring '
                            'system reaches.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='metrics')


def list_opts():
    return opts
