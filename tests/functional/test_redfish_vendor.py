"""The redfish vendor interface's event subscriptions, over the REST API
(vendor passthru) against the sushy-tools emulator with the test
EventService (tests/bmc/redfish_events.py): a subscription made through
the API receives the event the BMC then sends."""

import http.server
import json
import queue
import threading
import uuid

import pytest

from tests.bmc import fixtures
from tests.functional import bmc_server as bs

SYSTEM = {'uuid': str(uuid.uuid4()), 'name': 'sys-events',
          'power_state': 'Off', 'external_notifier': False}
SECRET = 'receiver-token-%s' % uuid.uuid4().hex[:8]


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    svc = bs.start(tmp_path_factory.mktemp('redfish-vendor'))
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def bmc(tmp_path_factory):
    b = fixtures.RedfishBMC(tmp_path_factory.mktemp('emulator'), [SYSTEM])
    yield b
    b.stop()


@pytest.fixture
def receiver():
    """An HTTP server on loopback that keeps what is POSTed to it."""
    got: queue.Queue = queue.Queue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers['Content-Length']))
            got.put((dict(self.headers), json.loads(body)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d/events' % srv.server_address[1], got
    srv.shutdown()
    srv.server_close()
    thread.join(10)


def _passthru(server, node, method, http_method, body=None):
    return bs.http(server, http_method, '/v1/nodes/%s/vendor_passthru?'
                   'method=%s' % (node, method), body)


def test_subscription_made_through_the_api_receives_events(
        server, bmc, receiver):
    url, got = receiver
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(SYSTEM['uuid']))
    assert node['vendor_interface'] == 'redfish'
    node = node['uuid']
    _, methods = bs.http(server, 'GET',
                         '/v1/nodes/%s/vendor_passthru/methods' % node)
    assert {m: methods[m]['http_methods'] for m in methods} == {
        'create_subscription': ['POST'], 'delete_subscription': ['DELETE'],
        'get_all_subscriptions': ['GET'], 'get_subscription': ['GET']}

    status, sub = _passthru(server, node, 'create_subscription', 'POST', {
        'Destination': url, 'EventTypes': ['Alert'], 'Context': 'rack-7',
        'HttpHeaders': [{'X-Receiver-Token': SECRET}]})
    assert status == 200, sub
    assert sub == {'Id': sub['Id'], 'Destination': url,
                   'EventTypes': ['Alert'], 'Context': 'rack-7',
                   'Protocol': 'Redfish'}
    # the BMC holds it
    on_bmc = bmc.get('/redfish/v1/EventService/Subscriptions/%s'
                     % sub['Id'])
    assert on_bmc['Destination'] == url

    status, one = _passthru(server, node, 'get_subscription', 'GET',
                            {'id': sub['Id']})
    assert status == 200 and one == sub, one
    status, all_ = _passthru(server, node, 'get_all_subscriptions', 'GET')
    assert status == 200, all_
    assert [m['@odata.id'].rsplit('/', 1)[-1] for m in all_['Members']] \
        == [sub['Id']]
    assert SECRET not in json.dumps([one, all_])

    # the BMC sends an event: it reaches the destination, with the
    # subscription's context and headers
    assert bmc.post('/redfish/v1/EventService/Actions/'
                    'EventService.SubmitTestEvent', {
                        'EventType': 'Alert', 'EventId': 'e-1',
                        'Message': 'fan 2 failed', 'Severity': 'Critical',
                        'MessageId': 'Base.1.0.GeneralError'}) == 204
    headers, event = got.get(timeout=10)
    assert headers['X-Receiver-Token'] == SECRET
    assert event['Context'] == 'rack-7'
    assert event['Events'][0]['Message'] == 'fan 2 failed'
    assert event['Events'][0]['EventType'] == 'Alert'

    status, body = _passthru(server, node, 'delete_subscription', 'DELETE',
                             {'id': sub['Id']})
    assert status == 204, body  # the API's answer to a method's None
    _, all_ = _passthru(server, node, 'get_all_subscriptions', 'GET')
    assert all_['Members'] == []
    # deleting it again: not found, as Ironic answers
    status, body = _passthru(server, node, 'delete_subscription', 'DELETE',
                             {'id': sub['Id']})
    assert status == 404, body
    assert 'subscription %s' % sub['Id'] in body['error_message']
    # nothing is sent once it is gone
    bmc.post('/redfish/v1/EventService/Actions/'
             'EventService.SubmitTestEvent', {'EventType': 'Alert'})
    assert got.empty()
    assert bs.node(server, node)['last_error'] is None


@pytest.mark.parametrize('body, message', [
    ({'Destination': 'no scheme or host'},
     'Destination no scheme or host is not a valid URI'),
    ({}, 'Destination None is not a valid URI'),
    ({'Destination': 'https://x.example/e', 'EventTypes': ['Bogus']},
     "EventTypes ['Bogus'] is not a valid value, allowed values "),
    ({'Destination': 'https://x.example/e', 'Context': 7},
     'Context 7 is not a valid string'),
    ({'Destination': 'https://x.example/e', 'Protocol': ['SNMP']},
     "Protocol ['SNMP'] is not a string"),
    ({'Destination': 'https://x.example/e', 'HttpHeaders': SECRET},
     'HttpHeaders (a str) is not a list of headers'),
])
def test_bad_subscription_is_a_400_and_nothing_is_created(
        server, bmc, body, message):
    node = bs.create(server, driver='redfish',
                     driver_info=bmc.driver_info(SYSTEM['uuid']))['uuid']
    status, err = _passthru(server, node, 'create_subscription', 'POST',
                            body)
    assert status == 400, err
    assert message in err['error_message']
    assert SECRET not in err['error_message']
    assert bmc.get('/redfish/v1/EventService/Subscriptions')['Members'] \
        == []
    for method, http_method in (('get_subscription', 'GET'),
                                ('delete_subscription', 'DELETE')):
        status, err = _passthru(server, node, method, http_method, {})
        assert status == 400 and "id can't be None" in \
            err['error_message'], err
    assert bs.node(server, node)['last_error'] is None
