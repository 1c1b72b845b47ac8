"""[deploy] options: priorities of the built-in disk clean steps."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('erase_devices_priority',
               help='Priority of the erase_devices clean step; unset '
                    'keeps the driver default, 0 disables it for '
                    'automated cleaning.'),
    cfg.IntOpt('erase_devices_metadata_priority',
               help='Priority of the erase_devices_metadata clean step; '
                    'unset keeps the driver default, 0 disables it for '
                    'automated cleaning.'),
    cfg.BoolOpt('fast_track', default=False,
                help='Reserved for agent-based deploys; no effect yet.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='deploy')


def list_opts():
    return opts
