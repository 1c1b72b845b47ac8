"""Versioned notifications on the message bus, as Ironic sends them.

``[DEFAULT]notification_level`` unset (the default) leaves ``ON`` False:
every hook is then one attribute check and nothing else.  Set, ``setup``
builds an oslo.messaging ``Notifier`` on the notification transport
(``[oslo_messaging_notifications]transport_url``, else
``[DEFAULT]transport_url``) publishing to
``[DEFAULT]versioned_notifications_topics``.

The operation a notification reports never waits for the bus: ``emit``
puts the finished message on a bounded queue that one daemon thread
sends, in order.  A send that fails is logged and dropped; a full queue
(the bus down for long) drops new notifications with a warning.  As in
Ironic, notifications may be lost; consumers must not count on each.

Sensor data (``[sensor_data]send_sensor_data``) goes through a sender of
its own, as Ironic's unversioned "sensors" notifier: on the same
transport, to ``[oslo_messaging_notifications]topics`` (by default
``notifications``, where ironic-prometheus-exporter and Ceilometer
listen), whatever ``notification_level`` says.
"""

import atexit
import queue
import sys
import threading
import time
from typing import Any

from oslo_log import log

LOG = log.getLogger(__name__)

# levels in increasing order of severity (Ironic's)
LEVELS = ('debug', 'info', 'warning', 'error', 'critical')
_RANK = {name: i for i, name in enumerate(LEVELS)}

API = 'ironic-api'
CONDUCTOR = 'ironic-conductor'

QUEUE_SIZE = 10000
DRAIN_SECONDS = 5.0

# the one attribute every hook checks
ON = False

_min_rank = len(LEVELS)
_host = 'localhost'
_sender: '_Sender | None' = None
_sensor_sender: '_Sender | None' = None


def wanted(level: str) -> bool:
    """Whether a notification at ``level`` is sent (notifications on and
    ``level`` at or above ``[DEFAULT]notification_level``)."""
    return ON and _RANK[level] >= _min_rank


class _Sender:
    """One thread sending queued notifications through ``notifier``."""

    def __init__(self, notifier) -> None:
        self.notifier = notifier
        self.queue: queue.Queue = queue.Queue(QUEUE_SIZE)
        self.dropped = 0
        self._publishers: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._loop, daemon=True,
                                       name='notifications')
        self.thread.start()

    def put(self, item: tuple) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                LOG.warning('Notification %s dropped: %d notifications '
                            'wait for the message bus already (%d dropped '
                            'so far)', item[1], QUEUE_SIZE, self.dropped)

    def _publisher(self, publisher_id: str):
        pub = self._publishers.get(publisher_id)
        if pub is None:
            pub = self._publishers[publisher_id] = self.notifier.prepare(
                publisher_id=publisher_id)
        return pub

    def _loop(self) -> None:
        while True:
            item = self.queue.get()
            try:
                self._send(*item)
            finally:
                self.queue.task_done()

    def _send(self, publisher_id: str, event_type: str, level: str,
              payload: dict, ctxt: dict) -> None:
        try:
            getattr(self._publisher(publisher_id), level)(
                ctxt, event_type, payload)
        except Exception as e:
            LOG.warning('Could not send notification %s from %s: %s',
                        event_type, publisher_id, e)

    def drain(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the queue to empty."""
        deadline = time.monotonic() + timeout
        while self.queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True


def setup(conf, notifier=None) -> None:
    """Turn notifications on if ``[DEFAULT]notification_level`` is set,
    and sensor data if ``[sensor_data]send_sensor_data`` is.
    ``notifier``: an oslo.messaging Notifier to use for both (tests); by
    default they are built from the configuration."""
    global ON, _min_rank, _host, _sender
    _host = conf.host
    if conf.sensor_data.send_sensor_data:
        _setup_sensors(conf, notifier)
    level = conf.notification_level
    if level is None:
        ON = False
        return
    if notifier is None:
        notifier = _notifier(conf)
    _min_rank = _RANK[level]
    _sender = _sender_for(_sender, notifier)
    ON = True
    LOG.info('Versioned notifications at level %s and above go to '
             'topic(s) %s', level,
             ', '.join(conf.versioned_notifications_topics))


def _sender_for(sender: '_Sender | None', notifier) -> _Sender:
    """``sender`` sending with ``notifier`` from now on (a new one,
    drained at exit, the first time)."""
    if sender is None:
        sender = _Sender(notifier)
        atexit.register(sender.drain, DRAIN_SECONDS)
    else:
        sender.notifier = notifier
        sender._publishers.clear()
    return sender


def _setup_sensors(conf, notifier=None) -> None:
    global _sensor_sender
    if notifier is None:
        notifier = _notifier(conf, sensors=True)
    _sensor_sender = _sender_for(_sensor_sender, notifier)
    group = getattr(conf, 'oslo_messaging_notifications', None)
    LOG.info('Sensor data notifications go to topic(s) %s',
             ', '.join(getattr(group, 'topics', None) or
                       ['notifications']))


def _notifier(conf, sensors: bool = False):
    if 'eventlet' in sys.modules and sys.modules['eventlet'] is None:
        # baremetal-server keeps eventlet out (cmd/server.py); oslo.messaging
        # needs it importable (through oslo.service), not monkey-patched:
        # with notifications on, the server pays its import (~20 MiB)
        del sys.modules['eventlet']
    import oslo_messaging as messaging
    transport = messaging.get_notification_transport(conf)
    # Ironic also needs [oslo_messaging_notifications]driver set; here
    # setting notification_level is enough (an explicit driver, e.g.
    # "log" or "noop", is honoured)
    configured = conf.oslo_messaging_notifications.driver
    return messaging.Notifier(
        transport, driver=None if configured else 'messagingv2',
        topics=(None if sensors  # [oslo_messaging_notifications]topics
                else conf.versioned_notifications_topics))


def reset() -> None:
    """Notifications and sensor data off (tests)."""
    global ON, _min_rank, _sensor_sender
    ON = False
    _min_rank = len(LEVELS)
    _sensor_sender = None


def drain(timeout: float = DRAIN_SECONDS) -> bool:
    """Wait for queued notifications to be sent (tests, shutdown)."""
    return all(s.drain(timeout) for s in (_sender, _sensor_sender)
               if s is not None)


def sensors_on() -> bool:
    """Whether sensor data notifications are set up."""
    return _sensor_sender is not None


def emit_sensors(event_type: str, payload: dict, context=None) -> None:
    """Queue one sensor data notification (at INFO, from
    ``ironic-conductor.<[DEFAULT]host>``); never raises."""
    if _sensor_sender is None:
        return
    try:
        ctxt = context.to_dict() if hasattr(context, 'to_dict') else {}
    except Exception:
        ctxt = {}
    _sensor_sender.put(('%s.%s' % (CONDUCTOR, _host), event_type, 'info',
                        payload, ctxt))


def emit(service: str, event_type: str, level: str, payload: dict,
         context=None) -> None:
    """Queue one notification; never raises.  ``service``: API or
    CONDUCTOR (the publisher is ``<service>.<[DEFAULT]host>``)."""
    if not wanted(level) or _sender is None:
        return
    try:
        ctxt = context.to_dict() if hasattr(context, 'to_dict') else {}
    except Exception:
        ctxt = {}
    _sender.put(('%s.%s' % (service, _host), event_type, level, payload,
                 ctxt))
