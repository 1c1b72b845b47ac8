"""doc/source/api/differences.rst says how many requests tools/api-diff
sends: the numbers are the script's."""

import importlib.machinery
import importlib.util
import os

TOOL = os.path.join(os.path.dirname(__file__), '..', '..', 'tools',
                    'api-diff')


def _tool():
    loader = importlib.machinery.SourceFileLoader('api_diff', TOOL)
    spec = importlib.util.spec_from_loader('api_diff', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_page_gives_the_scripts_numbers():
    tool = _tool()
    requests, invalid = tool.counts()
    assert requests > invalid > 100
    assert tool.documented_counts() == ({requests}, {invalid})
