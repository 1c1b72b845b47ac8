"""tools/fleet_doubles.py (the fleet benchmark's Redfish, IPMI and agent
doubles, kept beside the benchmark, outside the package) for tests."""

import functools
import importlib.util
import os

_PATH = os.path.join(os.path.dirname(__file__), '..', 'tools',
                     'fleet_doubles.py')


@functools.cache
def doubles():
    """The fleet_doubles module, loaded once."""
    spec = importlib.util.spec_from_file_location('fleet_doubles', _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
