"""What the ipmi client changes in pyghmi's sessions
(drivers/modules/ipmi/client.py): the select() stand-in, with
select.select's answers without its limit of file descriptors below
1024, and one lock for pyghmi's two session tables."""

import socket
import time

import pytest

from baremetal.drivers.modules.ipmi import client


def test_reports_the_readable_socket_only():
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    try:
        b.send(b'x')
        r, w, x = client._PollSelect.select([a, c], [], [], 1.0)
        assert (r, w, x) == ([a], [], [])
        r, w, _ = client._PollSelect.select([c], [c], [], 1.0)
        assert (r, w) == ([], [c])
    finally:
        for s in (a, b, c, d):
            s.close()


def test_waits_for_the_timeout_when_nothing_is_ready():
    a, b = socket.socketpair()
    try:
        t = time.monotonic()
        assert client._PollSelect.select([a], (), (), 0.05) == ([], [], [])
        assert time.monotonic() - t >= 0.04
    finally:
        a.close()
        b.close()


def test_takes_file_descriptors_above_1023():
    held = []
    try:
        while not held or held[-1].fileno() < 1030:
            held.append(socket.socket())
    except OSError:
        pytest.skip('this process may not open 1,030 files')
    a, b = socket.socketpair()
    held += [a, b]
    try:
        assert a.fileno() >= 1024
        b.send(b'x')
        assert client._PollSelect.select([a], (), (), 1.0)[0] == [a]
    finally:
        for s in held:
            s.close()


def test_pyghmi_sessions_wait_with_it():
    client._pyghmi()
    from pyghmi.ipmi.private import session
    assert session.select is client._PollSelect


def test_pyghmi_takes_one_lock_for_its_two_session_tables():
    """pyghmi takes its keepalive and waiting tables' locks in either
    order (a request timing out: waiting, then keepalive; a login packet
    sent: keepalive, then waiting): two threads deadlocked a conductor's
    IPMI for good.  After the client's set-up both names are one lock,
    which cannot be taken in two orders."""
    client._pyghmi()
    from pyghmi.ipmi.private import session
    assert session.WAITING_SESSIONS is session.KEEPALIVE_SESSIONS



class _SenderBetween(socket.socket):
    """A socket on which a sender's ``setblocking(True)`` always lands
    right after the I/O thread's ``setblocking(False)``: the interleaving
    that happened now and then under many threads."""

    def setblocking(self, flag):
        super().setblocking(flag)
        if not flag:
            super().setblocking(True)


def test_pyghmi_reads_without_waiting_whatever_mode_a_sender_left():
    """pyghmi's I/O thread switched a shared socket to non-blocking and
    then read, while a thread sending on it switched it back to
    blocking: in between, the I/O thread's read waited for good.  After
    the client's set-up a read never waits."""
    import threading
    client._pyghmi()
    from pyghmi.ipmi.private import session
    a = _SenderBetween(socket.AF_INET, socket.SOCK_DGRAM)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(('127.0.0.1', 0))
    try:
        got = []
        reader = threading.Thread(
            target=lambda: got.append(session._io_recvfrom(a, 3000)),
            daemon=True)
        reader.start()
        reader.join(2.0)
        if reader.is_alive():
            b.sendto(b'wake', a.getsockname())    # let the thread end
            pytest.fail('the read waited for a packet')
        assert got == [None]
        b.sendto(b'ping', a.getsockname())
        time.sleep(0.05)
        assert session._io_recvfrom(a, 3000)[0] == b'ping'
    finally:
        a.close()
        b.close()
