"""A stand-in for oslo.messaging's Notifier that records what the
service sends (unit tests); the functional tests use RabbitMQ."""

import pytest

from baremetal import conf as baremetal_conf
from baremetal.common import notifications
from tests import harness


class Recorder:
    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.fail = False

    def prepare(self, publisher_id: str) -> '_Publisher':
        return _Publisher(self, publisher_id)

    def events(self, uuid: str | None = None) -> list[str]:
        """Event types sent so far (about ``uuid`` only, if given)."""
        notifications.drain()
        return [m['event_type'] for m in self.sent
                if uuid is None or
                m['payload']['ironic_object.data'].get('uuid') == uuid]

    def clear(self) -> None:
        notifications.drain()
        self.sent.clear()

    def messages(self) -> list[dict]:
        notifications.drain()
        return list(self.sent)

    def last(self, event_type: str) -> dict:
        notifications.drain()
        return [m for m in self.sent if m['event_type'] == event_type][-1]


class _Publisher:
    def __init__(self, rec: Recorder, publisher_id: str) -> None:
        self.rec, self.publisher_id = rec, publisher_id

    def __getattr__(self, level: str):
        def send(ctxt, event_type, payload):
            if self.rec.fail:
                raise ConnectionError('the bus is down')
            self.rec.sent.append({
                'publisher_id': self.publisher_id, 'priority': level,
                'event_type': event_type, 'payload': payload})
        return send


@pytest.fixture
def notified(tmp_path):
    """(harness, recorder) with notification_level = info."""
    h = harness.Harness(tmp_path, overrides={'notification_level': 'info'})
    rec = Recorder()
    notifications.setup(baremetal_conf.CONF, notifier=rec)
    yield h, rec
    notifications.drain()
    notifications.reset()
    h.close()
