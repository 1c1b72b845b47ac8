"""In-process harness: the real API app and conductor on a fresh SQLite
database, driven through WSGI (no sockets).  Shared by unit tests.

    h = Harness(tmp_path)            # or the ``api`` pytest fixture
    status, body, headers = h.request('POST', '/v1/nodes',
                                      {'driver': 'fake-hardware'})
    h.wait_for(uuid, 'available')
"""

import contextlib
import json
import logging
import os
import time

import pytest
import sqlalchemy as sa
import webob
from oslo_config import cfg

from baremetal import conf as baremetal_conf
from baremetal.api import app as api_app
from baremetal.api import hardware as api_hardware
from baremetal.common import state_machine
from baremetal.conductor import rpcapi
from baremetal.conductor import service
from baremetal.db import engine as db_engine
from baremetal.db import migration
from baremetal.db import models
from baremetal.drivers.modules.redfish import client as redfish_client
from tests import services

CONF = baremetal_conf.CONF

# Only what ships in-tree without BMC libraries.
FAKE_ONLY = {
    'enabled_hardware_types': ['fake-hardware', 'manual-management'],
    'enabled_power_interfaces': ['fake'],
    'enabled_management_interfaces': ['fake', 'noop'],
    'enabled_bios_interfaces': ['no-bios', 'fake'],
    'enabled_inspect_interfaces': ['no-inspect', 'fake', 'agent'],
    'enabled_raid_interfaces': ['no-raid', 'fake', 'agent'],
    # a request meeting a held node waits 0.1 s, not Ironic's 2 s, before
    # its 409 (tests/unit/conductor/test_task_manager.py sets its own)
    'conductor.node_locked_retry_interval': 0.05,
}

_TEMPLATE: dict[str, bytes] = {}


class _OverTheWire:
    """The embedded conductor as the API reaches it over a message bus:
    each call's context, arguments and result (or error) go through what
    oslo.messaging does to them (the context serialised, the rest JSON
    by oslo.serialization's ``jsonutils``, a datetime turned into text, a
    set into a list...), so that every API test also proves its calls
    work in the scale-out topology, where the embedded server would call
    the manager with Python objects as they are."""

    def __init__(self, conductor) -> None:
        self._conductor = conductor
        self.manager = _WireManager(conductor.manager)

    def __getattr__(self, name: str):
        return getattr(self._conductor, name)


class _WireManager:
    def __init__(self, manager) -> None:
        self._manager = manager

    def __getattr__(self, name: str):
        import sys

        from oslo_messaging._drivers import common as wire
        from oslo_serialization import jsonutils

        from baremetal.common import rpc
        fn = getattr(self._manager, name)
        serializer = rpc.ContextSerializer()

        def over(value):
            return jsonutils.loads(jsonutils.dumps(value))

        def send(ctxt, method, **kwargs):
            # RPCClient.call's own signature: an argument of the same
            # name as one of its own is a TypeError in the caller
            ctxt = serializer.deserialize_context(
                over(serializer.serialize_context(ctxt)))
            try:
                result = fn(ctxt, **over(kwargs))
            except Exception:
                # the error as the caller gets it: rebuilt from its JSON
                # (a class outside ALLOWED_EXMODS is a RemoteError)
                raise wire.deserialize_remote_exception(
                    over(wire.serialize_remote_exception(sys.exc_info())),
                    rpc.ALLOWED_EXMODS) from None
            return over(result)

        def call(context, **kwargs):
            return send(context, name, **kwargs)
        return call


