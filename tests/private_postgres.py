"""A private PostgreSQL server for one test: ``initdb`` into a temporary
directory with the machine's installed binaries, on a free loopback
port, run as the ``postgres`` user when the tests run as root (initdb
refuses root), stopped and restarted by its PID.  Restarting it does not
disturb the shared server other tests use.

When the binaries are missing the test is skipped with the reason, or
fails in CI (tests/services.py).
"""

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from tests import services


def _bindir() -> str | None:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    return os.path.dirname(found[-1]) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class PrivatePostgres:
    def __init__(self) -> None:
        self.bindir = _bindir()
        if self.bindir is None:
            services.unavailable('PostgreSQL', 'no initdb under '
                                 '/usr/lib/postgresql/*/bin')
        self.user = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam('postgres')
            except KeyError:
                services.unavailable('PostgreSQL', 'running as root and '
                                     'there is no postgres user for initdb')
        self.dir = tempfile.mkdtemp(prefix='bm-pg-')
        self.data = os.path.join(self.dir, 'data')
        self.log_path = os.path.join(self.dir, 'log')
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        out = subprocess.run(
            [os.path.join(self.bindir, 'initdb'), '-D', self.data,
             '-U', 'postgres', '--auth=trust', '-E', 'UTF8',
             '--no-sync'], capture_output=True, text=True, timeout=120,
            **self._as_owner())
        if out.returncode != 0:
            self.remove()
            raise RuntimeError('initdb failed: %s' % out.stderr)
        self.start()

    def _as_owner(self) -> dict:
        if self.user is None:
            return {}
        return {'user': self.user.pw_uid, 'group': self.user.pw_gid,
                'extra_groups': []}

    @property
    def url(self) -> str:
        return ('postgresql+psycopg2://postgres@127.0.0.1:%d/postgres'
                % self.port)

    def start(self, timeout: float = 30) -> None:
        log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen(
            [os.path.join(self.bindir, 'postgres'), '-D', self.data,
             '-p', str(self.port), '-h', '127.0.0.1',
             '-k', self.dir, '-c', 'fsync=off',
             '-c', 'max_connections=200'],
            stdout=log, stderr=subprocess.STDOUT, **self._as_owner())
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, self.log()
            try:
                with socket.create_connection(('127.0.0.1', self.port),
                                              timeout=1):
                    pass
                ready = subprocess.run(
                    [os.path.join(self.bindir, 'pg_isready'), '-h',
                     '127.0.0.1', '-p', str(self.port)],
                    capture_output=True, timeout=10)
                if ready.returncode == 0:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, self.log()
            time.sleep(0.1)

    def stop(self, timeout: float = 30) -> None:
        """Fast shutdown (SIGINT): clients are disconnected at once."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def log(self) -> str:
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()[-4000:]
        except OSError:
            return ''

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
