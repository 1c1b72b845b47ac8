"""The Redfish client against BMCs that misbehave on the wire
(tests/bmc/hostile.py): every failure is a baremetal error naming the
BMC, and a request is tried [redfish]connection_attempts times, not
that number squared."""

import json
import types

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import redfish as redfish_conf
from baremetal.drivers.modules.redfish import client
from tests import fleet as test_fleet
from tests import tls
from tests.bmc import hostile


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    redfish_conf.register_opts(c)
    c([])
    c.set_override('connection_attempts', 2, group='redfish')
    c.set_override('connection_retry_interval', 0, group='redfish')
    c.set_override('connection_timeout', 5, group='redfish')
    return c


@pytest.fixture
def bmc():
    fault = hostile.TCPFault('close')
    yield fault
    fault.stop()


def _node(url):
    return types.SimpleNamespace(uuid='n-1', driver_info={
        'redfish_address': url, 'redfish_system_id': '1',
        'redfish_username': 'u', 'redfish_password': 'hunter2',
        'redfish_auth_type': 'basic'})


@pytest.mark.parametrize('read', [client.get_system, client.system_fields])
@pytest.mark.parametrize('mode, error, words', [
    ('close', exception.RedfishConnectionError, 'cannot reach'),
    ('malformed', exception.RedfishConnectionError, 'cannot reach'),
    ('garbage', exception.RedfishError, 'something that is not JSON'),
    ('wrongjson', exception.RedfishError, 'not a Redfish resource'),
    # (was a RecursionError: a 500, the raw text in last_error)
    ('deepjson', exception.RedfishError, 'JSON nested too deeply'),
])
def test_a_misbehaving_bmc_is_an_error_naming_it(conf, bmc, mode, error,
                                                  words, read):
    bmc.mode = mode
    with pytest.raises(error) as e:
        read(_node(bmc.url), conf)
    text = str(e.value)
    assert words in text and bmc.url in text, text
    assert 'hunter2' not in text


@pytest.mark.parametrize('attempts', [1, 3])
def test_an_unreachable_bmc_is_tried_connection_attempts_times(
        conf, bmc, attempts):
    conf.set_override('connection_attempts', attempts, group='redfish')
    with pytest.raises(exception.RedfishConnectionError):
        client.get_system(_node(bmc.url), conf)
    assert bmc.accepted == attempts


def test_a_failed_connection_is_counted_for_metrics(conf, bmc):
    from baremetal.common import metrics

    def count(name):
        return metrics.REGISTRY.get_sample_value(name, {
            'protocol': 'redfish', 'operation': 'connect'}) or 0
    before = (count('baremetal_bmc_request_duration_seconds_count'),
              count('baremetal_bmc_request_errors_total'))
    with pytest.raises(exception.RedfishConnectionError):
        client.get_system(_node(bmc.url), conf)
    assert (count('baremetal_bmc_request_duration_seconds_count'),
            count('baremetal_bmc_request_errors_total')) == \
        (before[0] + 1, before[1] + 1)


class _Response:
    def __init__(self, doc):
        self.doc = doc
        self.content = b'x' if doc is not None else b''

    def json(self):
        return self.doc


class _Conn:
    """What client.py asks of a sushy connection for tasks and
    updates."""

    def __init__(self, processing=False, doc=None, systems=1):
        self.processing, self.doc = processing, doc
        self.systems = systems
        self.updates = []

    def get_task_monitor(self, uri):
        return types.SimpleNamespace(is_processing=self.processing,
                                     response=_Response(self.doc))

    def get_system_collection(self):
        return types.SimpleNamespace(members_identities=[
            '/redfish/v1/Systems/%d' % i for i in range(self.systems)])

    def get_update_service(self):
        conn = self

        class _Service:
            json = {'Actions': {'#UpdateService.SimpleUpdate': {
                'target': '/redfish/v1/UpdateService/Actions/'
                          'UpdateService.SimpleUpdate'}}}

            def simple_update(self, url, targets=None,
                              transfer_protocol=None):
                conn.updates.append((url, targets,
                                     transfer_protocol.value))
                return types.SimpleNamespace(task_monitor_uri='/tm/1')
        return _Service()


