"""A BMC that links to another host: a System whose links (its BIOS, its
processors, its storage) name another host's URL, or a BMC that answers
a System's GET with a redirect to another host.  sushy sends a request
to whatever absolute URL a resource names, with the BMC's credentials
(basic: the password; session: the token): a BMC could make the
conductor read any address it reaches, and hand it the BMC's
credentials.

Each node is driven through the API (``manage``, inspection, the boot
device read) with basic and with session credentials.  Another host on
loopback (``Elsewhere``) records what reaches it: nothing may.  A link
elsewhere is asked at the BMC's own address instead (the BMC answers
its own resource there); a redirect elsewhere is not followed and the
request fails naming the BMC and where it pointed."""

import http.server
import json
import threading

import pytest

from tests import fleet as test_fleet
from tests.unit.drivers import test_redfish_odd_systems as odd_systems

fleet_doubles = test_fleet.doubles()
api = odd_systems.api


class Elsewhere:
    """Another host's HTTP server (on 127.0.0.1; the BMCs are on
    fleet_doubles.BMC_HOST): answers 200 and an empty object to
    everything, and records each request."""

    def __init__(self) -> None:
        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                seen.append((self.command, self.path, dict(self.headers)))
                body = json.dumps({}).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            do_GET = do_POST = do_PATCH = do_DELETE = _any

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever,
                         daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _links_elsewhere(url):
    """The System's links to its BIOS, processors and storage on the
    host at ``url`` (same paths)."""
    def odd(doc):
        for key in ('Bios', 'Processors', 'Storage'):
            doc[key] = {'@odata.id': url + doc[key]['@odata.id']}
        return doc
    return odd


def _redirect_elsewhere(url):
    """The System answered with a redirect to the host at ``url``."""
    def odd(doc):
        return 302, b'', (('Location', url + doc['@odata.id']),)
    return odd


@pytest.fixture
def elsewhere():
    e = Elsewhere()
    yield e
    e.stop()


@pytest.mark.parametrize('api', ['sqlite'], indirect=True)
@pytest.mark.parametrize('auth', ['basic', 'session'])
def test_links_and_redirects_to_another_host_are_not_followed(
        api, elsewhere, auth):
    fleet = fleet_doubles.RedfishFleet(2)
    try:
        fleet.systems['sys-00000'].update(
            storage=True, odd=_links_elsewhere(elsewhere.url))
        fleet.systems['sys-00001']['odd'] = _redirect_elsewhere(
            elsewhere.url)
        sweeps = {}
        for sid in ('sys-00000', 'sys-00001'):
            node = api.create_node(
                driver='redfish', name=sid, inspect_interface='redfish',
                bios_interface='redfish', driver_info={
                    'redfish_address': fleet.address(sid),
                    'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
                    'redfish_username': 'admin',
                    'redfish_password': 'password',
                    'redfish_auth_type': auth})
            sweep = sweeps[sid] = odd_systems.Sweep(api, node['uuid'])
            provision = '/v1/nodes/%s/states/provision'
            if sweep.call('PUT', provision, {'target': 'manage'})[0] == 202:
                sweep.settle()
            if sweep.call('PUT', provision, {'target': 'inspect'})[0] == 202:
                sweep.settle()
            sweep.call('GET', odd_systems.BOOT_DEVICE)
            sweep.call('GET', '/v1/nodes/%s/bios', version='1.40')
    finally:
        fleet.stop()
    # nothing reached the other host, credentials or not
    assert elsewhere.seen == []
    # the links were asked at the BMC's own address: the BMC's answers
    # made the node (its BIOS, processors, storage read)
    linked = api.node(sweeps['sys-00000'].uuid)
    assert (linked['provision_state'], linked['last_error']) == \
        ('manageable', None)
    assert linked['properties']['cpus'] == fleet_doubles.CORES
    status, bios, _ = api.request(
        'GET', '/v1/nodes/%s/bios' % linked['uuid'], version='1.40')
    assert {s['name']: s['value'] for s in bios['bios']} == \
        fleet_doubles.BIOS
    # the redirect was not followed: verification failed naming the BMC
    # and where it pointed
    redirected = api.node(sweeps['sys-00001'].uuid)
    errors = ' '.join(sweeps['sys-00001'].errors)
    assert 'redirected to %s' % elsewhere.url in errors, \
        (redirected['provision_state'], sweeps['sys-00001'].errors)
    assert 'not followed' in errors
    assert odd_systems.problems(api, 'redirect', sweeps['sys-00001']) == []
