"""``list_opts`` for oslo-config-generator (entry point ``baremetal``)."""

from baremetal.conf import agent
from baremetal.conf import api
from baremetal.conf import conductor
from baremetal.conf import database
from baremetal.conf import default
from baremetal.conf import deploy
from baremetal.conf import glance
from baremetal.conf import events
from baremetal.conf import inspection_rules
from baremetal.conf import ipmi
from baremetal.conf import metrics
from baremetal.conf import pxe
from baremetal.conf import redfish
from baremetal.conf import sensor_data
from baremetal.conf import service_user

GROUP_MODULES = {
    'DEFAULT': default,
    'agent': agent,
    'api': api,
    'conductor': conductor,
    'database': database,
    'deploy': deploy,
    'glance': glance,
    'events': events,
    'inspection_rules': inspection_rules,
    'ipmi': ipmi,
    'metrics': metrics,
    'pxe': pxe,
    'redfish': redfish,
    'sensor_data': sensor_data,
    'service_user': service_user,
}


def update_opt_defaults():
    """Our defaults for library options (oslo-config-generator shows
    them in the sample)."""
    from oslo_config import cfg
    from oslo_db import options as db_options
    cfg.set_defaults(db_options.database_opts,
                     max_pool_size=database.MAX_POOL_SIZE)


def list_opts():
    """Every option group of baremetal with its options."""
    return [(group, mod.list_opts()) for group, mod in
            GROUP_MODULES.items()]