@pytest.mark.parametrize('processing, doc, outcome', [
    (True, None, None),
    (False, None, ''),
    (False, {'TaskState': 'Completed', 'TaskStatus': 'OK'}, ''),
    (False, {'TaskState': 'Running'}, None),
    (False, {'TaskState': 'Exception', 'Messages': [
        {'Message': 'disk 3 failed'}]}, 'disk 3 failed'),
    (False, {'TaskState': 'Killed'},
     'task /tm/1 ended in state Killed, status None'),
    (False, {'TaskState': 'Completed', 'TaskStatus': 'Critical'},
     'task /tm/1 ended in state Completed, status Critical'),
    # what the BMC sent, in part, whatever it is
    (False, {'TaskState': 'Exception', 'Messages': [
        {'Message': 42}, 'oops', {'Message': 'm' * 5000 + '\x00'}]},
     '42; ' + 'm' * 297 + '...'),
    (False, {'TaskState': 'Exception', 'Messages': 5},
     'task /tm/1 ended in state Exception, status None'),
    (False, {'Id': '9', 'Name': 'a volume'}, ''),
])
def test_task_outcome(conf, monkeypatch, processing, doc, outcome):
    monkeypatch.setattr(client, '_connection',
                        lambda node, info, conf: _Conn(processing, doc))
    assert client.task_outcome(_node('http://bmc'), conf, '/tm/1') == \
        outcome


@pytest.mark.parametrize('systems, url, sent', [
    (1, 'https://f/bios.bin', ('https://f/bios.bin', None, 'HTTPS')),
    (2, 'http://f/bios.bin', ('http://f/bios.bin',
                              ['/redfish/v1/Systems/1'], 'HTTP')),
])
def test_simple_update_names_the_system_when_the_bmc_has_several(
        conf, monkeypatch, systems, url, sent):
    c = _Conn(systems=systems)
    monkeypatch.setattr(client, '_connection', lambda node, info, conf: c)
    assert client.simple_update(_node('http://bmc'), conf, url) == '/tm/1'
    assert c.updates == [sent]


@pytest.mark.parametrize('values, wanted', [
    (None, None), ([], None), (['Immediate', 'OnReset'], None),
    (['OnReset'], 'OnReset')])
def test_on_reset_only_when_the_collection_offers_nothing_else(values,
                                                               wanted):
    import sushy
    mapped = [sushy.ApplyTime(v) for v in values] if values else values
    collection = types.SimpleNamespace(
        operation_apply_time_support=types.SimpleNamespace(
            mapped_supported_values=mapped))
    got = client.on_reset_apply_time(collection)
    assert getattr(got, 'value', got) == wanted


def _fleet(**kw):
    return test_fleet.doubles().RedfishFleet(kw.pop('systems', 1), **kw)


def _fleet_task(fleet, conf, cache):
    """A task on the fleet's first system, ``bmc_read_cache`` ``cache``."""
    node = _node(fleet.address('sys-00000'))
    node.driver_info['redfish_system_id'] = 'sys-00000'
    return types.SimpleNamespace(
        node=node, conductor=types.SimpleNamespace(conf=conf),
        bmc_read_cache=cache)


def test_a_bmc_answering_server_errors_is_unavailable(conf):
    fleet = _fleet(error_rate=1.0)
    try:
        node = _node(fleet.address('sys-00000'))
        node.driver_info['redfish_system_id'] = 'sys-00000'
        with pytest.raises(exception.RedfishServerError) as e:
            client.get_system(node, conf)
        assert e.value.bmc_unavailable
        assert fleet.address('sys-00000') in str(e.value)
    finally:
        fleet.stop()


