"""Misbehaving peers on loopback, for fault tests: threads in the test
process that the server under test talks to.

* ``TCPFault``: a TCP endpoint (an HTTP BMC, agent or image server)
  that, per its ``mode``, forwards to a real one (``pass``), closes every
  connection as soon as a request arrives (``close``), answers a valid
  HTTP response whose body is not JSON (``garbage``), is JSON of the
  wrong shape (``wrongjson``) or nested deeper than a parser recurses
  (``deepjson``), answers bytes that are not HTTP at all
  (``malformed``), reads the request and never answers (``hang``), or
  answers a byte every 0.2 s, its body after its headers (``trickle``,
  300 bytes) or its header lines (``trickle-head``): a minute each, every
  byte well within a read timeout; the same body after a redirect to the
  same path (``trickle-redirect``), or after a service root that sets a
  cookie (``trickle-cookie``: every request that sends the cookie back).
  Changing the mode drops the connections already open, so a client's
  kept-alive connection meets the new behaviour.
* ``UDPFault``: a UDP endpoint (an IPMI BMC) that forwards to a real
  one (``pass``), answers every datagram with random bytes
  (``garbage``) or not at all (``silent``).
"""

import os
import socket
import threading
import time

MODES = ('pass', 'close', 'garbage', 'wrongjson', 'deepjson', 'malformed',
         'hang', 'trickle', 'trickle-head', 'trickle-redirect',
         'trickle-cookie')
# what a trickling peer sends a byte at a time, one every TRICKLE_SECONDS
TRICKLE_SECONDS = 0.2
TRICKLED_BODY = b'{' + b' ' * 298 + b'}'
TRICKLED_HEADER = b'X-Slow: ' + b'a' * 290 + b'\r\n'


# a service root (the cookie's bait)
ROOT = (b'{"@odata.id": "/redfish/v1/", "Id": "RootService", "Name": '
        b'"Root", "RedfishVersion": "1.6.0", "UUID": '
        b'"00000000-0000-0000-0000-000000000000", "Systems": '
        b'{"@odata.id": "/redfish/v1/Systems"}}')
GARBAGE_BODY = b'<html><body>Service Temporarily Unavailable</body>'
WRONG_JSON = b'["JSON", "but not what was asked for"]'
DEEP_JSON = b'[' * 20000 + b']' * 20000


def _read_request(conn: socket.socket) -> bytes:
    """Read up to the end of the request head (and a small body)."""
    data = b''
    conn.settimeout(5)
    try:
        while b'\r\n\r\n' not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


