"""ironic-tempest-plugin's API tests against a real baremetal-server.

``../shared/tempest/run_tempest.sh`` (beside the repository, as in CI)
runs ironic-tempest-plugin 3.2.0's API tests against the server and
compares each outcome with real Ironic 39.0.0's: a ``REGRESSION`` line
names a test that passes on Ironic 39 and fails here. Any fails this
test, listing them all. The clients' virtualenv is installed once per
machine under ``~/.cache/baremetal-tempest`` (``BAREMETAL_TEMPEST_HOME``
elsewhere); the results of a run stay in the test's tmp directory.
"""

import json
import os
import re
import subprocess
import time

import pytest

from tests.functional import processes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(os.path.dirname(ROOT), 'shared', 'tempest',
                      'run_tempest.sh')

# what run_tempest.sh asks of the service under test
_DEFAULT = {
    'auth_strategy': 'noauth',
    'enabled_hardware_types': ['fake-hardware'],
    'enabled_power_interfaces': ['fake'],
    'enabled_management_interfaces': ['fake', 'noop'],
    'enabled_boot_interfaces': ['fake'],
    'enabled_deploy_interfaces': ['fake'],
    'enabled_bios_interfaces': ['fake', 'no-bios'],
    'enabled_console_interfaces': ['fake', 'no-console'],
    'enabled_inspect_interfaces': ['fake', 'no-inspect'],
    'enabled_raid_interfaces': ['fake', 'no-raid'],
    'enabled_rescue_interfaces': ['fake', 'no-rescue'],
    'enabled_storage_interfaces': ['noop', 'fake'],
    'enabled_vendor_interfaces': ['fake', 'no-vendor'],
    'enabled_firmware_interfaces': ['fake', 'no-firmware'],
    'enabled_network_interfaces': ['noop', 'flat'],
    'default_network_interface': 'noop',
}


def _regressions(compare: str) -> list[str]:
    """Each REGRESSION line of compare.txt with the detail lines under
    it (``|``-prefixed)."""
    out: list[str] = []
    for line in compare.splitlines():
        if line.startswith('REGRESSION'):
            out.append(line)
        elif out and line.lstrip().startswith('|') and \
                out[-1].startswith('REGRESSION'):
            out[-1] += '\n' + line
    return out


def _run_alone(svc, env, tmp_path, bad: list[str]):
    """Run the regressed tests again, one at a time: (the regressions
    left, the run's report)."""
    ids = [line.split()[-1].split('[')[0] for line in
           (b.splitlines()[0] for b in bad)]
    results = tmp_path / 'alone'
    env = dict(env, RESULTS_DIR=str(results), CONCURRENCY='1')
    run = subprocess.run(
        ['bash', SCRIPT, svc.endpoint,
         '|'.join(re.escape(i) + r'\b' for i in ids)],
        capture_output=True, text=True, env=env, timeout=600)
    report = 'run on their own: exited %s\n%s\n%s' % (
        run.returncode, run.stdout[-3000:], run.stderr[-3000:])
    got = results / 'results.json'
    if not got.exists():
        return bad, report
    tests = json.loads(got.read_text())['tests']
    # each must have run, on its own, and passed
    return [b for b, i in zip(bad, ids, strict=True)
            if not any(t.split('[')[0] == i and v['status'] == 'passed'
                       for t, v in tests.items())], report


def test_ironic_tempest_api_tests_pass_as_on_ironic_39(tmp_path):
    if not os.path.exists(SCRIPT):
        pytest.skip('%s is absent: the shared/ folder lies beside the '
                    'repository in CI only' % SCRIPT)
    conf = processes.base_conf(tmp_path)
    conf['DEFAULT'] = dict(_DEFAULT, state_path=str(tmp_path),
                           debug='false')
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start()
    results = tmp_path / 'results'
    env = dict(os.environ, RESULTS_DIR=str(results))
    env['TEMPEST_HOME'] = os.environ.get(
        'BAREMETAL_TEMPEST_HOME',
        os.path.expanduser('~/.cache/baremetal-tempest'))
    started = time.monotonic()
    again = None
    try:
        run = subprocess.run(['bash', SCRIPT, svc.endpoint],
                             capture_output=True, text=True, env=env,
                             timeout=1800)
        report = 'run_tempest.sh exited %s\n%s\n%s' % (
            run.returncode, run.stdout[-3000:], run.stderr[-3000:])
        compare = results / 'compare.txt'
        assert compare.exists(), report
        bad = _regressions(compare.read_text())
        if bad:
            # the suite runs two tests at once and some of its classes
            # share names between their tests (test_shards' two tests
            # both list the shard 'oneshardtest' and each sees the
            # other's nodes when they run together): a regression
            # counts only if it also fails run on its own
            again = _run_alone(svc, env, tmp_path, bad)
    finally:
        rc = svc.stop()
    took = time.monotonic() - started
    report = 'run_tempest.sh exited %s after %.0f s\n%s\n%s' % (
        run.returncode, took, run.stdout[-3000:], run.stderr[-3000:])
    if bad:
        still, again_report = again
        assert not still, (
            '%d tests pass on Ironic 39 and fail here, also run on their '
            'own:\n%s\n%s\n%s' % (len(still), '\n'.join(still),
                                  again_report, report))
        print('tempest: %d failed only beside another test, passed on '
              'their own:\n%s' % (len(bad), '\n'.join(bad)))
    assert run.returncode == 0, report
    assert rc == 0, svc.log()
    print('tempest: %s (%.0f s)' % (run.stdout.strip().splitlines()[-1],
                                    took))
