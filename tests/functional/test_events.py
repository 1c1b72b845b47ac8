"""The change feed (GET /events) of an embedded server, driven over HTTP:
nodes go through their lifecycle, a client reads the feed as JSON pages
and as a Server-Sent Events stream, filtered and resumed."""

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.functional import processes

H = {'X-OpenStack-Ironic-API-Version': '1.61',
     'Content-Type': 'application/json'}


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('events')
    conf = processes.base_conf(tmp, conductor={
        'check_provision_state_interval': 1,
        'async_step_poll_interval': 1},
        events={'keepalive_interval': 1, 'poll_interval': 0.1,
                'max_streams': 3})
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    rc = svc.stop()
    assert rc == 0, svc.log()


def call(server, method, path, body=None, headers=None):
    req = urllib.request.Request(
        server.endpoint + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers=dict(H, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def wait_for(server, node, state, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        _, body = call(server, 'GET', '/v1/nodes/%s' % node)
        if body['provision_state'] == state and \
                not body['target_provision_state']:
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def provision(server, node, target):
    status, body = call(server, 'PUT', '/v1/nodes/%s/states/provision'
                        % node, {'target': target})
    assert status == 202, body


def make_available(server, name, **fields):
    status, node = call(server, 'POST', '/v1/nodes',
                        dict(driver='fake-hardware', name=name, **fields))
    assert status == 201, node
    provision(server, name, 'manage')
    wait_for(server, name, 'manageable')
    provision(server, name, 'provide')
    wait_for(server, name, 'available')
    return node


def all_events(server, query=''):
    """Every event through the JSON pages, following ``next``."""
    out = []
    url = '/events?limit=7' + query
    while True:
        status, page = call(server, 'GET', url)
        assert status == 200, page
        out.extend(page['events'])
        nxt = urllib.parse.urlsplit(page['next'])
        url = '%s?%s' % (nxt.path, nxt.query)
        if not page['events']:
            return out


def newest(server):
    events = all_events(server)
    return events[-1]['id'] if events else 0


class SSE:
    """A text/event-stream client on a raw HTTP connection."""

    def __init__(self, server, query='', last_id=None):
        self.conn = http.client.HTTPConnection('127.0.0.1', server.port,
                                               timeout=30)
        headers = {'Accept': 'text/event-stream'}
        if last_id is not None:
            headers['Last-Event-ID'] = str(last_id)
        self.conn.request('GET', '/events' + query, headers=headers)
        self.resp = self.conn.getresponse()
        self.comments = 0

    def next_event(self, timeout=30):
        deadline = time.monotonic() + timeout
        block = {}
        while time.monotonic() < deadline:
            line = self.resp.fp.readline().decode()
            assert line, 'stream ended'
            line = line.rstrip('\n')
            if not line:
                if 'data' in block:
                    return block
                block = {}
                continue
            if line.startswith(':'):
                self.comments += 1
                continue
            key, _, value = line.partition(': ')
            block[key] = value
        raise AssertionError('no event in %ss' % timeout)

    def events(self, n, timeout=30):
        out = []
        for _ in range(n):
            ev = self.next_event(timeout)
            assert ev['event'] == 'node'
            data = json.loads(ev['data'])
            assert str(data['id']) == ev['id']
            out.append(data)
        return out

    def close(self):
        self.conn.close()


def _transitions(events, uuid):
    return [(e['old'], e['new']) for e in events
            if e['node'] == uuid and e['field'] == 'provision_state']


def test_json_pages_tell_a_node_lifecycle_in_order(server):
    node = make_available(server, 'ev-json', resource_class='rc-json')
    events = all_events(server)
    ids = [e['id'] for e in events]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    mine = [e for e in events if e['node'] == node['uuid']]
    assert mine[0]['field'] == 'node' and mine[0]['new'] == 'created'
    assert mine[0]['resource_class'] == 'rc-json'
    steps = _transitions(mine, node['uuid'])
    assert steps[0] == ('enroll', 'verifying')
    assert ('verifying', 'manageable') in steps
    assert steps[-1][1] == 'available'
    first = [e for e in mine if e['field'] == 'provision_state'][0]
    assert first['target_provision_state'] == 'manageable'
    assert first['time'].endswith('Z')
    # the fake power interface gave it a power state on the way
    assert any(e['field'] == 'power_state' for e in mine)


def test_filters_and_maintenance_and_deletion(server):
    a = make_available(server, 'ev-a', resource_class='rc-a',
                       owner='proj-a')
    b = make_available(server, 'ev-b', resource_class='rc-b')
    status, _ = call(server, 'PUT', '/v1/nodes/ev-a/maintenance',
                     {'reason': 'fan noise'})
    assert status == 202
    by_name = all_events(server, '&node=ev-a')
    assert by_name and {e['node'] for e in by_name} == {a['uuid']}
    maint = [e for e in by_name if e['field'] == 'maintenance']
    assert maint == [dict(maint[0], old=False, new=True,
                          reason='fan noise')]
    assert all_events(server, '&node=%s' % a['uuid']) == by_name
    by_rc = all_events(server, '&resource_class=rc-b')
    assert {e['node'] for e in by_rc} == {b['uuid']}
    by_owner = all_events(server, '&owner=proj-a')
    assert {e['node'] for e in by_owner} == {a['uuid']}
    assert all_events(server, '&conductor_group=no-such-group') == []
    status, _ = call(server, 'DELETE', '/v1/nodes/ev-b')
    assert status == 204
    gone = all_events(server, '&node=%s' % b['uuid'])[-1]
    assert (gone['field'], gone['new']) == ('node', 'deleted')


@pytest.mark.parametrize('query,headers,words', [
    ('?since=abc', {}, 'since must be an integer'),
    ('?since=-3', {}, 'since must be an integer'),
    ('?since=99999999', {}, 'does not exist yet'),
    ('?limit=0', {}, 'limit must be an integer of at least 1'),
    ('?node=no-such-node', {}, 'neither a UUID nor the name'),
    ('?resource_class=' + 'x' * 81, {}, 'resource_class must be 1 to 80'),
    ('?owner=', {}, 'owner must be 1 to 255'),
    ('?colour=red', {}, 'unknown parameter(s) colour'),
    ('?node=a&node=b', {}, 'node may be given once'),
    ('', {'Last-Event-ID': 'x1'}, 'Last-Event-ID must be an integer'),
])
def test_bad_parameters_are_400_with_a_reason(server, query, headers,
                                              words):
    for accept in ('application/json', 'text/event-stream'):
        status, body = call(server, 'GET', '/events' + query,
                            headers=dict(headers, Accept=accept))
        assert status == 400, body
        assert words in json.loads(body['error_message'])['faultstring']


def test_stream_delivers_live_and_resumes_from_last_event_id(server):
    start = newest(server)
    stream = SSE(server, '?since=%d' % start)
    assert stream.resp.status == 200
    assert stream.resp.getheader('Content-Type').startswith(
        'text/event-stream')
    node = make_available(server, 'ev-live')
    # created, and enroll -> verifying at least
    got = stream.events(3)
    assert got[0]['id'] == start + 1
    assert [e['id'] for e in got] == list(range(start + 1, start + 4))
    stream.close()
    # while no one listens, more changes
    provision(server, 'ev-live', 'active')
    wait_for(server, 'ev-live', 'active')
    history = all_events(server, '&node=%s' % node['uuid'])
    # the URL says since=start: the reconnection's Last-Event-ID wins
    again = SSE(server, '?since=%d&node=ev-live' % start,
                last_id=got[-1]['id'])
    rest = [e for e in history if e['id'] > got[-1]['id']]
    assert again.events(len(rest)) == rest
    # the stream then stays open: keep-alive comments while quiet
    deadline = time.monotonic() + 5
    while not again.resp.fp.readline().startswith(b': keep-alive'):
        assert time.monotonic() < deadline, 'no keep-alive'
    again.close()


def _open_streams(server, n, query='', timeout=10):
    """``n`` streams, once the slots of closed ones are free again (a
    client gone is noticed at the next keep-alive: 1 s here)."""
    deadline = time.monotonic() + timeout
    streams = []
    while len(streams) < n:
        s = SSE(server, query)
        if s.resp.status == 200:
            streams.append(s)
            continue
        s.close()
        assert time.monotonic() < deadline, 'stream slots not freed'
        time.sleep(0.2)
    return streams


def test_streams_beyond_the_limit_are_503_and_freed_on_close(server):
    streams = _open_streams(server, 3)
    status, body = call(server, 'GET', '/events',
                        headers={'Accept': 'text/event-stream'})
    assert status == 503
    assert 'max_streams' in json.loads(body['error_message'])[
        'faultstring']
    # JSON pages and the rest of the API still answer meanwhile
    assert call(server, 'GET', '/events?limit=1')[0] == 200
    assert call(server, 'GET', '/v1/nodes')[0] == 200
    for s in streams:
        s.close()
    for s in _open_streams(server, 3):
        s.close()


def test_post_v1_events_is_still_ironics(server):
    status, _ = call(server, 'POST', '/v1/events', {'events': []},
                     headers={'X-OpenStack-Ironic-API-Version': '1.54'})
    assert status in (204, 400)
    assert call(server, 'GET', '/v1/events',
                headers={'X-OpenStack-Ironic-API-Version': '1.54'}
                )[0] == 405


def test_concurrent_streams_see_the_same_history(server):
    start = newest(server)
    streams = _open_streams(server, 2, '?since=%d' % start)
    names = ['ev-c%d' % i for i in range(3)]
    threads = [threading.Thread(target=make_available, args=(server, n))
               for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    history = [e for e in all_events(server) if e['id'] > start]
    seen = [s.events(len(history)) for s in streams]
    assert seen[0] == history and seen[1] == history
    for s in streams:
        s.close()