def test_the_power_and_health_reads_of_a_sync_are_one_get(conf):
    from baremetal.drivers.modules.redfish import management
    from baremetal.drivers.modules.redfish import power
    fleet = _fleet()
    try:
        task = _fleet_task(fleet, conf, None)
        pw, mgmt = power.RedfishPower(), management.RedfishManagement()
        pw.get_power_state(task)
        before = len(fleet.gets['sys-00000'])
        # outside the sync: each read asks the BMC
        assert (pw.get_power_state(task), mgmt.get_node_health(task)) == \
            ('power off', 'OK')
        assert len(fleet.gets['sys-00000']) == before + 2
        # in the sync (task.bmc_read_cache set): one GET for both
        task.bmc_read_cache = {}
        assert (pw.get_power_state(task), mgmt.get_node_health(task)) == \
            ('power off', 'OK')
        assert len(fleet.gets['sys-00000']) == before + 3
    finally:
        fleet.stop()


def test_a_stretch_of_reads_reads_the_system_once(conf):
    """Verification's reads (task.bmc_reads): sushy's System is read
    once and shared; the power read takes its fields from it."""
    from baremetal.drivers.modules.redfish import management
    from baremetal.drivers.modules.redfish import power
    fleet = _fleet()
    try:
        task = _fleet_task(fleet, conf, {})
        pw, mgmt = power.RedfishPower(), management.RedfishManagement()
        assert mgmt.get_boot_mode(task) == 'uefi'
        first = len(fleet.gets['sys-00000'])
        assert (mgmt.get_boot_mode(task), pw.get_power_state(task),
                mgmt.get_node_health(task)) == ('uefi', 'power off', 'OK')
        assert len(fleet.gets['sys-00000']) == first
        # outside it, each read asks again
        task.bmc_read_cache = None
        mgmt.get_boot_mode(task)
        pw.get_power_state(task)
        assert len(fleet.gets['sys-00000']) == first + 2
    finally:
        fleet.stop()


def _reads(conf, jobs):
    """Run each (read, node) job in a thread of its own, all at once."""
    import threading
    errors = []

    def run(read, node):
        try:
            read(node, conf)
        except Exception as e:     # reported below
            errors.append(e)
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors


def _fleet_node(fleet, sid, user='u'):
    node = _node(fleet.address(sid))
    node.driver_info.update(redfish_system_id=sid, redfish_username=user)
    return node


def test_a_bmc_gets_one_request_at_a_time_whoever_asks(conf):
    # two systems behind one BMC, read at once through three
    # connections (another user's credentials make another): a task's
    # request and the power sync's read of a neighbour wait in turn
    fleet = _fleet(systems=2, per_bmc=2, latency_ms=(40.0, 40.0))
    try:
        nodes = [_fleet_node(fleet, 'sys-00000'),
                 _fleet_node(fleet, 'sys-00001'),
                 _fleet_node(fleet, 'sys-00001', user='other')]
        _reads(conf, [(read, n) for n in nodes for read in
                      (client.system_fields, client.get_system)] * 2)
        (port, _), = fleet.bmcs
        assert len(fleet.gets['sys-00000']) >= 4
        assert fleet.max_busy[port] == 1, fleet.max_busy
    finally:
        fleet.stop()


def test_bmcs_are_not_held_up_by_each_other(conf):
    fleet = _fleet(systems=3, per_bmc=1, latency_ms=(150.0, 150.0))
    try:
        _reads(conf, [(client.system_fields, _fleet_node(fleet, sid))
                      for sid in ('sys-00000', 'sys-00001', 'sys-00002')]
               * 2)
        assert fleet.max_busy_total >= 2, fleet.max_busy_total
        assert set(fleet.max_busy.values()) == {1}, fleet.max_busy
    finally:
        fleet.stop()


