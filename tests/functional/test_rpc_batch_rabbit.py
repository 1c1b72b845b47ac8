"""Coalesced calls over a real RabbitMQ, against oslo.messaging servers in
this process: a conductor with ``call_batch`` answers each call of a
batch on its own (an error is its caller's alone); a conductor from
before ``call_batch`` answers NoSuchMethod, and the API then calls it
one by one, remembering it."""

import threading

import pytest

from baremetal.common import exception
from baremetal.common import rpc
from baremetal.common import rpc_batch
from baremetal.conductor import rpcapi
from baremetal.conf import CONF
from tests import harness
from tests import services


class OldConductor:
    """Only the single calls (no call_batch)."""

    def __init__(self) -> None:
        self.calls = []
        self.lock = threading.Lock()

    def do_provisioning_action(self, context, node_id, action,
                               params=None):
        with self.lock:
            self.calls.append((node_id, action))
        if node_id == 'locked':
            raise exception.NodeLocked(node=node_id, host='other')


class NewConductor(OldConductor):
    def __init__(self) -> None:
        super().__init__()
        self.batches = []

    def call_batch(self, context, calls):
        self.batches.append(len(calls))
        out = []
        for c in calls:
            try:
                out.append({'result': getattr(self, c['method'])(
                    context, **c['kwargs'])})
            except Exception as e:
                out.append({'error': rpc_batch.serialize_error(e)})
        return out


@pytest.fixture
def broker_conf():
    """baremetal's configuration with a transport to a vhost of our own
    (oslo.messaging keeps some of its options on the global CONF)."""
    import oslo_messaging as messaging
    harness.configure()
    rpc._TRANSPORT = messaging.get_rpc_transport(
        CONF, url=services.rabbit_url(),
        allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    servers = []
    yield CONF, servers
    for s in servers:
        s.stop()
        s.wait()
    rpc._TRANSPORT.cleanup()
    rpc._TRANSPORT = None


def _serve(conf, servers, host, endpoint):
    server = rpc.server(conf, host, endpoint)
    server.start()
    servers.append(server)
    return endpoint


def _node(name):
    return {'uuid': name, 'driver': 'fake-hardware', 'conductor_group': ''}


def test_old_conductor_is_called_one_by_one(broker_conf):
    conf, servers = broker_conf
    old = _serve(conf, servers, 'old-host', OldConductor())
    api = rpcapi.ConductorAPI(conf)
    api.host_for = lambda node: 'old-host'
    api.do_provisioning_action({}, _node('n1'), 'manage')
    assert old.calls == [('n1', 'manage')]
    assert api._no_batch == {'old-host'}
    with pytest.raises(exception.NodeLocked):
        api.do_provisioning_action({}, _node('locked'), 'manage')
    assert old.calls[-1] == ('locked', 'manage')


def test_new_conductor_takes_batches(broker_conf):
    conf, servers = broker_conf
    new = _serve(conf, servers, 'new-host', NewConductor())
    api = rpcapi.ConductorAPI(conf)
    api.host_for = lambda node: 'new-host'
    answers = {}

    def one(name):
        try:
            api.do_provisioning_action({}, _node(name), 'provide')
            answers[name] = 'ok'
        except exception.BaremetalException as e:
            answers[name] = e
    names = ['n%d' % i for i in range(15)] + ['locked']
    threads = [threading.Thread(target=one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(new.calls) == sorted((n, 'provide') for n in names)
    assert sum(new.batches) == 16 and api._no_batch == set()
    assert isinstance(answers.pop('locked'), exception.NodeLocked)
    assert set(answers.values()) == {'ok'}
