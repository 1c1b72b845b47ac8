"""Virtual BMCs as processes on loopback, for functional tests."""

import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import bcrypt

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def free_port(kind=socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class _Process:
    def _spawn(self, args, log_path):
        self.log_path = log_path
        log = open(log_path, 'ab')
        # what the BMC writes to temporary files (sushy-tools downloads
        # virtual media there) stays beside its log, in the test's tmp
        self.proc = subprocess.Popen(
            [sys.executable, '-m', *args], cwd=REPO, stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONWARNINGS='ignore',
                     TMPDIR=os.path.dirname(log_path)))
        log.close()

    def log(self) -> str:
        with open(self.log_path, errors='replace') as f:
            return f.read()[-5000:]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class IPMIBMC(_Process):
    """tests/bmc/ipmi_server.py in its own process (UDP, loopback)."""

    def __init__(self, tmp, name='bmc', user='admin',
                 password='pw', delay=0.001):  # noqa: S107
        self.port = free_port(socket.SOCK_DGRAM)
        self.user, self.password = user, password
        self.state_file = os.path.join(str(tmp), '%s.json' % name)
        self._spawn(['tests.bmc.ipmi_server', '--port', str(self.port),
                     '--user', user, '--password', password,
                     '--state-file', self.state_file,
                     '--delay', str(delay)],
                    os.path.join(str(tmp), '%s.log' % name))
        deadline = time.monotonic() + 20
        while not os.path.exists(self.state_file):
            assert self.proc.poll() is None, self.log()
            assert time.monotonic() < deadline, self.log()
            time.sleep(0.05)

    @property
    def state(self) -> dict:
        with open(self.state_file) as f:
            return json.load(f)

    def driver_info(self, **extra) -> dict:
        info = {'ipmi_address': '127.0.0.1', 'ipmi_port': self.port,
                'ipmi_username': self.user, 'ipmi_password': self.password}
        info.update(extra)
        return info


class RedfishBMC(_Process):
    """sushy-tools' emulator (tests/bmc/redfish_server.py) with basic
    auth from an htpasswd file of low bcrypt cost."""

    def __init__(self, tmp, systems: list[dict], user='admin',
                 password='secret', power_delay=0.0, name='redfish'):  # noqa: S107
        self.port = free_port()
        self.user, self.password = user, password
        base = os.path.join(str(tmp), name)
        os.makedirs(base, exist_ok=True)
        self.auth_file = os.path.join(base, 'htpasswd')
        with open(self.auth_file, 'w') as f:
            f.write('%s:%s\n' % (user, bcrypt.hashpw(
                password.encode(), bcrypt.gensalt(4)).decode()))
        systems_file = os.path.join(base, 'systems.json')
        with open(systems_file, 'w') as f:
            json.dump(systems, f)
        self._spawn(['tests.bmc.redfish_server', '--port', str(self.port),
                     '--state-dir', os.path.join(base, 'state'),
                     '--systems', systems_file,
                     '--auth-file', self.auth_file,
                     '--power-delay', str(power_delay)],
                    os.path.join(base, 'log'))
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, self.log()
            try:
                self.get('/redfish/v1/')
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, self.log()
                time.sleep(0.1)

    @property
    def address(self) -> str:
        return 'http://127.0.0.1:%d' % self.port

    def _auth(self) -> dict:
        token = base64.b64encode(
            ('%s:%s' % (self.user, self.password)).encode()).decode()
        return {'Authorization': 'Basic ' + token}

    def get(self, path: str) -> dict:
        req = urllib.request.Request(self.address + path,
                                     headers=self._auth())
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def post(self, path: str, body: dict) -> int:
        """POST JSON straight to the BMC; its HTTP status."""
        req = urllib.request.Request(
            self.address + path, data=json.dumps(body).encode(),
            method='POST', headers=dict(
                self._auth(), **{'Content-Type': 'application/json'}))
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status

    def system(self, uuid: str) -> dict:
        return self.get('/redfish/v1/Systems/%s' % uuid)

    def driver_info(self, system_uuid: str, **extra) -> dict:
        info = {'redfish_address': self.address,
                'redfish_system_id': '/redfish/v1/Systems/%s' % system_uuid,
                'redfish_username': self.user,
                'redfish_password': self.password,
                'redfish_auth_type': 'basic'}
        info.update(extra)
        return info
