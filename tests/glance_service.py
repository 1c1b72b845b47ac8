"""A real OpenStack Glance for tests: its own venv (tools/glance-venv,
cached under ~/.cache/baremetal-glance), SQLite, the file store, served
on a free loopback port by tests/glance_wsgi.py, started and stopped by
PID.

Without ``keystone`` Glance runs without authentication (every request
is an admin's); with a started tests.keystone_service.Keystone it
validates tokens with keystonemiddleware as Keystone's ``service`` user,
the fixture's own requests carry that user's token (roles admin and
service in project ``service``), and ``register(keystone)`` puts Glance
in Keystone's catalog (service type ``image``).  ``requests()`` lists
what Glance answered (``METHOD PATH STATUS SERVICE_TOKEN``), for tests
that count downloads.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests import services

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, 'tools', 'glance-venv')
LAUNCHER = os.path.join(ROOT, 'tests', 'glance_wsgi.py')


def venv() -> str:
    """The Glance venv, installed on first use (a few minutes)."""
    run = subprocess.run([TOOL], capture_output=True, text=True,
                         timeout=1800)
    if run.returncode != 0:
        msg = 'tools/glance-venv failed: %s' % run.stderr[-2000:]
        if services.required():
            pytest.fail(msg)
        pytest.skip(msg)
    return run.stdout.strip().splitlines()[-1]


def _ini(sections: dict) -> str:
    out = []
    for name, values in sections.items():
        out.append('[%s]' % name)
        out.extend('%s = %s' % kv for kv in values.items())
        out.append('')
    return '\n'.join(out)


class Glance:
    """One Glance API process, behind ``keystone`` when given."""

    def __init__(self, tmp, keystone=None) -> None:
        self.dir = os.path.join(str(tmp), 'glance')
        self.keystone = keystone
        self._port = services.PortReservation()
        self.port = self._port.port
        self.url = 'http://127.0.0.1:%d' % self.port
        self.proc: subprocess.Popen | None = None
        self.request_log = os.path.join(self.dir, 'requests')
        self.log_file = os.path.join(self.dir, 'log')
        self.store = os.path.join(self.dir, 'images')

    # ---- life cycle ----
    def start(self) -> 'Glance':
        env_dir = venv()
        etc = os.path.join(self.dir, 'etc')
        for sub in ('etc', 'images', 'staging', 'tasks'):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        paste = os.path.join(etc, 'glance-api-paste.ini')
        shutil.copy(os.path.join(env_dir, 'etc', 'glance',
                                 'glance-api-paste.ini'), paste)
        conf = self._conf(paste)
        conf_file = os.path.join(etc, 'glance-api.conf')
        with open(conf_file, 'w') as f:
            f.write(_ini(conf))
        py = os.path.join(env_dir, 'bin', 'python')
        env = dict(os.environ, OS_GLANCE_CONFIG_DIR=etc,
                   PYTHONWARNINGS='ignore')
        sync = subprocess.run(
            [os.path.join(env_dir, 'bin', 'glance-manage'), '--config-file',
             conf_file, 'db_sync'], capture_output=True, text=True,
            env=env, timeout=300)
        if sync.returncode != 0:
            raise RuntimeError('glance-manage db_sync failed:\n%s'
                               % sync.stderr[-3000:])
        with open(self.log_file, 'ab') as log:
            self._port.release()
            self.proc = subprocess.Popen(
                [py, LAUNCHER, str(self.port), self.request_log],
                stdout=log, stderr=subprocess.STDOUT, env=env)
        self._wait()
        return self

    def _conf(self, paste: str) -> dict:
        conf = {
            'DEFAULT': {'enabled_backends': 'fs:file', 'debug': 'false',
                        'enabled_import_methods': '[]',
                        'use_stderr': 'true'},
            'database': {'connection': 'sqlite:///%s' % os.path.join(
                self.dir, 'glance.sqlite')},
            'glance_store': {'default_backend': 'fs'},
            'fs': {'filesystem_store_datadir': self.store},
            'os_glance_staging_store': {
                'filesystem_store_datadir':
                    os.path.join(self.dir, 'staging')},
            'os_glance_tasks_store': {
                'filesystem_store_datadir':
                    os.path.join(self.dir, 'tasks')},
            'paste_deploy': {'config_file': paste, 'flavor': ''},
            'oslo_policy': {'enforce_new_defaults': 'false',
                            'enforce_scope': 'false'},
        }
        if self.keystone is not None:
            conf['paste_deploy']['flavor'] = 'keystone'
            conf['keystone_authtoken'] = self.keystone.authtoken_conf()
        return conf

    def _wait(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('glance exited with %s:\n%s'
                                   % (self.proc.returncode, self.log()))
            try:
                urllib.request.urlopen(self.url + '/versions', timeout=2)
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError('glance did not answer in %ss:\n%s'
                           % (timeout, self.log()))

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def log(self, tail: int = 6000) -> str:
        try:
            with open(self.log_file, errors='replace') as f:
                return f.read()[-tail:]
        except OSError:
            return ''

    def requests(self) -> list[str]:
        try:
            with open(self.request_log) as f:
                return f.read().splitlines()
        except OSError:
            return []

    # ---- images ----
    def _call(self, method: str, path: str, body=None,
              content_type: str = 'application/json',
              token: str | None = None):
        data = body if isinstance(body, bytes) or body is None else \
            json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header('Content-Type', content_type)
        if token is None and self.keystone is not None:
            token = self.keystone.token('service')
        if token:
            req.add_header('X-Auth-Token', token)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors='replace')

    def create_image(self, data: bytes, owner: str | None = None,
                     visibility: str = 'public', disk_format: str = 'raw',
                     name: str = 'disk', members: tuple = ()) -> dict:
        """An active image holding ``data``; Glance's record of it."""
        body = {'name': name, 'disk_format': disk_format,
                'container_format': 'bare', 'visibility': visibility}
        if owner:
            body['owner'] = owner
        status, image = self._call('POST', '/v2/images', body)
        assert status == 201, (status, image)
        status, out = self._call('PUT', '/v2/images/%s/file' % image['id'],
                                 data, 'application/octet-stream')
        assert status == 204, (status, out)
        for member in members:
            status, out = self._call('POST', '/v2/images/%s/members'
                                     % image['id'], {'member': member})
            assert status == 200, (status, out)
        return self.show(image['id'])

    def show(self, image_id: str) -> dict:
        status, image = self._call('GET', '/v2/images/%s' % image_id)
        assert status == 200, (status, image)
        return image

    def register(self, keystone) -> None:
        """Glance as the catalog's ``image`` service (public and
        internal endpoints)."""
        admin = keystone.token('system-admin')

        def call(method, path, body):
            st, out, _ = keystone.request(method, path, body, admin)
            assert st < 400, (method, path, st, out)
            return out
        service = call('POST', '/services', {'service': {
            'type': 'image', 'name': 'glance'}})['service']['id']
        for interface in ('public', 'internal'):
            call('POST', '/endpoints', {'endpoint': {
                'service_id': service, 'interface': interface,
                'url': self.url, 'region_id': 'RegionOne'}})

    def stored_file(self, image_id: str) -> str:
        """Where the file store keeps the image's data."""
        return os.path.join(self.store, image_id)


def sha512(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest()


# an image UUID no Glance of these tests holds
UNUSED_UUID = '1e2c3b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b'
