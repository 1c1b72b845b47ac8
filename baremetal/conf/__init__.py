"""Configuration: one module per group, registered on the global CONF."""

from oslo_config import cfg

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

CONF = cfg.CONF
_MODULES = (default, agent, api, conductor, database, deploy, events,
            glance, inspection_rules, ipmi, metrics, pxe, redfish,
            sensor_data, service_user)


def register_all(conf: cfg.ConfigOpts) -> None:
    """Every option of baremetal, on ``conf``."""
    for mod in _MODULES:
        mod.register_opts(conf)


register_all(CONF)
