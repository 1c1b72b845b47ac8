"""[pxe] options: network boot of the agent ramdisk through iPXE."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('kernel_append_params', default='nofb vga=normal',
               help='Kernel parameters added to the agent ramdisk booted '
                    'over iPXE (driver_info kernel_append_params '
                    'overrides them per node).'),
    cfg.IntOpt('ipxe_timeout', default=0, min=0,
               help='Seconds iPXE waits for a download before giving up '
                    '(0: iPXE\'s own default).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='pxe')


def list_opts():
    return opts
