"""A request's body as the API server reads it (api/request.py
``Request.body``): straight from the connection when its length is
known, through webob when it is chunked; either way once, and the same
JSON.  Served by cheroot (cmd/wsgi.py) as in production: the harness's
own requests come with webob's seekable bodies, which take the other
path."""

import http.client
import json
import threading

import pytest

from baremetal.cmd import wsgi

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.61',
           'Content-Type': 'application/json'}


@pytest.fixture
def conn(api):
    server = wsgi.Server(api.app, '127.0.0.1', 0, 4, 64, min_threads=1)
    threading.Thread(target=server.run, daemon=True).start()
    c = http.client.HTTPConnection('127.0.0.1', server.effective_port,
                                   timeout=10)
    yield c
    c.close()
    server.close()


def _send(c, method, path, body, chunked=False):
    if chunked:
        c.request(method, path, iter([body[:7], body[7:]]),
                  HEADERS, encode_chunked=True)
    else:
        c.request(method, path, body, HEADERS)
    r = c.getresponse()
    return r.status, json.loads(r.read() or b'null')


@pytest.mark.parametrize('chunked', [False, True])
def test_bodies_are_read_whole_on_a_kept_connection(conn, chunked):
    body = json.dumps({'driver': 'fake-hardware', 'name': 'n1',
                       'extra': {'x': 'y' * 5000}}).encode()
    status, node = _send(conn, 'POST', '/v1/nodes', body, chunked)
    assert status == 201, node
    assert (node['name'], node['extra']) == ('n1', {'x': 'y' * 5000})
    # the next request on the connection starts where the body ended
    status, node = _send(conn, 'PATCH', '/v1/nodes/n1', json.dumps(
        [{'op': 'add', 'path': '/extra/z', 'value': 1}]).encode(), chunked)
    assert status == 200, node
    assert node['extra'] == {'x': 'y' * 5000, 'z': 1}
    status, _ = _send(conn, 'PUT', '/v1/nodes/n1/states/provision',
                      b'{"target": "manage"}', chunked)
    assert status == 202


@pytest.mark.parametrize('chunked', [False, True])
def test_a_bad_body_is_a_400_and_the_connection_goes_on(conn, chunked):
    status, err = _send(conn, 'POST', '/v1/nodes', b'{"driver": ', chunked)
    assert status == 400
    assert 'the request body is not valid JSON' in json.loads(
        err['error_message'])['faultstring']
    status, node = _send(conn, 'POST', '/v1/nodes',
                         b'{"driver": "fake-hardware"}', chunked)
    assert status == 201, node
