"""The HTTP front end of baremetal-server: persistent connections survive
every kind of answer, many concurrent clients are all served, a
request body over the limit is refused with 413, and a URL that is not
UTF-8 is refused with 400."""

import http.client
import json
import socket
import threading

H = {'X-OpenStack-Ironic-API-Version': '1.61',
     'Content-Type': 'application/json'}


def _conn(server) -> http.client.HTTPConnection:
    return http.client.HTTPConnection('127.0.0.1', server.port, timeout=30)


def _enroll(c: http.client.HTTPConnection, name: str) -> None:
    c.request('POST', '/v1/nodes', json.dumps(
        {'driver': 'fake-hardware', 'name': name}), H)
    r = c.getresponse()
    assert r.status == 201, r.read()
    r.read()


def test_one_connection_for_200_201_202_204_404(server):
    c = _conn(server)
    _enroll(c, 'http-ka')
    sock = c.sock
    for method, path, body, status in (
            ('GET', '/v1/nodes/http-ka', None, 200),
            ('PUT', '/v1/nodes/http-ka/states/provision',
             {'target': 'manage'}, 202),
            ('GET', '/v1/nodes/no-such-node', None, 404),
            ('PUT', '/v1/nodes/http-ka/maintenance', {'reason': 'x'}, 202),
            ('DELETE', '/v1/nodes/http-ka/maintenance', None, 202),
            ('PATCH', '/v1/nodes/http-ka',
             [{'op': 'add', 'path': '/extra/a', 'value': 1}], 200),
            ('PUT', '/v1/nodes/http-ka/traits/CUSTOM_KA', None, 204),
            ('GET', '/', None, 200)):
        c.request(method, path, json.dumps(body) if body is not None
                  else None, H)
        r = c.getresponse()
        r.read()
        assert r.status == status, (method, path, r.status)
        assert c.sock is sock, 'connection closed after %s %s' % (method,
                                                                  path)
    c.close()


def test_256_concurrent_clients_are_all_served(server):
    errors, statuses = [], []
    lock = threading.Lock()
    start = threading.Barrier(256)

    def client():
        try:
            c = _conn(server)
            start.wait(30)
            got = []
            for _ in range(3):
                c.request('GET', '/v1/nodes?limit=1', headers=H)
                r = c.getresponse()
                r.read()
                got.append(r.status)
            c.close()
            with lock:
                statuses.extend(got)
        except Exception as e:  # reset, refused, timeout...
            with lock:
                errors.append(repr(e))

    threads = [threading.Thread(target=client) for _ in range(256)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert statuses == [200] * 768


def test_body_over_the_limit_is_413(server):
    """Refused on its Content-Length, before the body is read."""
    size = 17 << 20  # [api]max_request_body_size is 16 MiB
    with socket.create_connection(('127.0.0.1', server.port), 30) as s:
        s.sendall(('POST /v1/nodes HTTP/1.1\r\nHost: x\r\n'
                   'Content-Type: application/json\r\n'
                   'Content-Length: %d\r\n\r\n' % size).encode()
                  + b'{"driver": "' + b'x' * 1024)
        answer = b''
        while b'\r\n\r\n' not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b'HTTP/1.1 413'), answer[:200]



def _get(sock, stream, target: bytes) -> tuple[int, bytes]:
    sock.sendall(b'GET ' + target + b' HTTP/1.1\r\nHost: 127.0.0.1\r\n'
                 b'X-OpenStack-Ironic-API-Version: 1.61\r\n\r\n')
    status = int(stream.readline().split()[1])
    length = 0
    while True:
        line = stream.readline()
        if line in (b'\r\n', b''):
            break
        name, _, value = line.partition(b':')
        if name.lower() == b'content-length':
            length = int(value)
    return status, stream.read(length)


def test_a_url_not_utf8_or_with_a_nul_is_400_on_the_same_connection(
        server):
    """A path or query string that is not UTF-8 once percent-decoded, or
    holds a NUL (%00), is a 400 saying which part is wrong, nothing is
    logged as an error, and the connection serves the next request.
    Raw bytes that are not ASCII in the request line are refused by the
    HTTP server itself (400, ``Malformed Request-URI``), as in Ironic
    39."""
    before = server.log(tail=None).count('Traceback')
    sock = socket.create_connection(('127.0.0.1', server.port), timeout=30)
    stream = sock.makefile('rb')
    try:
        for target, part in ((b'/v1/nodes?name=%ff', 'query string'),
                             (b'/v1/nodes?fields=uuid,%c3', 'query string'),
                             (b'/v1/nodes/%c3', 'path'),
                             (b'/v1/nodes/%e2%82/states', 'path'),
                             (b'/v1/nodes/a%00b', 'path'),
                             (b'/v1/nodes?driver=%00', 'query string'),
                             (b'/v1/nodes?description_contains=caf%C3%A9',
                              None)):
            status, body = _get(sock, stream, target)
            if part is None:
                assert status == 200, body
                assert json.loads(body)['nodes'] == []
                continue
            assert status == 400, (target, body)
            error = json.loads(json.loads(body)['error_message'])
            wrong = ('holds a NUL character' if b'%00' in target
                     else 'is not valid UTF-8')
            assert error['description'].startswith(
                "The request URL's %s %s" % (part, wrong)), error
    finally:
        stream.close()
        sock.close()
    for target in (b'/v1/nodes?name=\xff', b'/v1/nodes/\xe2\x82/states'):
        with socket.create_connection(('127.0.0.1', server.port),
                                      timeout=30) as sock, \
                sock.makefile('rb') as stream:
            assert _get(sock, stream, target) == (
                400, b'Malformed Request-URI')
    assert server.log(tail=None).count('Traceback') == before


def test_an_empty_fields_is_the_links_alone_over_http(server):
    """``?fields=`` asks for no field (Ironic 39 answers so): the node
    list and the node show each node's links alone."""
    c = _conn(server)
    _enroll(c, 'http-no-fields')
    for path in ('/v1/nodes?fields=', '/v1/nodes/http-no-fields?fields='):
        c.request('GET', path, headers=H)
        r = c.getresponse()
        out = json.loads(r.read())
        assert r.status == 200, out
        for node in out.get('nodes', [out]):
            assert list(node) == ['links'], node
    c.close()
