"""tools/hot_path.py (bench.py --hot-path) against a real embedded
server, briefly: every request answered 200, the detail list holds the
nodes it enrolled, the server's CPU is read, and the nodes are gone
again at the end. Figures are printed, never asserted."""

import importlib.util
import json
import os
import sys
import urllib.request

_TOOLS = os.path.join(os.path.dirname(__file__), '..', '..', 'tools')
# as when it runs from tools/: its proc_stats beside it
sys.path.insert(0, _TOOLS)
_SPEC = importlib.util.spec_from_file_location(
    'hot_path', os.path.join(_TOOLS, 'hot_path.py'))
hot_path = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hot_path)


def _nodes(endpoint):
    req = urllib.request.Request(endpoint + '/v1/nodes', headers={
        'X-OpenStack-Ironic-API-Version': '1.115'})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())['nodes']


def test_hot_path_probe(server):
    before = len(_nodes(server.endpoint))
    result = hot_path.run(server.endpoint, server.proc.pid, nodes=7,
                          gets=50, details=5)
    print('hot path:', result)
    assert result['listed'] == before + 7
    assert result['get_node']['requests'] == 50
    assert result['detail']['requests'] == 5
    for part in ('get_node', 'detail'):
        assert result[part]['not_ok'] == 0
        assert result[part]['p50_ms'] > 0
        # the server's CPU is read (ticks of 10 ms: 0 is possible for
        # a short part on a fast machine)
        assert result[part]['server_cpu_ms'] >= 0
    assert len(_nodes(server.endpoint)) == before
