"""[events] options: the change feed (GET /events)."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('retention_hours', default=72, min=0,
               help='Hours a node event is kept; older ones are purged '
                    'by the conductors (every purge_interval seconds). '
                    '0: no limit by age.'),
    cfg.IntOpt('max_events', default=1000000, min=0,
               help='Most node events kept: beyond it the oldest are '
                    'purged. 0: no limit by count.'),
    cfg.IntOpt('purge_interval', default=600, min=10,
               help='Seconds between two purges of old node events by a '
                    'conductor.'),
    cfg.IntOpt('max_streams', default=8, min=0,
               help='Event streams (GET /events as text/event-stream) '
                    'one API process serves at once; one more is refused '
                    'with 503. Each holds one of the API\'s threads '
                    '([api]api_workers) for as long as it is open, so at '
                    'most api_workers - 1 are served whatever this says.'),
    cfg.FloatOpt('poll_interval', default=0.5, min=0.05,
                 help='Seconds between two looks for new events by an API '
                      'process while it serves streams: one indexed query '
                      'per interval, shared by all of its streams.'),
    cfg.IntOpt('keepalive_interval', default=15, min=1,
               help='Seconds of silence after which a stream sends a '
                    'comment line, so that proxies and clients see it '
                    'alive.'),
    cfg.IntOpt('default_limit', default=100, min=1,
               help='Events in one JSON page of GET /events when no limit '
                    'is given (the largest is [api]max_limit).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='events')


def list_opts():
    return opts
