"""A peer that trickles its answer - a byte now and then, each well
within the read timeout, which a timeout per receive allows for ever -
is cut off at the request's timeout ([redfish]connection_timeout,
[agent]command_timeout: "seconds one request may take"), its headers or
its body.  A BMC through the API (verification of a node whose BMC
trickles, 1 s timeout), and the agent client's exchange; each peer
(tests/bmc/hostile.py's ``trickle`` and ``trickle-head``) sends a byte
every 0.2 s and would take a minute."""

import time

import pytest
import requests.exceptions as rx

from baremetal.drivers.modules import direct_http
from tests.bmc import hostile
from tests.unit.drivers import test_redfish_busy_bmc as busy_bmc


@pytest.fixture(params=['trickle', 'trickle-head'])
def trickle(request):
    """A peer answering a byte every 0.2 s: its body after its headers,
    or its header lines (tests/bmc/hostile.py)."""
    t = hostile.TCPFault(request.param)
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
    h = busy_bmc.redfish_service(tmp_path, connection_attempts=1,
                                 connection_retry_interval=0,
                                 connection_timeout=1)
    yield h
    h.close()


@pytest.mark.parametrize('mode', ['trickle', 'trickle-head',
                                  'trickle-redirect', 'trickle-cookie'])
def test_a_bmc_trickling_fails_verification_at_its_timeout(api, mode):
    """Also after a redirect, or once the BMC set a cookie (requests the
    conductor sent through requests, whose timeout is per receive)."""
    trickle = hostile.TCPFault(mode)
    try:
        _verify_trickling(api, trickle)
    finally:
        trickle.stop()


def _verify_trickling(api, trickle) -> None:
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