def test_a_request_that_waits_too_long_for_its_bmc_is_an_error(conf):
    conf.set_override('connection_timeout', 1, group='redfish')
    conf.set_override('connection_attempts', 1, group='redfish')
    fleet = _fleet()
    try:
        node = _fleet_node(fleet, 'sys-00000')
        client.forget(client.parse(node, conf))
        client.system_fields(node, conf)
        from baremetal.drivers.modules import bmc_gates
        gate = bmc_gates.gate(client.endpoint(node.driver_info))
        with gate.lock:     # another request in flight, never answered
            with pytest.raises(exception.RedfishConnectionError) as e:
                client.system_fields(node, conf)
        text = str(e.value)
        assert 'still busy with an earlier request' in text, text
        assert fleet.address('sys-00000') in text, text
        # the gate is open again: the next read goes through
        assert client.system_fields(node, conf)['Id'] == 'sys-00000'
    finally:
        client.forget(client.parse(node, conf))
        fleet.stop()


@pytest.mark.parametrize('address, key', [
    ('http://10.0.0.1:8000', ('redfish', 'http', '10.0.0.1', 8000)),
    ('HTTPS://Bmc.Example:443/', ('redfish', 'https', 'bmc.example', 443)),
    ('bmc.example', ('redfish', 'https', 'bmc.example', 443)),
    ('http://[fd00::1]', ('redfish', 'http', 'fd00::1', 80)),
    ('http://h:notaport', None), ('', None), (None, None), (7, None),
])
def test_the_bmc_endpoint_of_a_node(address, key):
    assert client.endpoint({'redfish_address': address}) == key


def test_systems_behind_one_address_share_their_bmc():
    a = client.endpoint({'redfish_address': 'http://h:8000',
                         'redfish_system_id': '/redfish/v1/Systems/1'})
    b = client.endpoint({'redfish_address': 'http://h:8000/',
                         'redfish_system_id': '/redfish/v1/Systems/2'})
    assert a == b



class _Recorder:
    """A loopback HTTP(S) server that answers every GET with a
    Redfish-like document (``docs[path]``, else ``system``, once set,
    for the paths of systems) and records the request lines: as a proxy
    it sees absolute URLs.  A POST is recorded in ``posts`` (path, JSON
    body) and answered 204."""

    def __init__(self, tls=None):
        import http.server
        import threading
        seen = self.seen = []
        posts = self.posts = []
        self.system = None
        self.docs = {}
        owner = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                posts.append((self.path,
                              json.loads(self.rfile.read(length) or 'null')))
                self.send_response(204)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def do_GET(self):
                seen.append(self.path)
                doc = {
                    '@odata.id': '/redfish/v1/', 'Id': '1', 'Name': 'n',
                    'RedfishVersion': '1.6.0', 'PowerState': 'On',
                    'Systems': {'@odata.id': '/redfish/v1/Systems'}}
                if self.path in owner.docs:
                    doc = owner.docs[self.path]
                elif owner.system is not None and '/Systems/' in self.path:
                    doc = owner.system
                body = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        if tls is not None:
            self.srv.socket = tls.wrap_socket(self.srv.socket,
                                              server_side=True)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, args=(0.05,),
                         daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def recorders():
    made = []
    yield lambda tls=None: made.append(_Recorder(tls)) or made[-1]
    for r in made:
        r.stop()


@pytest.fixture
def fresh(conf):
    """Nodes whose cached connections are dropped before and after."""
    made = []

    def node(url):
        n = _node(url)
        client.forget(client.parse(n, conf))
        made.append(n)
        return n
    yield node
    for n in made:
        client.forget(client.parse(n, conf))


# requests reads the environment once per connection now, not at every
# request (client._read_environment_once): what it names still applies


def test_proxy_from_the_environment_is_used(conf, recorders, fresh,
                                            monkeypatch):
    proxy = recorders()
    monkeypatch.setenv('http_proxy', 'http://127.0.0.1:%d' % proxy.port)
    monkeypatch.delenv('no_proxy', raising=False)
    monkeypatch.delenv('NO_PROXY', raising=False)
    system = client.get_system(fresh('http://bmc.invalid:8000'), conf)
    assert system.power_state.value == 'On'
    assert 'http://bmc.invalid:8000/redfish/v1/Systems/1' in proxy.seen


