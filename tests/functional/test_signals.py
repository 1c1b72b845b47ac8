"""SIGTERM stops gracefully (work finished or handed back, locks
released); SIGHUP reloads mutable configuration; SIGUSR2 writes every
thread's stack to standard error."""

import json
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
