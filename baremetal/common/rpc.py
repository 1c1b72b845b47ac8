"""oslo.messaging plumbing: transport, server, client, context."""

import oslo_messaging as messaging
from oslo_config import cfg
from oslo_context import context as oslo_context

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


def server(conf: cfg.ConfigOpts, host: str, endpoint):
    target = messaging.Target(topic=TOPIC, server=host)
    return messaging.get_rpc_server(
        transport(conf), target, [endpoint], executor='threading',
        serializer=ContextSerializer())


def client(conf: cfg.ConfigOpts, timeout: int):
    target = messaging.Target(topic=TOPIC, version='1.0')
    return messaging.get_rpc_client(transport(conf), target,
                                    serializer=ContextSerializer(),
                                    timeout=timeout)
