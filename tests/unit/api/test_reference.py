"""The committed API reference and OpenAPI file match the route table."""

import json
import os

from baremetal.api import reference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
HINT = 'stale: run "python -m baremetal.api.reference" and commit the result'


def test_endpoints_rst_is_current():
    with open(os.path.join(ROOT, 'doc/source/api/endpoints.rst')) as f:
        assert f.read() == reference.endpoints_rst(), HINT


def test_openapi_is_current_and_lists_every_route():
    with open(os.path.join(ROOT, 'doc/source/api/openapi.json')) as f:
        committed = json.load(f)
    assert committed == json.loads(json.dumps(reference.openapi())), HINT
    ops = committed['paths']['/v1/nodes/{node}/states/provision']
    assert ops['put']['x-min-microversion'] == '1.1'
    assert committed['paths']['/v1/nodes/{node}/vifs']['get'][
        'x-min-microversion'] == '1.28'