def test_no_proxy_from_the_environment_is_honoured(conf, recorders, fresh,
                                                   monkeypatch):
    proxy, bmc = recorders(), recorders()
    monkeypatch.setenv('http_proxy', 'http://127.0.0.1:%d' % proxy.port)
    monkeypatch.setenv('no_proxy', '127.0.0.1')
    client.get_system(fresh('http://127.0.0.1:%d' % bmc.port), conf)
    assert proxy.seen == []
    assert '/redfish/v1/Systems/1' in bmc.seen


def test_ca_bundle_from_the_environment_is_used(conf, recorders, fresh,
                                                monkeypatch, tmp_path):
    ctx, cert = tls.server_context(tmp_path, 'bmc')
    bmc = recorders(ctx)
    for name in ('http_proxy', 'https_proxy', 'HTTPS_PROXY', 'CURL_CA_BUNDLE'):
        monkeypatch.delenv(name, raising=False)
    url = 'https://127.0.0.1:%d' % bmc.port
    monkeypatch.delenv('REQUESTS_CA_BUNDLE', raising=False)
    with pytest.raises(exception.RedfishError):
        client.get_system(fresh(url), conf)
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', cert)
    system = client.get_system(fresh(url), conf)
    assert system.power_state.value == 'On'


def test_system_fields_is_the_systems_json_in_one_get(conf, recorders,
                                                      fresh):
    bmc = recorders()
    bmc.system = {'@odata.id': '/redfish/v1/Systems/1', 'Id': '1',
                  'PowerState': 'Off', 'Status': {'Health': 'OK'}}
    node = fresh('http://127.0.0.1:%d' % bmc.port)
    node.driver_info['redfish_system_id'] = '/redfish/v1/Systems/1'
    client.system_fields(node, conf)            # connects (service root)
    del bmc.seen[:]
    fields = client.system_fields(node, conf)
    assert fields['PowerState'] == 'Off'
    assert fields['Status'] == {'Health': 'OK'}
    assert bmc.seen == ['/redfish/v1/Systems/1']


@pytest.mark.parametrize('body', [['a', 'list'], 'a string', 7])
def test_a_system_that_is_not_an_object_is_an_error_naming_the_bmc(
        conf, recorders, fresh, body):
    bmc = recorders()
    bmc.system = body
    url = 'http://127.0.0.1:%d' % bmc.port
    node = fresh(url)
    node.driver_info['redfish_system_id'] = '/redfish/v1/Systems/1'
    with pytest.raises(exception.RedfishError) as e:
        client.system_fields(node, conf)
    assert 'not a Redfish resource' in str(e.value)
    assert url in str(e.value)


def _session_node(url, sid):
    node = _node(url)
    node.driver_info.update(redfish_system_id=sid,
                            redfish_auth_type='session')
    return node


def test_a_bmc_that_stops_answering_is_not_sent_its_session_close(conf):
    # sushy closes a dropped connection's session (a DELETE) when the
    # garbage collector finalises it, in whatever thread that runs in: a
    # BMC that hangs would hold that thread (a power sync worker, the
    # heartbeat) for attempts x timeout. The session of a BMC that cannot
    # be reached is left to expire there.
    conf.set_override('connection_timeout', 1, group='redfish')
    fleet = _fleet()
    (port, _), = fleet.bmcs
    proxy = hostile.TCPFault('pass', target=(_fleet_host(), port))
    node = _session_node(proxy.url, 'sys-00000')
    try:
        info = client.parse(node, conf)
        client.forget(info)
        client.system_fields(node, conf)
        assert fleet.by_route.get('POST /SessionService/Sessions') == 1
        root = client._CACHE[info.key][0]
        proxy.mode = 'hang'
        before = proxy.accepted
        with pytest.raises(exception.RedfishConnectionError):
            client.system_fields(node, conf)
        assert info.key not in client._CACHE
        root.__del__()      # what the garbage collector will do
        client.flush_closer()
        # the read's two attempts, no DELETE of the session after them
        assert proxy.accepted - before == 2
    finally:
        proxy.stop()
        fleet.stop()


