"""A real OpenStack Keystone for tests: SQLite, fernet tokens, loopback.

``Keystone(dir).start()`` installs Keystone once per machine into its own
virtualenv (``tools/keystone-venv``: ``~/.cache/baremetal-keystone``),
writes ``keystone.conf``, runs ``keystone-manage db_sync``,
``fernet_setup``, ``credential_setup`` and ``bootstrap``, serves
``keystone.wsgi.api:application`` under cheroot on a free loopback port,
then creates, through Keystone's own REST API, the personas the policy
tests speak as:

* ``system-admin`` (the bootstrap user), ``system-member``,
  ``system-reader``: system-scoped (``system: all``);
* ``a-admin``, ``a-manager``, ``a-member``, ``a-reader`` and the same for
  ``b-``: project-scoped to projects ``project-a`` / ``project-b``;
* ``service``: the service user, roles ``service`` and ``admin`` in
  project ``service`` (what keystonemiddleware validates tokens as).

``token(persona)`` is a token for one persona, ``cloud(persona)`` its
openstacksdk/clouds.yaml entry, ``authtoken_conf()`` the
``[keystone_authtoken]`` section a service needs and
``set_baremetal_endpoint(url)`` the catalog entry (type ``baremetal``,
public and internal).  ``stop()`` ends the server by its PID.

The ``keystone`` fixture (session scope) gives one started instance; it
is skipped with the reason when Keystone cannot be installed, except in
CI (``CI=true``), where that fails.
"""

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

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_TOOL = os.path.join(TOP, 'tools', 'keystone-venv')
WSGI_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           'keystone_wsgi.py')
PASSWORD = 'secret-Pa55'
REGION = 'RegionOne'
PROJECTS = {'a': 'project-a', 'b': 'project-b'}
PROJECT_ROLES = ('admin', 'manager', 'member', 'reader')
SYSTEM_ROLES = ('admin', 'member', 'reader')
SERVICE_PROJECT = 'service'


def personas() -> list[str]:
    out = ['system-%s' % r for r in SYSTEM_ROLES]
    out += ['%s-%s' % (p, r) for p in PROJECTS for r in PROJECT_ROLES]
    return out + ['service']


class KeystoneUnavailable(RuntimeError):
    pass


def install_venv() -> str:
    """The Keystone venv's path, installing it on first use."""
    try:
        run = subprocess.run([VENV_TOOL], capture_output=True, text=True,
                             timeout=1200)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise KeystoneUnavailable('tools/keystone-venv: %s' % e) from None
    if run.returncode != 0:
        raise KeystoneUnavailable('tools/keystone-venv failed: %s'
                                  % run.stderr.strip()[-1500:])
    return run.stdout.strip().splitlines()[-1]


