"""[service_user] options: credentials of a service token the conductor
sends along with its own token to OpenStack services (Glance), when
``send_service_user_token`` is on; the option names Nova and Ironic
use."""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from baremetal.conf import glance

GROUP = 'service_user'

opts = [
    cfg.BoolOpt('send_service_user_token', default=False,
                help='Send a service token (from these credentials) '
                     'with every Glance request besides the [glance] '
                     'one (header X-Service-Token), for services whose '
                     'policies ask for a service role.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)


def list_opts():
    return (opts + ks_loading.get_session_conf_options() +
            glance.auth_opts())
