"""[ipmi] options of the ipmi hardware type (pyghmi)."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('command_retry_timeout', default=60, min=1,
               help='Maximum time in seconds to retry a failing IPMI '
                    'command (timeouts, a busy BMC) before giving up. '
                    'A command to a BMC that does not answer at all '
                    'gives up after this long too: no worker waits '
                    'longer.'),
    cfg.FloatOpt('min_command_interval', default=1.0, min=0,
                 help='Minimum time in seconds between two IPMI commands '
                      'to the same BMC. Commands to one BMC never run '
                      'at the same time, whatever this is set to. '
                      'Ironic\'s default of 5 was set for ipmitool '
                      'processes; pyghmi keeps its session open.'),
    cfg.StrOpt('kg_key', secret=True,
               help='Default BMC key (Kg) for nodes whose driver_info '
                    'has no ipmi_kg_key (rarely used).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='ipmi')


def list_opts():
    return opts