def _fresh_db(path: str) -> str:
    """A migrated SQLite file, copied from a per-process template."""
    if 'db' not in _TEMPLATE:
        tmpl = path + '.template'
        engine = sa.create_engine('sqlite:///' + tmpl)
        models.Base.metadata.create_all(engine)
        with engine.begin() as conn:
            import alembic.command
            alembic.command.stamp(migration._config(conn), 'head')
        with engine.connect() as conn:
            # as the service opens it (db/engine.py): a copy in WAL mode
            # already is not converted at each test's first connection
            conn.exec_driver_sql('PRAGMA journal_mode=WAL')
        engine.dispose()
        with open(tmpl, 'rb') as f:
            _TEMPLATE['db'] = f.read()
        os.unlink(tmpl)
    with open(path, 'wb') as f:
        f.write(_TEMPLATE['db'])
    return 'sqlite:///' + path


def configure(overrides: dict | None = None) -> None:
    try:
        CONF([], project='baremetal')
    except cfg.Error:
        pass
    for k, v in {**FAKE_ONLY, **(overrides or {})}.items():
        group = None
        if '.' in k:
            group, k = k.split('.', 1)
        CONF.set_override(k, v, group=group)


class Harness:
    def __init__(self, tmp_path, overrides: dict | None = None,
                 version: str = '1.61', db_url: str | None = None) -> None:
        """``db_url``: a server database (tests/services.py), empty or
        with the schema at HEAD, to use instead of a fresh SQLite file."""
        CONF.reset()
        configure(overrides)
        # a BMC address an earlier test used (its port free again) must
        # not bring back that test's connection and its [redfish] options
        redfish_client.forget_all()
        self._overrides = list(overrides or ())
        CONF.set_override('host', 'test-conductor')
        if 'state_path' not in (overrides or {}):
            CONF.set_override('state_path', str(tmp_path))
        if 'conductor.file_url_allowed_paths' not in (overrides or {}):
            # the test's own files: images it writes to tmp_path
            CONF.set_override('file_url_allowed_paths', [str(tmp_path)],
                              group='conductor')
        self._db_url = db_url
        if db_url is None:
            url = _fresh_db(os.path.join(str(tmp_path), 'bm.sqlite'))
        else:
            url = db_url
            engine = sa.create_engine(url)
            # empty, or copied with the schema (services.db_url)
            assert migration.create_schema(engine) or \
                migration.version(engine) == migration.HEAD
            engine.dispose()
        db_engine.configure(url)
        self.conductor = service.Conductor(CONF)
        self.conductor.register()
        self.rpc = rpcapi.ConductorAPI(CONF,
                                       local=_OverTheWire(self.conductor))
        self.app = api_app.setup_app(CONF, self.rpc)
        # the API's view of the drivers is per process: this conductor's
        api_hardware._ensure(force=True)
        self.version = version

    def close(self) -> None:
        self.conductor.workers.wait_idle(10)
        self.conductor.workers.shutdown(wait=False)
        self.conductor.periodic_pool.shutdown(wait=False)
        if self.conductor.sensors is not None:
            self.conductor.sensors.stop()
        db_engine.close_connections()
        db_engine.engine().dispose()
        self.conductor.step_poller.stop()
        if self._db_url:
            services.give_back(self._db_url)
        for k in list(FAKE_ONLY) + self._overrides + [
                'state_path', 'conductor.file_url_allowed_paths']:
            group = None
            if '.' in k:
                group, k = k.split('.', 1)
            CONF.clear_override(k, group=group)
        CONF.reset()

    def request(self, method: str, path: str, body=None,
                version: str | None = None, headers: dict | None = None,
                raw: bytes | None = None):
        req = webob.Request.blank(path, method=method)
        req.headers['X-OpenStack-Ironic-API-Version'] = (
            version or self.version)
        if headers:
            req.headers.update(headers)
        if raw is not None:
            req.body = raw
            req.content_type = 'application/json'
        elif body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        data = None
        if resp.body:
            try:
                data = json.loads(resp.body)
            except ValueError:
                data = resp.body
        return resp.status_int, data, resp.headers

    # ---- conveniences ----
    def heartbeat(self, node: str, body: dict | None = None):
        """Heartbeat as an agent does: look the node up at 1.62 for
        this boot's token (first time only), then send it."""
        tokens = self.__dict__.setdefault('_tokens', {})
        if node not in tokens:
            status, found, _ = self.request(
                'GET', '/v1/lookup?node_uuid=%s' % node, version='1.62')
            assert status == 200, found
            tokens[node] = found['config']['agent_token']
        return self.request('POST', '/v1/heartbeat/%s' % node,
                            dict({'agent_token': tokens[node]},
                                 **(body or {})), version='1.62')

    def create_node(self, **fields) -> dict:
        fields.setdefault('driver', 'fake-hardware')
        status, body, _ = self.request('POST', '/v1/nodes', fields)
        assert status == 201, body
        return body

    def provision(self, node: str, target: str, expect: int = 202,
                  **extra) -> dict | None:
        status, body, _ = self.request(
            'PUT', '/v1/nodes/%s/states/provision' % node,
            dict(target=target, **extra))
        assert status == expect, (status, body)
        return body

    def node(self, node: str) -> dict:
        status, body, _ = self.request('GET', '/v1/nodes/%s' % node)
        assert status == 200, body
        return body

    def wait_for(self, node: str, state: str, timeout: float = 10.0
                 ) -> dict:
        """Wait until the node rests in ``state`` (no target, no lock)."""
        deadline = time.monotonic() + timeout
        while True:
            self.conductor.workers.wait_idle(timeout)
            n = self.node(node)
            if n['provision_state'] == state and not n['reservation'] \
                    and (not n['target_provision_state']
                         or state in state_machine.FAIL_STATES
                         or state in state_machine.WAIT_STATES
                         or state in state_machine.HOLD_STATES):
                return n
            if time.monotonic() > deadline:
                raise AssertionError('node %s is %s (target %s), not %s; '
                                     'last_error: %s'
                                     % (node, n['provision_state'],
                                        n['target_provision_state'], state,
                                        n['last_error']))
            time.sleep(0.01)

    def make_manageable(self, mac: str | None = None, **fields) -> str:
        """A new node (with a port of ``mac``, where given) taken to
        manageable; its UUID."""
        uuid = self.create_node(**fields)['uuid']
        if mac is not None:
            status, body, _ = self.request('POST', '/v1/ports', {
                'address': mac, 'node_uuid': uuid})
            assert status == 201, body
        self.provision(uuid, 'manage')
        self.wait_for(uuid, 'manageable')
        return uuid

    def make_available(self, **fields) -> dict:
        uuid = self.make_manageable(**fields)
        self.provision(uuid, 'provide')
        return self.wait_for(uuid, 'available')


