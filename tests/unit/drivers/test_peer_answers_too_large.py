"""A peer that answers more than any Redfish resource or agent answer
holds (an endless stream, a gzip bomb) is an error naming it, not the
conductor's memory: at most ``direct_http.MAX_BODY`` bytes are read, as
sent and once decoded (1 MiB here instead of 256 MiB).  A BMC through
the API (verification of a node whose System is 2 MiB, 2 MiB once its
gzip is undone, or a redirect to 2 MiB, read through ``requests``); the
agent's client's exchange with a server that sends 2 MiB."""

import gzip
import http.server
import threading

import pytest
import requests.exceptions as rx

from baremetal.drivers.modules import direct_http
from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
api = odd_systems.api
BIG = b'{"Id": "' + b'x' * (2 << 20) + b'"}'


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(direct_http, 'MAX_BODY', 1 << 20)


@pytest.mark.parametrize('api', ['sqlite'], indirect=True)
def test_a_bmc_answering_too_much_fails_verification_naming_it(api, small):
    fleet = fleet_doubles.RedfishFleet(4)
    try:
        fleet.systems['sys-00000']['odd'] = lambda doc: BIG
        fleet.systems['sys-00001']['odd'] = lambda doc: (
            200, gzip.compress(BIG), (('Content-Encoding', 'gzip'),))
        # a redirect within the BMC (followed by requests, not the
        # conductor's own HTTP) to 2 MiB
        fleet.systems['sys-00002']['odd'] = lambda doc: (
            302, b'', (('Location', doc['Bios']['@odata.id']),))
        fleet.systems['sys-00002']['odd_bios'] = lambda doc: BIG
        nodes = []
        for sid in sorted(fleet.systems):
            node = api.create_node(driver='redfish', name=sid, driver_info={
                'redfish_address': fleet.address(sid),
                'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
                'redfish_username': 'admin',
                'redfish_password': 'password'})
            api.provision(node['uuid'], 'manage')
            nodes.append(node['uuid'])
        got = [odd_systems._settled(api, n) for n in nodes]
    finally:
        fleet.stop()
    for node, sid in zip(got[:3], ('sys-00000', 'sys-00001', 'sys-00002'),
                         strict=True):
        assert node['provision_state'] == 'enroll'
        assert 'the answer is larger than 1 MiB' in node['last_error'], \
            node['last_error']
        assert fleet.address(sid) in node['last_error']
    # a BMC answering as it should is not touched by the bound
    assert (got[3]['provision_state'], got[3]['last_error']) == \
        ('manageable', None)


def test_an_agent_answering_too_much_is_an_error(small):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers['Content-Length']))
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(BIG)))
            self.end_headers()
            self.wfile.write(BIG)

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = 'http://127.0.0.1:%d/v1/commands/' % server.server_address[1]
        with pytest.raises(rx.ContentDecodingError, match='larger than 1 MiB'):
            direct_http.exchange('POST', url, {}, b'{}', False, 10)
    finally:
        server.shutdown()
        server.server_close()