class TCPFault:
    def __init__(self, mode: str = 'close',
                 target: tuple[str, int] | None = None) -> None:
        self.target = target
        self._mode = mode
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.accepted = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(('127.0.0.1', 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return 'http://127.0.0.1:%d' % self.port

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        assert mode in MODES, mode
        self._mode = mode
        self._drop_all()

    def stop(self) -> None:
        self._stopped = True
        self._sock.close()
        self._drop_all()

    def _drop_all(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, set()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            with self._lock:
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn, self._mode),
                             daemon=True).start()

    def _serve(self, conn: socket.socket, mode: str) -> None:
        try:
            if mode == 'pass':
                self._forward(conn)
                return
            head = _read_request(conn)
            if mode in ('garbage', 'wrongjson', 'deepjson'):
                body = {'garbage': GARBAGE_BODY, 'wrongjson': WRONG_JSON,
                        'deepjson': DEEP_JSON}[mode]
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: '
                             b'application/json\r\nContent-Length: %d\r\n'
                             b'Connection: close\r\n\r\n'
                             % len(body) + body)
            elif mode == 'malformed':
                conn.sendall(b'\x00\x17SSH-2.0 nonsense\r\n\xff\xfe\r\n\r\n')
            elif mode in ('trickle', 'trickle-head'):
                self._trickle(conn, mode)
            elif mode in ('trickle-redirect', 'trickle-cookie'):
                self._lure(conn, mode, head)
            elif mode == 'hang':
                while not self._stopped and conn in self._conns:
                    if not conn.recv(65536):
                        break
                return
        except OSError:
            pass
        finally:
            if mode != 'pass':
                with self._lock:
                    self._conns.discard(conn)
                conn.close()

    def _trickle(self, conn: socket.socket, mode: str) -> None:
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json'
                     b'\r\n')
        drip = TRICKLED_HEADER
        if mode == 'trickle':
            conn.sendall(b'Content-Length: %d\r\n\r\n' % len(TRICKLED_BODY))
            drip = TRICKLED_BODY
        for byte in drip:
            time.sleep(TRICKLE_SECONDS)
            if self._stopped or conn not in self._conns:
                return
            conn.sendall(bytes([byte]))

    def _lure(self, conn: socket.socket, mode: str, head: bytes) -> None:
        """A first answer a client must act on (follow a redirect, keep a
        cookie), then the body trickled."""
        line = head.split(b'\r\n', 1)[0]
        if mode == 'trickle-redirect' and b'?again' not in line:
            path = line.split(b' ')[1]
            conn.sendall(b'HTTP/1.1 307 Temporary Redirect\r\nLocation: '
                         b'%s?again\r\nContent-Length: 0\r\nConnection: '
                         b'close\r\n\r\n' % path)
        elif mode == 'trickle-cookie' and \
                b'\r\ncookie:' not in head.lower():
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/'
                         b'json\r\nSet-Cookie: bmc=1; Path=/\r\n'
                         b'Content-Length: %d\r\nConnection: close\r\n'
                         b'\r\n%s' % (len(ROOT), ROOT))
        else:
            self._trickle(conn, 'trickle')

    def _forward(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(self.target, timeout=30)
        with self._lock:
            self._conns.add(upstream)

        def pump(src, dst):
            try:
                while True:
                    data = src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except OSError:
                pass
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threading.Thread(target=pump, args=(upstream, conn),
                         daemon=True).start()
        pump(conn, upstream)


class UDPFault:
    def __init__(self, mode: str = 'garbage',
                 target: tuple[str, int] | None = None) -> None:
        self.mode = mode
        self.target = target
        self.received = 0
        self._client = None
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(('127.0.0.1', 0))
        self.port = self._sock.getsockname()[1]
        self._up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._up.bind(('127.0.0.1', 0))
        self._stopped = False
        threading.Thread(target=self._loop, daemon=True).start()
        threading.Thread(target=self._replies, daemon=True).start()

    def stop(self) -> None:
        self._stopped = True
        self._sock.close()
        self._up.close()

    def _loop(self) -> None:
        while not self._stopped:
            try:
                data, peer = self._sock.recvfrom(65536)
            except OSError:
                return
            self.received += 1
            try:
                if self.mode == 'pass':
                    self._client = peer
                    self._up.sendto(data, self.target)
                elif self.mode == 'garbage':
                    # an RMCP-looking header, then noise
                    self._sock.sendto(bytes([6, 0, 0xff, 7]) + os.urandom(
                        max(len(data), 16)), peer)
            except OSError:
                if self._stopped:
                    return

    def _replies(self) -> None:
        while not self._stopped:
            try:
                data, _ = self._up.recvfrom(65536)
            except OSError:
                return
            if self.mode == 'pass' and self._client is not None:
                try:
                    self._sock.sendto(data, self._client)
                except OSError:
                    return


IMAGE_MODES = ('ok', 'wrong', 'stall', 'trickle', 'truncate', 'hang')


class ImageServer:
    """An HTTP image server (deploy kernel and ramdisk) that serves
    ``content`` for any path, per its ``mode``: correctly (``ok``),
    other bytes (``wrong``), half the body then silence (``stall``), a
    byte every 0.2 s without end (``trickle``), half the body then a
    closed connection (``truncate``), or no answer at all (``hang``)."""

    def __init__(self, content: bytes, mode: str = 'ok') -> None:
        assert mode in IMAGE_MODES, mode
        self.content = content
        self.mode = mode
        self.requests = 0
        self._stopping = threading.Event()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(('127.0.0.1', 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, name: str) -> str:
        return 'http://127.0.0.1:%d/%s' % (self.port, name)

    def stop(self) -> None:
        self._stopping.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,),
                             daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        mode = self.mode
        try:
            _read_request(conn)
            self.requests += 1
            if mode == 'hang':
                self._stopping.wait(120)
                return
            body = self.content if mode != 'wrong' else \
                bytes(b ^ 0xff for b in self.content)
            head = (b'HTTP/1.1 200 OK\r\nContent-Type: application/'
                    b'octet-stream\r\nContent-Length: %d\r\nConnection: '
                    b'close\r\n\r\n' % (len(body) * (1000 if mode ==
                                                     'trickle' else 1)))
            conn.sendall(head)
            if mode in ('ok', 'wrong'):
                conn.sendall(body)
            elif mode in ('stall', 'truncate'):
                conn.sendall(body[:len(body) // 2])
                if mode == 'stall':
                    self._stopping.wait(120)
            elif mode == 'trickle':
                while not self._stopping.wait(0.2):
                    conn.sendall(b'x')
        except OSError:
            pass
        finally:
            conn.close()