def test_a_collected_connection_closes_its_session_in_the_closer(conf):
    import threading
    fleet = _fleet()
    node = _session_node(fleet.address('sys-00000'), 'sys-00000')
    try:
        info = client.parse(node, conf)
        client.forget(info, close=False)
        client.system_fields(node, conf)
        root = client._CACHE[info.key][0]
        client.forget(info, close=False)
        root._auth.closing = True   # as if dropped by other means
        seen = []
        real = root._auth.auth.close
        root._auth.auth.close = lambda: seen.append(
            threading.current_thread().name) or real()
        root.__del__()      # in this thread: nothing sent from it
        client.flush_closer()
        assert len(seen) == 1 and seen[0] != \
            threading.current_thread().name, seen
        assert fleet.by_route.get(
            'DELETE /SessionService/Sessions/{}') == 1, fleet.by_route
    finally:
        fleet.stop()


def test_a_connection_pushed_out_of_the_cache_closes_its_session(
        conf, caplog, monkeypatch):
    monkeypatch.setattr(client, '_EVICTED_WARNED', [-float('inf')])
    conf.set_override('connection_cache_size', 1, group='redfish')
    fleet = _fleet(systems=2, per_bmc=1)
    nodes = [_session_node(fleet.address(sid), sid)
             for sid in ('sys-00000', 'sys-00001')]
    try:
        for n in nodes:
            client.forget(client.parse(n, conf), close=False)
        client.system_fields(nodes[0], conf)
        client.system_fields(nodes[1], conf)    # pushes the first out
        client.flush_closer()
        deleted = fleet.by_route.get('DELETE /SessionService/Sessions/{}')
        assert deleted == 1, fleet.by_route
        # and the first BMC is connected to again when asked
        assert client.system_fields(nodes[0], conf)['Id'] == 'sys-00000'
        # the operator is told, once for both evictions
        warned = [r for r in caplog.records
                  if 'connection cache is full' in r.getMessage()]
        assert len(warned) == 1, caplog.text
        assert 'connection_cache_size' in warned[0].getMessage()
    finally:
        for n in nodes:
            client.forget(client.parse(n, conf))
        client.flush_closer()
        fleet.stop()


def _fleet_host():
    import urllib.parse
    fleet = _fleet()
    try:
        return urllib.parse.urlsplit(fleet.address('sys-00000')).hostname
    finally:
        fleet.stop()


def test_https_bmcs_are_read_as_redfish_verify_ca_says(conf, tmp_path):
    """The fleet double's HTTPS BMCs (bench-fleet --bmc-tls): read with
    their certificate named, or unverified; refused by the default CA
    bundle."""
    ctx, cert = tls.server_context(tmp_path, 'bmc', ip='127.0.0.2')
    fleet = _fleet(tls=ctx)
    try:
        url = fleet.address('sys-00000')
        assert url.startswith('https://127.0.0.2:')
        for verify in (cert, False, None):
            node = _node(url)
            node.driver_info['redfish_system_id'] = \
                '/redfish/v1/Systems/sys-00000'
            if verify is not None:
                node.driver_info['redfish_verify_ca'] = verify
            info = client.parse(node, conf)
            try:
                if verify is None:
                    with pytest.raises(exception.RedfishError):
                        client.system_fields(node, conf)
                    continue
                for _ in range(2):
                    assert client.system_fields(node, conf)[
                        'PowerState'] == 'Off'
            finally:
                client.forget(info)
        assert fleet.counts['sys-00000'] >= 4
    finally:
        fleet.stop()


