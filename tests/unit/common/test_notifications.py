"""The notification machinery (common/notifications.py): levels, the
real oslo.messaging Notifier built from the configuration (its own
in-memory "test" driver here; RabbitMQ in tests/functional), the sender
thread that drops rather than blocks."""

import threading

from oslo_config import cfg

from baremetal.common import notifications
from tests import harness


def _conf(**overrides):
    harness.configure()
    conf = cfg.CONF
    for k, v in overrides.items():
        group = None
        if '.' in k:
            group, k = k.split('.', 1)
        conf.set_override(k, v, group=group)
    return conf


def test_unset_level_leaves_notifications_off():
    conf = _conf()
    notifications.setup(conf)
    assert notifications.ON is False
    assert not notifications.wanted('critical')


def test_levels_are_a_minimum():
    conf = _conf(notification_level='warning')
    try:
        notifications.setup(conf, notifier=object())
        assert [lv for lv in notifications.LEVELS
                if notifications.wanted(lv)] == ['warning', 'error',
                                                 'critical']
    finally:
        notifications.reset()
        cfg.CONF.reset()
        cfg.CONF.clear_override('notification_level')


def test_a_configured_oslo_messaging_driver_is_honoured():
    from oslo_messaging import opts as messaging_opts
    from oslo_messaging.notify import _impl_test
    _impl_test.reset()
    for group, opts in messaging_opts.list_opts():
        cfg.CONF.register_opts(opts, group=group)
    conf = _conf(notification_level='info', host='h1',
                 versioned_notifications_topics=['t1'],
                 transport_url='fake:/')
    conf.set_override('driver', ['test'],
                      group='oslo_messaging_notifications')
    try:
        notifications.setup(conf)
        notifications.emit(notifications.CONDUCTOR, 'baremetal.x.y.end',
                           'info', {'ironic_object.name': 'P'})
        assert notifications.drain()
        (ctxt, msg, priority, retry), = _impl_test.NOTIFICATIONS
        assert (priority, msg['event_type'], msg['publisher_id'],
                msg['payload']) == ('INFO', 'baremetal.x.y.end',
                                    'ironic-conductor.h1',
                                    {'ironic_object.name': 'P'})
    finally:
        notifications.reset()
        for k in ('notification_level', 'host',
                  'versioned_notifications_topics', 'transport_url'):
            conf.clear_override(k)
        conf.clear_override('driver', group='oslo_messaging_notifications')
        conf.reset()


class _Stuck:
    """A notifier whose sends wait until released."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.sent: list[str] = []

    def prepare(self, publisher_id):
        return self

    def info(self, ctxt, event_type, payload):
        self.go.wait(10)
        self.sent.append(event_type)


def test_a_full_queue_drops_new_notifications(monkeypatch, caplog):
    monkeypatch.setattr(notifications, 'QUEUE_SIZE', 2)
    stuck = _Stuck()
    sender = notifications._Sender(stuck)
    for i in range(5):    # one in the thread's hands, two queued
        sender.put(('p', 'e%d' % i, 'info', {}, {}))
        if i == 0:
            while sender.queue.qsize():
                pass
    assert sender.dropped == 2
    assert 'dropped' in caplog.text
    stuck.go.set()
    assert sender.drain(5)
    assert stuck.sent == ['e0', 'e1', 'e2']
