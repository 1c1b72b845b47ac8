"""A peer that trickles its answer - a byte now and then, each well
within the read timeout, which a timeout per receive allows for ever -
is cut off at the request's timeout ([redfish]connection_timeout,
[agent]command_timeout: "seconds one request may take"), its headers or
its body.  A BMC through the API (verification of a node whose BMC
trickles, 1 s timeout), and the agent client's exchange; each peer
sends a byte every 0.2 s and would take a minute."""

import socket
import threading
import time

import pytest
import requests.exceptions as rx

from baremetal.drivers.modules import direct_http
from tests import harness

HEAD = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n'


class Trickle:
    """A server on loopback answering each request slowly: ``what`` is
    ``body`` (its headers at once, then a body of 300 bytes a byte at a
    time) or ``headers`` (header lines a byte at a time)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.sock = socket.create_server(('127.0.0.1', 0))
        self.url = 'http://127.0.0.1:%d' % self.sock.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,),
                             daemon=True).start()

    def _answer(self, conn) -> None:
        try:
            conn.recv(65536)
            if self.what == 'body':
                conn.sendall(HEAD + b'Content-Length: 300\r\n\r\n')
                drip = b'{' + b' ' * 298 + b'}'
            else:
                drip = b'X-Slow: ' + b'a' * 290 + b'\r\n'
            for byte in drip:
                if self.stopped.wait(0.2):
                    break
                conn.sendall(bytes([byte]))
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


@pytest.fixture(params=['body', 'headers'])
def trickle(request):
    t = Trickle(request.param)
    yield t
    t.stop()


def test_an_agent_trickling_is_cut_off_at_its_timeout(trickle):
    t0 = time.monotonic()
    # (as requests raises them: a read timeout for the headers, a
    # broken connection for the body)
    with pytest.raises((rx.ReadTimeout, rx.ConnectionError),
                       match='did not arrive within 1 seconds'):
        direct_http.exchange('POST', trickle.url + '/v1/commands/', {},
                             b'{}', False, 1)
    assert time.monotonic() - t0 < 3


@pytest.fixture
def api(tmp_path):
    h = harness.Harness(tmp_path, overrides={
        'enabled_hardware_types': ['redfish'],
        'enabled_power_interfaces': ['redfish'],
        'enabled_management_interfaces': ['redfish'],
        'enabled_boot_interfaces': ['ipxe'],
        'enabled_deploy_interfaces': ['direct'],
        'redfish.connection_attempts': 1,
        'redfish.connection_retry_interval': 0,
        'redfish.connection_timeout': 1})
    yield h
    h.close()


def test_a_bmc_trickling_fails_verification_at_its_timeout(api, trickle):
    node = api.create_node(driver='redfish', driver_info={
        'redfish_address': trickle.url,
        'redfish_system_id': '/redfish/v1/Systems/1',
        'redfish_username': 'admin', 'redfish_password': 'password'})
    t0 = time.monotonic()
    api.provision(node['uuid'], 'manage')
    got = api.wait_for(node['uuid'], 'enroll', timeout=30)
    assert time.monotonic() - t0 < 10
    assert 'did not arrive within 1 seconds' in got['last_error'], \
        got['last_error']
    assert trickle.url in got['last_error']
