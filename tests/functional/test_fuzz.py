"""Every operation of the API description, fuzzed by schemathesis
against a real baremetal-server: generated valid and invalid path
parameters and bodies at the newest microversion.  No answer may be a
5xx or a dropped connection; every answer must conform to the document
(status codes, content type, the error envelope's schema).

The document itself is generated from the route table
(``python -m baremetal.api.reference``) and a unit test fails when it is
stale, so no route can be missing from it
(tests/unit/api/test_reference.py).
"""

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from baremetal.api import versions

DOC = os.path.join(os.path.dirname(__file__), '..', '..', 'doc', 'source',
                   'api', 'openapi.json')
# per operation; the whole run stays within a couple of minutes on two
# cores
EXAMPLES = int(os.environ.get('BAREMETAL_FUZZ_EXAMPLES', '25'))


def _post(server, path, body):
    req = urllib.request.Request(
        server.endpoint + path, data=json.dumps(body).encode(),
        method='POST', headers={'Content-Type': 'application/json',
                                'X-OpenStack-Ironic-API-Version': '1.95'})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read())


def test_every_operation_survives_generated_input(server, tmp_path):
    pytest.importorskip('schemathesis',
                        reason='test-requirements: schemathesis')
    # the document's example node: operations on it reach past the 404
    status, body = _post(server, '/v1/nodes', {
        'driver': 'fake-hardware', 'name': 'example-node'})
    assert status == 201, body
    st = os.path.join(os.path.dirname(sys.executable), 'schemathesis')
    junit = tmp_path / 'fuzz.xml'
    out = subprocess.run(
        [st, 'run', os.path.abspath(DOC), '--url', server.endpoint,
         '-H', 'X-OpenStack-Ironic-API-Version: %s' % versions.MAX_STRING,
         '--checks', 'not_a_server_error,status_code_conformance,'
                     'content_type_conformance,'
                     'response_schema_conformance',
         '--max-examples', str(EXAMPLES),
         '--phases', 'examples,coverage,fuzzing',
         '--generation-deterministic',
         '--request-timeout', '20', '--workers', '2',
         '--suppress-health-check', 'all',
         '--report', 'junit', '--report-junit-path', str(junit)],
        capture_output=True, text=True, timeout=900, cwd=str(tmp_path),
        env=dict(os.environ, SCHEMATHESIS_HOOKS=''))
    tail = out.stdout[-8000:] + out.stderr[-3000:]
    print(out.stdout[-1500:])
    assert out.returncode == 0, tail
    assert junit.exists(), tail
    report = junit.read_text()
    # every operation ran (none skipped for lack of a schema)
    assert report.count('<testcase') >= 100, tail
