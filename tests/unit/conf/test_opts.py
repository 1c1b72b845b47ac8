"""list_opts covers every registered option group."""

from baremetal import conf
from baremetal.conf import opts


def test_list_opts_covers_every_group_and_option():
    listed = {group: {o.dest for o in options}
              for group, options in opts.list_opts()}
    for group in opts.GROUP_MODULES:
        assert group in listed
    for group_name, mod in opts.GROUP_MODULES.items():
        if group_name in ('DEFAULT', 'database') or not mod.list_opts():
            continue
        group = conf.CONF[group_name]
        registered = {name for name in group}
        assert registered <= listed[group_name], group_name
    defaults = {o.dest for o in conf.default.list_opts()}
    assert {'enabled_hardware_types', 'auth_strategy', 'rpc_transport',
            'host', 'enabled_power_interfaces',
            'default_deploy_interface'} <= defaults
