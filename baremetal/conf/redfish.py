"""[redfish] options of the redfish hardware type (sushy)."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('kernel_append_params', default='nofb vga=normal',
               help='Kernel parameters added to the agent ramdisk booted '
                    'over virtual media (driver_info '
                    'kernel_append_params overrides them per node).'),
    cfg.IntOpt('connection_attempts', default=5, min=1,
               help='How many times a Redfish request is tried when the '
                    'BMC cannot be reached (in all, connecting included); '
                    'a read the BMC answers with a server error (5xx), '
                    'and any request it answers 503 (it did not take '
                    'it), is tried as many times.'),
    cfg.IntOpt('connection_retry_interval', default=2, min=0,
               help='Seconds between two such attempts.'),
    cfg.IntOpt('connection_timeout', default=60, min=1,
               help='Seconds to wait for one Redfish request to be '
                    'answered.'),
    cfg.IntOpt('connection_cache_size', default=1000, min=0,
               help='Maximum number of Redfish sessions kept open and '
                    'reused (one per BMC address and credentials); '
                    '0 disables reuse.'),
    cfg.StrOpt('auth_type', default='auto',
               choices=[('basic', 'HTTP basic authentication'),
                        ('session', 'Redfish session authentication'),
                        ('auto', 'session, falling back to basic')],
               help='Default Redfish authentication for nodes whose '
                    'driver_info has no redfish_auth_type.'),
    cfg.IntOpt('power_poll_interval', default=1, min=0,
               help='Seconds between two reads of the power state while '
                    'waiting for a power change to happen.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='redfish')


def list_opts():
    return opts
