"""oslo.messaging plumbing: transport, server, client, context."""

import functools

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_context import context as oslo_context

from baremetal.common import exception

TOPIC = 'baremetal.conductor_manager'
ALLOWED_EXMODS = ['baremetal.common.exception']

_TRANSPORT = None


def transport(conf: cfg.ConfigOpts):
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = messaging.get_rpc_transport(
            conf, allowed_remote_exmods=ALLOWED_EXMODS)
    return _TRANSPORT


class ContextSerializer(messaging.NoOpSerializer):
    def serialize_context(self, context):
        if context is None:
            return {}
        return context.to_dict() if hasattr(context, 'to_dict') else \
            dict(context)

    def deserialize_context(self, context):
        return oslo_context.RequestContext.from_dict(context or {})


class Endpoint:
    """The conductor's manager as the RPC server calls it.  An error
    that is the caller's (a baremetal exception with a 4xx code: a node
    locked, a wrong agent token, a verb the node's state refuses) goes
    back to the API as oslo.messaging's expected exception: logged at
    debug, not as "Exception during message handling" with its
    traceback at ERROR in the conductor's log for every such request.
    Any other error is logged as before."""

    def __init__(self, manager) -> None:
        self._manager = manager
        self.target = getattr(manager, 'target', None)

    def __getattr__(self, name: str):
        attr = getattr(self._manager, name)
        if name.startswith('_') or not callable(attr):
            return attr

        @functools.wraps(attr)
        def call(*args, **kwargs):
            try:
                return attr(*args, **kwargs)
            except exception.BaremetalException as e:
                if 400 <= getattr(e, 'code', 500) < 500:
                    # carries this exception (sys.exc_info) to the caller
                    raise messaging.ExpectedException() from e
                raise
        return call


def server(conf: cfg.ConfigOpts, host: str, manager):
    target = messaging.Target(topic=TOPIC, server=host)
    return messaging.get_rpc_server(
        transport(conf), target, [Endpoint(manager)], executor='threading',
        serializer=ContextSerializer())


def client(conf: cfg.ConfigOpts, timeout: int):
    target = messaging.Target(topic=TOPIC, version='1.0')
    return messaging.get_rpc_client(transport(conf), target,
                                    serializer=ContextSerializer(),
                                    timeout=timeout)
