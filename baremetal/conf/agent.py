"""[agent] options: talking to the agent (ironic-python-agent) on a
node."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('command_timeout', default=60, min=1,
               help='Seconds one HTTP request to an agent may take. A '
                    'command that runs longer (erasing a disk, writing an '
                    'image) is not bounded by this: it is polled until '
                    'it ends or the node\'s callback timeout passes.'),
    cfg.IntOpt('max_command_attempts', default=3, min=1,
               help='Attempts for a request to an agent that could not be '
                    'connected to, before the step fails.'),
    cfg.FloatOpt('command_poll_max_interval', default=2.0, min=0.1,
                 help='Longest pause, in seconds, between two polls of a '
                      'running agent command. Polls start 0.1 s after '
                      'the command and back off to this; lower finds a '
                      'finished command sooner at the cost of requests '
                      'to the agent.'),
    cfg.BoolOpt('allow_md5_checksum', default=False,
                help='Let agents verify images by MD5 (weak; only for '
                     'images published with nothing better).'),
    cfg.StrOpt('certificates_path', default='$state_path/certificates',
               help='Directory where the CA an agent sends with its '
                    'heartbeat (agent_verify_ca) is kept, one file per '
                    'node, for verifying that agent\'s TLS certificate.'),
    cfg.StrOpt('verify_ca', default='True',
               help='Verify an agent\'s TLS certificate when it did not '
                    'send its own CA (agent_verify_ca): "True" (system '
                    'CAs), "False", or the path of a CA bundle.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group='agent')


def list_opts():
    return opts
