"""[api] options: where the REST API listens and how it serves."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('ramdisk_heartbeat_timeout', default=300, min=10,
               help='Seconds an agent is told it may go between '
                    'heartbeats (it heartbeats at 30-60 % of it). The '
                    'conductor polls running agent commands itself, so '
                    'this bounds only how soon a conductor that took a '
                    'node over hears from its agent.'),
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help='Address the API listens on. The default '
                            'keeps a noauth service on loopback.'),
    cfg.PortOpt('port', default=6385, help='Port the API listens on.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Largest page a collection returns; a larger limit '
                    'is capped to it.'),
    cfg.BoolOpt('list_read_ahead', default=True,
                help='On PostgreSQL, while a client reads a page of a '
                     'node list it asked for with a marker (it is '
                     'walking the list, as Nova does), read the next '
                     'page from the database, and answer its request '
                     'with it if no transaction has committed since (on '
                     'the whole server: commits of other services '
                     'sharing it count too). Costs a statement of the '
                     'next page when the client stops early or the '
                     'page went stale; no effect on other databases.'),
    cfg.IntOpt('api_workers', min=1,
               sample_default='16 (baremetal-server), 64 (baremetal-api)',
               help='Most threads serving HTTP requests. Unset: 16 in '
                    'baremetal-server and 64 in baremetal-api. The pool '
                    'is elastic: it starts with one thread, and a thread '
                    'is added only when requests wait while none has '
                    'finished for 25 ms (a request is blocked, e.g. on a '
                    'BMC); in baremetal-api, whose requests also wait on '
                    'conductors, as many as wait are added at once when '
                    'every thread waits on a conductor. Threads no request '
                    'needed for 2 s are retired, and all but one once 2 s '
                    'pass without a stall (in baremetal-api: and without a '
                    'request waiting on a conductor). '
                    '(Measured: one thread serves about twice the requests '
                    'per second of sixteen busy ones, which contend for '
                    'the interpreter lock.)'),
    cfg.IntOpt('max_waiting_per_conductor', min=1,
               sample_default='half of [api]api_workers (32)',
               help='baremetal-api: most requests that may wait on one '
                    'conductor\'s answer at once; one more is answered '
                    '503 at once, saying so. A conductor that died (or '
                    'hangs) answers nothing until the others find it dead '
                    '([conductor]heartbeat_timeout) and each request sent '
                    'to it waits [DEFAULT]rpc_response_timeout_api '
                    'seconds: without a bound, the agents\' heartbeats and '
                    'the clients\' requests for its nodes would take every '
                    'thread, and the API would stop answering for every '
                    'node. Unset: half of [api]api_workers.'),
    cfg.IntOpt('conductor_silent_after', min=1,
               sample_default='3 x [conductor]heartbeat_interval (30)',
               help='baremetal-api: a conductor whose last heartbeat is '
                    'older than this many seconds is routed around: its '
                    'nodes\' requests (the agents\' lookups and '
                    'heartbeats among them) go to the conductor the hash '
                    'ring would give them without it, instead of waiting '
                    '[DEFAULT]rpc_response_timeout_api on a conductor that '
                    'died, until the others find it dead ([conductor]'
                    'heartbeat_timeout) and take its nodes over. A node '
                    'it had locked answers 409 meanwhile. Never all of a '
                    'ring\'s conductors: when every one is silent, each '
                    'keeps its nodes. Unset: three heartbeat intervals, '
                    'at most [conductor]heartbeat_timeout.'),
    cfg.IntOpt('connection_limit', default=1024, min=1,
               help='Accepted connections waiting for a thread, and idle '
                    'keep-alive connections kept open, at most.'),
    cfg.IntOpt('max_request_body_size', default=1048576 * 16, min=1024,
               help='Bytes a request body may have; larger is 413.'),
    cfg.IntOpt('max_json_body_depth', default=25, min=1,
               help='How deeply JSON from outside may nest: request '
                    'bodies (and JSON-patch values in them), agent '
                    'lookups and heartbeats (400 beyond it), and agent '
                    'command results (the step fails). A top-level object '
                    'or array is one level.'),
    cfg.StrOpt('public_endpoint',
               help='Base URL put into links, if it differs from the '
                    'URL clients reach (e.g. behind a proxy).'),
    cfg.BoolOpt('enable_proxy_headers_parsing', default=False,
                help='Honour X-Forwarded-* headers from a proxy.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='api')


def list_opts():
    return opts
