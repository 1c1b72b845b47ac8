"""openstacksdk's own functional baremetal tests against baremetal-server.

They ship inside the openstacksdk package
(``openstack.tests.functional.baremetal``). They run in a child pytest
with a clouds.yaml whose clouds use ``auth_type: none`` and this server's
endpoint. Every test must pass, or be skipped only because it needs a
microversion above the one we advertise: any other skip or failure fails
this test, with the child's report.
"""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from baremetal.api import versions

SUITE = 'openstack.tests.functional.baremetal'
_VERSION_SKIP = re.compile(
    r'does not provide microversion 1\.(\d+)')


def _clouds_yaml(path, endpoint):
    with open(path, 'w') as f:
        f.write('''clouds:
  devstack: &cloud
    auth_type: none
    auth:
      endpoint: %(e)s
    baremetal_endpoint_override: %(e)s
    has_compute: false
    has_image: false
    has_network: false
    baremetal_status_code_retries: 2
  devstack-alt: *cloud
  devstack-admin: *cloud
  devstack-system-admin: *cloud
''' % {'e': endpoint})


def test_openstacksdk_functional_baremetal_suite(server, tmp_path):
    pytest.importorskip('fixtures', reason='test-requirements: fixtures')
    pytest.importorskip('oslotest', reason='test-requirements: oslotest')
    clouds = tmp_path / 'clouds.yaml'
    _clouds_yaml(clouds, server.endpoint)
    report = tmp_path / 'report.xml'
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds),
               OS_TEST_TIMEOUT='120', PYTHONWARNINGS='ignore')
    env.pop('OS_CLOUD', None)
    out = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
         '-p', 'no:logging', '-p', 'no:xdist', '--pyargs', SUITE,
         '--junitxml', str(report)],
        capture_output=True, text=True, env=env, timeout=600,
        cwd=str(tmp_path))
    assert report.exists(), out.stdout[-3000:] + out.stderr[-3000:]
    passed, bad, skips = 0, [], []
    for case in ET.parse(report).iter('testcase'):  # noqa: S314 (ours)
        name = '%s.%s' % (case.get('classname'), case.get('name'))
        if case.find('failure') is not None or \
                case.find('error') is not None:
            bad.append(name)
        elif case.find('skipped') is not None:
            skips.append((name, case.find('skipped').get('message', '')))
        else:
            passed += 1
    assert not bad, 'failed: %s\n%s' % (bad, out.stdout[-6000:])
    wrong_skips = []
    for name, msg in skips:
        m = _VERSION_SKIP.search(msg)
        if not m or int(m.group(1)) <= versions.MAX:
            wrong_skips.append((name, msg))
    assert not wrong_skips, wrong_skips
    # every test not needing a newer microversion passed (all 96 of
    # openstacksdk 4.22, whose newest need 1.96, 1.104 and 1.112)
    assert passed >= 96, out.stdout[-3000:]
    print('openstacksdk suite: %d passed, %d skipped for microversions '
          'above 1.%d: %s' % (passed, len(skips), versions.MAX,
                              sorted({m for _, m in skips})))
