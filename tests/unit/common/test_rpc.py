"""The conductor's RPC server (oslo.messaging, its in-memory transport):
an error that is the caller's goes back to the caller as it was raised
and is not logged as a failure of the server; anything else is."""

import logging

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.common import rpc


class Manager:
    target = messaging.Target(version='1.0')

    def locked(self, context):
        raise exception.NodeLocked(node='n-1', host='cond-9')

    def bad_token(self, context):
        raise exception.AgentTokenInvalid(node='n-1', reason='a wrong one')

    def broken(self, context):
        raise exception.BaremetalException('the database went away')

    def crashed(self, context):
        raise KeyError('boom')

    def fine(self, context, value):
        return {'got': value}

    def _private(self, context):
        return 'never'


@pytest.fixture(scope='module')
def client():
    # the global CONF, as the services use (oslo.messaging registers
    # some of its options there only)
    conf = cfg.CONF
    transport = messaging.get_rpc_transport(
        conf, url='fake:/', allowed_remote_exmods=rpc.ALLOWED_EXMODS)
    kept, rpc._TRANSPORT = rpc._TRANSPORT, transport
    try:
        server = rpc.server(conf, 'cond-0', Manager())
        server.start()
        c = rpc.client(conf, 10).prepare(server='cond-0')
    finally:
        rpc._TRANSPORT = kept
    yield c
    server.stop()
    server.wait()
    transport.cleanup()


def _server_errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == 'oslo_messaging.rpc.server'
            and r.levelno >= logging.ERROR]


@pytest.mark.parametrize('method, error, words', [
    ('locked', exception.NodeLocked, 'locked by host cond-9'),
    ('bad_token', exception.AgentTokenInvalid, 'a wrong one'),
])
def test_the_callers_errors_reach_it_without_an_error_logged(
        client, caplog, method, error, words):
    with pytest.raises(error) as e:
        client.call({}, method)
    assert words in str(e.value)
    assert _server_errors(caplog) == []


@pytest.mark.parametrize('method', ['broken', 'crashed'])
def test_the_servers_own_failures_are_logged(client, caplog, method):
    with pytest.raises(Exception):
        client.call({}, method)
    assert any('Exception during message handling' in m
               for m in _server_errors(caplog))


def test_results_and_private_methods_as_before(client):
    assert client.call({}, 'fine', value=3) == {'got': 3}
    with pytest.raises(messaging.NoSuchMethod):
        client.call({}, '_private')


def test_no_manager_method_takes_a_name_the_rpc_call_reserves():
    """``RPCClient.call(ctxt, method, **kwargs)``: an RPC whose keyword
    argument is named ``method`` or ``ctxt`` fails in the caller with a
    TypeError (a 500) over a message bus, while the embedded server,
    which calls the manager directly, works (node vendor passthru did
    so, its method named ``method``)."""
    import inspect

    from baremetal.conductor import manager

    reserved = set(inspect.signature(
        messaging.RPCClient.call).parameters) - {'self', 'kwargs'}
    assert reserved == {'ctxt', 'method'}
    clashes = [
        (name, p) for name, fn in inspect.getmembers(
            manager.ConductorManager, inspect.isfunction)
        if not name.startswith('_')
        for p in list(inspect.signature(fn).parameters)[2:]
        if p in reserved]
    assert not clashes


def test_why_a_keyword_named_method_cannot_cross(client):
    with pytest.raises(TypeError):
        client.call({}, 'fine', method='x')
    assert client.call({}, 'fine', value='x') == {'got': 'x'}