class Keystone:
    def __init__(self, base_dir: str, venv: str | None = None) -> None:
        self.dir = os.path.join(str(base_dir), 'keystone')
        os.makedirs(self.dir, exist_ok=True)
        self.venv = venv
        self._port = services.PortReservation()
        self.port = self._port.port
        self.proc: subprocess.Popen | None = None
        self.conf_file = os.path.join(self.dir, 'keystone.conf')
        self.log_file = os.path.join(self.dir, 'keystone.log')
        self.ids: dict[str, dict[str, str]] = {
            'user': {}, 'project': {}, 'role': {}}
        self._tokens: dict[str, tuple[float, str]] = {}
        self._service_id: str | None = None

    # -- the process
    @property
    def url(self) -> str:
        """The identity endpoint (auth_url)."""
        return 'http://127.0.0.1:%d/v3' % self.port

    def _env(self) -> dict:
        return dict(os.environ, OS_KEYSTONE_CONFIG_FILES=self.conf_file,
                    PYTHONWARNINGS='ignore')

    def _manage(self, *args: str) -> None:
        cmd = [os.path.join(self.venv, 'bin', 'keystone-manage'),
               '--config-file', self.conf_file, *args]
        run = subprocess.run(cmd, capture_output=True, text=True,
                             env=self._env(), timeout=300)
        if run.returncode != 0:
            raise RuntimeError('keystone-manage %s failed (%s):\n%s\n%s'
                               % (args[0], run.returncode,
                                  run.stdout[-2000:], run.stderr[-3000:]))

    def _write_conf(self) -> None:
        d = self.dir
        for sub in ('fernet-keys', 'credential-keys', 'receipt-keys'):
            os.makedirs(os.path.join(d, sub), mode=0o700, exist_ok=True)
        text = '\n'.join([
            '[DEFAULT]',
            'log_file = %s' % self.log_file,
            'use_stderr = false',
            '[database]',
            'connection = sqlite:///%s/keystone.sqlite' % d,
            '[token]',
            'provider = fernet',
            'expiration = 14400',
            '[fernet_tokens]',
            'key_repository = %s/fernet-keys' % d,
            '[fernet_receipts]',
            'key_repository = %s/receipt-keys' % d,
            '[credential]',
            'key_repository = %s/credential-keys' % d,
            '[identity]',
            # bcrypt's default cost makes every login take ~0.3 s of CPU
            'password_hash_rounds = 4',
            '[oslo_policy]',
            'enforce_scope = true',
            'enforce_new_defaults = true',
            ''])
        with open(self.conf_file, 'w') as f:
            f.write(text)

    def start(self) -> 'Keystone':
        if self.venv is None:
            self.venv = install_venv()
        self._write_conf()
        self._manage('db_sync')
        uid = str(os.getuid())
        gid = str(os.getgid())
        self._manage('fernet_setup', '--keystone-user', uid,
                     '--keystone-group', gid)
        self._manage('credential_setup', '--keystone-user', uid,
                     '--keystone-group', gid)
        self._manage('bootstrap', '--bootstrap-password', PASSWORD,
                     '--bootstrap-username', 'system-admin',
                     '--bootstrap-project-name', 'admin',
                     '--bootstrap-role-name', 'admin',
                     '--bootstrap-service-name', 'keystone',
                     '--bootstrap-region-id', REGION,
                     '--bootstrap-public-url', self.url,
                     '--bootstrap-internal-url', self.url)
        log = open(os.path.join(self.dir, 'cheroot.log'), 'ab')
        self._port.release()
        self.proc = subprocess.Popen(
            [os.path.join(self.venv, 'bin', 'python'), WSGI_SCRIPT,
             str(self.port)],
            stdout=log, stderr=subprocess.STDOUT, env=self._env(),
            cwd=self.dir)
        log.close()
        try:
            self._wait_up()
            self._populate()
        except Exception:
            self.stop()
            raise
        return self

    def _wait_up(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('keystone exited with %s:\n%s' % (
                    self.proc.returncode, self.log()))
            try:
                urllib.request.urlopen(self.url, timeout=5)
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError('keystone did not answer on %s in %ss:\n%s'
                           % (self.url, timeout, self.log()))

    def log(self, tail: int = 6000) -> str:
        out = ''
        for name in ('cheroot.log', 'keystone.log'):
            try:
                with open(os.path.join(self.dir, name),
                          errors='replace') as f:
                    out += '--- %s\n%s\n' % (name, f.read()[-tail:])
            except OSError:
                pass
        return out

    def stop(self) -> int:
        """Stop the server: its exit status (0 when SIGTERM stopped it;
        -9 when it had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            return self.proc.wait(10)

    # -- REST
    def request(self, method: str, path: str, body=None,
                token: str | None = None,
                headers: dict | None = None) -> tuple[int, dict, dict]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header('Content-Type', 'application/json')
        req.add_header('Accept', 'application/json')
        if token:
            req.add_header('X-Auth-Token', token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else {}, dict(
                    r.headers)
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                parsed = json.loads(raw) if raw else {}
            except ValueError:
                parsed = {'raw': raw.decode(errors='replace')}
            return e.code, parsed, dict(e.headers)

    def _admin(self, method: str, path: str, body=None) -> dict:
        st, out, _ = self.request(method, path, body,
                                  self.token('system-admin'))
        if st >= 400:
            raise RuntimeError('keystone %s %s: %s %s'
                               % (method, path, st, out))
        return out

    def _role_id(self, name: str) -> str:
        if name not in self.ids['role']:
            roles = self._admin('GET', '/roles?name=%s' % name)['roles']
            if roles:
                self.ids['role'][name] = roles[0]['id']
            else:
                self.ids['role'][name] = self._admin(
                    'POST', '/roles', {'role': {'name': name}})['role']['id']
        return self.ids['role'][name]

    def _project(self, name: str) -> str:
        found = self._admin('GET', '/projects?name=%s' % name)['projects']
        pid = found[0]['id'] if found else self._admin(
            'POST', '/projects', {'project': {
                'name': name, 'domain_id': 'default'}})['project']['id']
        self.ids['project'][name] = pid
        return pid

    def _user(self, name: str, project: str | None = None) -> str:
        user = {'name': name, 'domain_id': 'default', 'password': PASSWORD}
        if project:
            user['default_project_id'] = self.ids['project'][project]
        uid = self._admin('POST', '/users', {'user': user})['user']['id']
        self.ids['user'][name] = uid
        return uid

    def _populate(self) -> None:
        self.ids['user']['system-admin'] = self._admin(
            'GET', '/users?name=system-admin')['users'][0]['id']
        for role in SYSTEM_ROLES[1:]:
            uid = self._user('system-%s' % role)
            self._admin('PUT', '/system/users/%s/roles/%s'
                        % (uid, self._role_id(role)))
        for key, project in PROJECTS.items():
            pid = self._project(project)
            for role in PROJECT_ROLES:
                uid = self._user('%s-%s' % (key, role), project)
                self._admin('PUT', '/projects/%s/users/%s/roles/%s'
                            % (pid, uid, self._role_id(role)))
        pid = self._project(SERVICE_PROJECT)
        uid = self._user('service', SERVICE_PROJECT)
        for role in ('service', 'admin'):
            self._admin('PUT', '/projects/%s/users/%s/roles/%s'
                        % (pid, uid, self._role_id(role)))
        self._service_id = self._admin('POST', '/services', {'service': {
            'type': 'baremetal', 'name': 'ironic',
            'description': 'Bare Metal'}})['service']['id']

    # -- what tests use
    def project_id(self, key_or_name: str) -> str:
        return self.ids['project'][PROJECTS.get(key_or_name, key_or_name)]

    def user_id(self, persona: str) -> str:
        return self.ids['user'][persona]

    def scope(self, persona: str) -> dict:
        if persona.startswith('system-'):
            return {'system': {'all': True}}
        if persona == 'service':
            project = SERVICE_PROJECT
        else:
            project = PROJECTS[persona.split('-', 1)[0]]
        return {'project': {'name': project, 'domain': {'id': 'default'}}}

    def token(self, persona: str) -> str:
        """A token for ``persona`` (cached while it has an hour left)."""
        hit = self._tokens.get(persona)
        if hit and hit[0] > time.monotonic():
            return hit[1]
        body = {'auth': {'identity': {'methods': ['password'], 'password': {
            'user': {'name': persona, 'domain': {'id': 'default'},
                     'password': PASSWORD}}},
            'scope': self.scope(persona)}}
        st, out, headers = self.request('POST', '/auth/tokens', body)
        if st != 201:
            raise RuntimeError('keystone refused a token for %s: %s %s'
                               % (persona, st, out))
        tok = headers.get('X-Subject-Token') or headers['x-subject-token']
        self._tokens[persona] = (time.monotonic() + 3 * 3600, tok)
        return tok

    def cloud(self, persona: str) -> dict:
        """A clouds.yaml entry (openstacksdk, python-ironicclient's
        ``baremetal`` command) logging in as ``persona`` with a
        password."""
        auth = {'auth_url': self.url, 'username': persona,
                'password': PASSWORD, 'user_domain_name': 'Default'}
        if persona.startswith('system-'):
            auth['system_scope'] = 'all'
        else:
            scope = self.scope(persona)['project']
            auth.update(project_name=scope['name'],
                        project_domain_name='Default')
        return {'auth': auth, 'auth_type': 'password',
                'region_name': REGION, 'identity_api_version': 3,
                'interface': 'public'}

    def application_credential(self, persona: str, name: str) -> dict:
        """A new application credential of ``persona`` (in the scope of
        its token) as a clouds.yaml entry."""
        uid = self.ids['user'][persona]
        st, out, _ = self.request(
            'POST', '/users/%s/application_credentials' % uid,
            {'application_credential': {'name': name}}, self.token(persona))
        if st != 201:
            raise RuntimeError('application credential for %s: %s %s'
                               % (persona, st, out))
        cred = out['application_credential']
        return {'auth': {'auth_url': self.url,
                         'application_credential_id': cred['id'],
                         'application_credential_secret': cred['secret']},
                'auth_type': 'v3applicationcredential',
                'region_name': REGION, 'identity_api_version': 3,
                'interface': 'public'}

    def authtoken_conf(self) -> dict:
        """``[keystone_authtoken]`` for a service validating tokens here
        as the ``service`` user."""
        return {'auth_type': 'password', 'www_authenticate_uri': self.url,
                'auth_url': self.url, 'username': 'service',
                'password': PASSWORD, 'user_domain_name': 'Default',
                'project_name': SERVICE_PROJECT,
                'project_domain_name': 'Default', 'region_name': REGION,
                'service_token_roles_required': 'true'}

    def set_baremetal_endpoint(self, url: str) -> None:
        """Point the catalog's ``baremetal`` service (public and internal)
        at ``url``, replacing what was there."""
        for ep in self._admin('GET', '/endpoints?service_id=%s'
                              % self._service_id)['endpoints']:
            self._admin('DELETE', '/endpoints/%s' % ep['id'])
        for interface in ('public', 'internal'):
            self._admin('POST', '/endpoints', {'endpoint': {
                'service_id': self._service_id, 'interface': interface,
                'url': url, 'region_id': REGION}})


def start_or_skip(base_dir) -> Keystone:
    """A started Keystone, or the test skipped (failed in CI) with the
    reason Keystone cannot be installed."""
    try:
        return Keystone(base_dir).start()
    except KeystoneUnavailable as e:
        msg = 'Keystone is not available: %s' % e
        if services.required():
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope='session')
def keystone(tmp_path_factory):
    ks = start_or_skip(tmp_path_factory.mktemp('keystone'))
    yield ks
    assert ks.stop() == 0, ks.log()
    shutil.rmtree(os.path.join(ks.dir, 'fernet-keys'), ignore_errors=True)