def test_a_power_change_rereads_only_the_systems_json(conf, monkeypatch):
    """A power change reads the System's JSON once (its state and reset
    action), resets (all by http.client, none through requests), then
    re-reads the JSON alone until it reports the state; sushy's System,
    which parses every field, is never built; a node already in the
    state is not asked again."""
    import sushy.resources.system.system as sushy_system

    from baremetal.conf import conductor as conductor_conf
    from baremetal.drivers.modules.redfish import power
    conductor_conf.register_opts(conf)
    conf.set_override('power_poll_interval', 0, group='redfish')

    parsed = []
    build = sushy_system.System.__init__

    def counted(self, *args, **kwargs):
        parsed.append(1)
        return build(self, *args, **kwargs)
    monkeypatch.setattr(sushy_system.System, '__init__', counted)
    import requests.adapters
    through_requests = []
    monkeypatch.setattr(requests.adapters.HTTPAdapter, 'send',
                        lambda self, r, **kw: through_requests.append(r))
    fleet = _fleet()
    try:
        task = _fleet_task(fleet, conf, None)
        task.conductor.conf = conf
        pw = power.RedfishPower()
        assert pw.get_power_state(task) == 'power off'
        before = len(fleet.gets['sys-00000'])
        pw.set_power_state(task, 'power on')
        # the System's JSON, then once more (the double is on at once)
        assert len(fleet.gets['sys-00000']) == before + 2
        assert parsed == []
        # the reset's POST too went out by http.client (lean_get.py)
        assert fleet.by_route.get(
            'POST /Systems/{}/Actions/ComputerSystem.Reset') == 1
        assert through_requests == []
        assert pw.get_power_state(task) == 'power on'
        before = len(fleet.gets['sys-00000'])
        pw.set_power_state(task, 'power on')
        assert len(fleet.gets['sys-00000']) == before + 1
        pw.reboot(task)
        assert fleet.by_route.get(
            'POST /Systems/{}/Actions/ComputerSystem.Reset') == 2
        assert parsed == []
    finally:
        fleet.stop()


_RESET = '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset'
_ACTION_INFO = '/redfish/v1/Systems/1/ResetActionInfo'


def _with_reset(**action):
    return {'@odata.id': '/redfish/v1/Systems/1', 'Id': '1',
            'PowerState': 'On',
            'Actions': {'#ComputerSystem.Reset': dict(
                {'target': _RESET}, **action)}}


def _sushy_reset(conf, node, doc, reset_type):
    """What sushy's own System.reset_system sends for ``doc``."""
    import sushy
    system = client.get_system(node, conf)
    with client.call(node, conf, 'sushy reset'):
        system.reset_system(sushy.ResetType(reset_type))


@pytest.mark.parametrize('action, info, reset_type, sent', [
    ({'ResetType@Redfish.AllowableValues': ['On', 'ForceOff']}, None,
     'ForceOff', True),
    ({'ResetType@Redfish.AllowableValues': ['On']}, None,
     'ForceOff', False),
    ({}, None, 'GracefulRestart', True),        # nothing listed: tried
    ({'@Redfish.ActionInfo': _ACTION_INFO},
     {'Parameters': [{'Name': 'ResetType',
                      'AllowableValues': ['On', 'ForceRestart']}]},
     'ForceRestart', True),
    ({'@Redfish.ActionInfo': _ACTION_INFO},
     {'Parameters': [{'Name': 'ResetType', 'AllowableValues': ['On']}]},
     'ForceRestart', False),
    # an ActionInfo that is no resource: tried, as sushy does
    ({'@Redfish.ActionInfo': _ACTION_INFO}, ['no', 'object'], 'On', True),
])
def test_a_reset_sends_what_sushy_sends(conf, recorders, fresh, action,
                                        info, reset_type, sent):
    """The reset read from the System's JSON POSTs what sushy's
    System.reset_system posts, to the action's target, and refuses the
    reset types the BMC does not list (in the action or its ActionInfo)
    as sushy does, before anything is sent."""
    bmc = recorders()
    bmc.system = _with_reset(**action)
    if info is not None:
        bmc.docs[_ACTION_INFO] = info
    url = 'http://127.0.0.1:%d' % bmc.port
    node = fresh(url)
    node.driver_info['redfish_system_id'] = '1'
    doc = client.system_fields(node, conf)
    outcomes, said = [], []
    for reset in (lambda: client.reset_system(node, conf, doc, reset_type,
                                              'power off'),
                  lambda: _sushy_reset(conf, node, doc, reset_type)):
        del bmc.posts[:]
        try:
            reset()
            outcomes.append(('sent', list(bmc.posts)))
        except exception.RedfishError as e:
            assert bmc.posts == []
            assert url in str(e)
            said.append(str(e))
            outcomes.append(('refused', []))
    assert outcomes[0] == outcomes[1]
    if said:
        # ours names the type and the allowed ones as the BMC spells them
        assert ('power off on %s: The parameter "ResetType" value "%s" is '
                'invalid. Valid values are: On' % (url, reset_type)
                ) in said[0]
    assert outcomes[0] == (('sent', [(_RESET, {'ResetType': reset_type})])
                           if sent else ('refused', []))


