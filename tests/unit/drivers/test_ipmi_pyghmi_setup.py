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
