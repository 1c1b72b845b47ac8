"""API v1 controllers; importing a module registers its routes."""

import importlib

MODULES = ('nodes', 'node_states', 'node_actions', 'ports', 'drivers',
           'conductors', 'chassis', 'agent', 'indicators', 'node_history',
           'node_inventory', 'shards', 'node_firmware', 'node_vmedia',
           'runbooks', 'runbook_traits', 'inspection_rules')
OPTIONAL = ('portgroups', 'volume', 'allocations', 'deploy_templates',
            'events')

_loaded = False


def load_all() -> None:
    global _loaded
    if _loaded:
        return
    for name in MODULES:
        importlib.import_module('baremetal.api.controllers.v1.' + name)
    for name in OPTIONAL:
        try:
            importlib.import_module('baremetal.api.controllers.v1.' + name)
        except ModuleNotFoundError as e:
            if e.name != 'baremetal.api.controllers.v1.' + name:
                raise
    _loaded = True