@pytest.mark.parametrize('actions', [
    None, {}, {'#ComputerSystem.Reset': {}}, ['a list'],
    {'#ComputerSystem.Reset': {'target': 7}}])
def test_a_system_without_a_reset_action_is_an_error_naming_it(
        conf, recorders, fresh, actions):
    bmc = recorders()
    bmc.system = {'@odata.id': '/redfish/v1/Systems/1', 'Id': '1',
                  'PowerState': 'On'}
    if actions is not None:
        bmc.system['Actions'] = actions
    url = 'http://127.0.0.1:%d' % bmc.port
    node = fresh(url)
    node.driver_info['redfish_system_id'] = '1'
    doc = client.system_fields(node, conf)
    with pytest.raises(exception.RedfishError) as e:
        client.reset_system(node, conf, doc, 'On', 'power on')
    assert 'power on on %s: ' % url in str(e.value)
    assert '#ComputerSystem.Reset is missing from the resource ' \
        '/redfish/v1/Systems/1' in str(e.value)
    assert bmc.posts == []


def test_a_system_without_a_boot_object_has_no_boot_device_or_mode(
        monkeypatch):
    """A BMC whose ComputerSystem sends no Boot (sushy's ``boot`` is
    None): the boot device and mode are unknown (they were an
    AttributeError, a 500 'An internal error occurred')."""
    from baremetal.drivers.modules.redfish import management
    mgmt = management.RedfishManagement()
    monkeypatch.setattr(management.RedfishManagement, '_system',
                        lambda self, task: types.SimpleNamespace(boot=None))
    assert mgmt.get_boot_device(None) == {'boot_device': None,
                                          'persistent': None}
    assert mgmt.get_boot_mode(None) is None


def test_requests_stay_at_the_bmc():
    import requests
    session = requests.Session()
    own = client._at_home(session, 'https://[fd00::5]')
    # relative, or the BMC's own origin (its default port said or not)
    for url in ('/redfish/v1/Systems/1', 'https://[fd00::5]/redfish/v1',
                'https://[FD00::5]:443/redfish/v1'):
        assert own(url) == url
    # another host, or another port of the same: the BMC's, same path
    for url in ('http://169.254.169.254/redfish/v1/Systems/1?x=1',
                'https://[fd00::5]:8443/redfish/v1/Systems/1?x=1'):
        assert own(url) == 'https://[fd00::5]/redfish/v1/Systems/1?x=1'
    # a redirect within the BMC's host is followed, elsewhere not
    here = requests.Response()
    here.url, here.status_code = 'https://[fd00::5]/redfish/v1', 302
    here.headers['Location'] = 'http://[fd00::5]:8080/redfish/v1'
    assert session.get_redirect_target(here) == \
        'http://[fd00::5]:8080/redfish/v1'
    here.headers['Location'] = 'https://bmc.example/redfish/v1'
    with pytest.raises(requests.exceptions.RequestException,
                       match='redirected to https://bmc.example/redfish/v1,'
                             ' another host: not followed'):
        session.get_redirect_target(here)
