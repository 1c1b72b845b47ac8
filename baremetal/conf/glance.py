"""[glance] options: how the conductor reaches the Image service (a
keystoneauth1 session, auth plugin and adapter, with the option names
Ironic uses).  [service_user] (service_user.py) adds a service token.

With ``auth_type = none`` and ``endpoint_override`` the conductor talks
to a Glance that needs no token (a test bed); otherwise the [glance]
credentials (``auth_type = password``, ``auth_url``, ``username``, ...)
get a token from Keystone and the endpoint comes from its catalog
(``service_type = image``, ``valid_interfaces``, ``region_name``).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'glance'

opts = [
    cfg.IntOpt('num_retries', default=0, min=0,
               help='Times a Glance request is tried again after a '
                    'connection error or a 503 before the image counts '
                    'as unreachable. Each retry waits a second.'),
]

# the auth plugin whose options the sample configuration shows
_SAMPLE_PLUGIN = 'password'


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    ks_loading.register_adapter_conf_options(conf, GROUP,
                                             include_deprecated=False)
    conf.set_default('service_type', 'image', group=GROUP)
    conf.set_default('valid_interfaces', ['internal', 'public'],
                     group=GROUP)


def auth_opts() -> list:
    """The auth options the sample shows (those of ``password``)."""
    return (ks_loading.get_auth_common_conf_options() +
            ks_loading.get_auth_plugin_conf_options(_SAMPLE_PLUGIN))


def list_opts():
    adapter = ks_loading.get_adapter_conf_options(include_deprecated=False)
    for opt in adapter:
        if opt.dest == 'service_type':
            opt.default = 'image'
        elif opt.dest == 'valid_interfaces':
            opt.default = ['internal', 'public']
    return (opts + ks_loading.get_session_conf_options() + auth_opts() +
            adapter)

