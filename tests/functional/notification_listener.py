"""An oslo.messaging notification listener on a topic of the test's own,
on the RabbitMQ of tests/services.py (which skips or fails the test when
RabbitMQ is down, as the suite asks)."""

import contextlib
import uuid as uuidlib

from tests import services


@contextlib.contextmanager
def listening(collector, prefix: str):
    """(rabbit URL, topic, collector) while ``collector`` (an object with
    oslo.messaging's endpoint methods: info, warn, error) receives what
    is sent to ``<prefix>_<random>``."""
    import oslo_messaging as messaging
    from oslo_config import cfg
    url = services.rabbit_url()
    topic = '%s_%s' % (prefix, uuidlib.uuid4().hex[:8])
    conf = cfg.ConfigOpts()
    conf([], project='notification-test')
    transport = messaging.get_notification_transport(conf, url=url)
    server = messaging.get_notification_listener(
        transport, [messaging.Target(topic=topic)], [collector],
        executor='threading')
    server.start()
    try:
        yield url, topic, collector
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
