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
    """Turn notifications on if ``[DEFAULT]notification_level`` is set.
    ``notifier``: an oslo.messaging Notifier to use (tests); by default
    one is built from the configuration."""
    global ON, _min_rank, _host, _sender
    level = conf.notification_level
    if level is None:
        ON = False
        return
    if notifier is None:
        notifier = _notifier(conf)
    _host = conf.host
    _min_rank = _RANK[level]
    if _sender is None:
        _sender = _Sender(notifier)
        atexit.register(_sender.drain, DRAIN_SECONDS)
    else:
        _sender.notifier = notifier
        _sender._publishers.clear()
    ON = True
    LOG.info('Versioned notifications at level %s and above go to '
             'topic(s) %s', level,
             ', '.join(conf.versioned_notifications_topics))


def _notifier(conf):
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
        topics=conf.versioned_notifications_topics)


def reset() -> None:
    """Notifications off (tests)."""
    global ON, _min_rank
    ON = False
    _min_rank = len(LEVELS)


def drain(timeout: float = DRAIN_SECONDS) -> bool:
    """Wait for queued notifications to be sent (tests, shutdown)."""
    return _sender.drain(timeout) if _sender is not None else True


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