# the databases baremetal supports; the sweeps that take long run on
# SQLite with the unit tests and on the servers with the functional ones
DATABASES = ('sqlite', 'postgresql', 'mysql')
SERVER_DATABASES = DATABASES[1:]


def on_databases(kinds, overrides: dict | None = None, name: str = 'api'):
    """A pytest fixture ``name``: the harness (with ``overrides``) on each
    database of ``kinds`` (a fresh one; PostgreSQL and MariaDB as
    tests/services.py provides them), its ``db_kind`` saying which."""
    @pytest.fixture(params=list(kinds), name=name)
    def fixture(request, tmp_path):
        h = Harness(tmp_path, overrides=overrides, db_url=services.db_url(
            request.param, schema=True))
        h.db_kind = request.param
        yield h
        h.close()
    return fixture


def error_message(body) -> str:
    return json.loads(body['error_message'])['faultstring']


class ErrorRecords(logging.Handler):
    """The service's log records at ERROR and above while ``watching``;
    ``unexpected`` those of an exception nothing expected (a traceback,
    or "unexpected" in the message)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record) -> None:
        self.records.append(record)

    @contextlib.contextmanager
    def watching(self):
        logging.getLogger().addHandler(self)
        try:
            yield self
        finally:
            logging.getLogger().removeHandler(self)

    def unexpected(self) -> list[str]:
        return [r.getMessage() for r in self.records
                if r.exc_info or 'nexpected' in r.getMessage()]
