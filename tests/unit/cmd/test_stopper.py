"""The stop signal is handled whichever thread the kernel gives it to."""

import faulthandler
import signal
import threading
import time

import pytest

from baremetal.cmd import common


@pytest.fixture
def stopper(monkeypatch):
    saved = {s: signal.getsignal(s)
             for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    monkeypatch.setattr(common.Stopper, 'poll', 0.05)
    try:
        yield common.Stopper()
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
        faulthandler.unregister(signal.SIGUSR2)


def _signal_from_a_thread(sig):
    """Deliver ``sig`` to a thread other than the main one, as the
    kernel may for a signal sent to the process, once the main thread
    waits (had it not begun to, the wait would find the event set)."""
    def send():
        time.sleep(0.2)
        signal.pthread_kill(threading.get_ident(), sig)

    threading.Thread(target=send, daemon=True).start()


def test_sigterm_taken_by_another_thread_stops_the_wait(stopper):
    # without the poll the main thread would sleep until the rescue
    rescued = []

    def rescue():
        rescued.append(True)
        stopper.event.set()

    timer = threading.Timer(10, rescue)
    timer.start()
    try:
        _signal_from_a_thread(signal.SIGTERM)
        stopper.wait()
    finally:
        timer.cancel()
    assert not rescued
