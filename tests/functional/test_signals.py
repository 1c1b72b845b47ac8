"""SIGTERM stops gracefully (work finished or handed back, locks
released); SIGHUP reloads mutable configuration (not files holding a
value that is not valid); SIGUSR2 writes every
thread's stack to standard error."""

import json
import re
import signal
import sqlite3
import time
import urllib.request

from tests.functional import processes


def _call(svc, method, path, body=None):
    req = urllib.request.Request(
        svc.endpoint + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={'X-OpenStack-Ironic-API-Version': '1.61',
                 'Content-Type': 'application/json'})
    with urllib.request.urlopen(req) as r:
        data = r.read()
        return json.loads(data) if data else None


def test_sigterm_finishes_running_work_and_releases_locks(tmp_path):
    conf = processes.base_conf(tmp_path)
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    uuids = []
    for _ in range(5):
        n = _call(svc, 'POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'driver_info': {
                'fake_step_seconds': 1}})
        uuids.append(n['uuid'])
        _call(svc, 'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
              {'target': 'manage'})
    time.sleep(0.5)
    for u in uuids:
        _call(svc, 'PUT', '/v1/nodes/%s/states/provision' % u,
              {'target': 'provide'})
    time.sleep(0.3)
    assert svc.stop(signal.SIGTERM, timeout=60) == 0, svc.log()
    db = sqlite3.connect(tmp_path / 'baremetal.sqlite')
    rows = db.execute('SELECT provision_state, reservation FROM nodes'
                      ).fetchall()
    assert rows and all(r == ('available', None) for r in rows), rows
    online = db.execute('SELECT online FROM conductors').fetchall()
    assert online == [(0,)]


def test_sighup_reloads_mutable_options(tmp_path):
    conf = processes.base_conf(tmp_path)
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    try:
        with open(svc.conf_file) as f:
            text = f.read()
        with open(svc.conf_file, 'w') as f:
            f.write(text.replace('debug = false', 'debug = true'))
        svc.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while 'reloaded its configuration' not in svc.log():
            assert time.monotonic() < deadline, svc.log()
            time.sleep(0.1)
        # still serving, now with debug logging
        _call(svc, 'GET', '/v1/nodes')
        assert svc.proc.poll() is None
    finally:
        assert svc.stop() == 0


def test_sighup_with_an_invalid_value_keeps_the_running_configuration(
        tmp_path):
    """A reload whose files hold a value that is not valid is refused,
    saying which; the running configuration is kept (oslo.config would
    take a mutable option's invalid value, and every later read of it
    would raise), and a later valid reload applies."""
    conf = processes.base_conf(
        tmp_path, conductor={'max_conductor_wait_step_seconds': 40})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    option = 'max_conductor_wait_step_seconds'

    def reload_with(value: str, expect: str) -> None:
        with open(svc.conf_file) as f:
            text = f.read()
        with open(svc.conf_file, 'w') as f:
            f.write(re.sub(r'%s = \S+' % option, '%s = %s' % (option, value),
                           text))
        svc.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while expect not in svc.log(tail=None):
            assert time.monotonic() < deadline, svc.log()
            time.sleep(0.1)

    try:
        reload_with('abc', 'Configuration reload refused, the running '
                    'configuration is kept: invalid configuration: '
                    '[conductor]%s in %s: invalid literal for int() with '
                    "base 10: 'abc'" % (option, svc.conf_file))
        assert 'changed from [40] to [abc]' not in svc.log(tail=None)
        _call(svc, 'GET', '/v1/nodes')
        with open(svc.conf_file) as f:
            good = f.read()
        with open(svc.conf_file, 'w') as f:
            f.write(good + '[broken\n')
        svc.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while 'invalid configuration: Failed to parse %s' % svc.conf_file \
                not in svc.log(tail=None):
            assert time.monotonic() < deadline, svc.log()
            time.sleep(0.1)
        with open(svc.conf_file, 'w') as f:
            f.write(good)
        reload_with('5', 'Option conductor.%s changed from [40] to [5]'
                    % option)
        assert svc.proc.poll() is None
        assert 'Traceback' not in svc.log(tail=None)
    finally:
        assert svc.stop() == 0


def test_sigusr2_writes_every_threads_stack_and_goes_on(tmp_path):
    conf = processes.base_conf(tmp_path)
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port()).start()
    try:
        # The API answers before the main thread has reached the
        # Stopper's wait (it may still be in Thread.start()): ask again
        # until a dump shows it there.
        deadline = time.monotonic() + 20
        dumps = 0
        log = ''
        while 'baremetal/cmd/common.py' not in log:
            assert time.monotonic() < deadline, log
            svc.proc.send_signal(signal.SIGUSR2)
            dumps += 1
            # every dump ends the main thread's stack with the command
            while log.count('bin/baremetal-server"') < dumps:
                assert time.monotonic() < deadline, log
                time.sleep(0.1)
                log = svc.log(tail=None)
            time.sleep(0.2)
            log = svc.log(tail=None)
        # the main thread waiting for a stop signal, and the others
        assert 'in wait\n' in log, log
        assert log.count('Thread 0x') + log.count('Current thread') > 3
        _call(svc, 'GET', '/v1/nodes')
        assert svc.proc.poll() is None
    finally:
        assert svc.stop() == 0, svc.log()
