"""The API's HTTP connections: cheroot's, with reads through the C
``io.BufferedReader`` and each response sent in one ``send``.

cheroot reads a request's line and headers through ``_pyio`` (Python's
pure-Python ``io``) and sends a response's headers and its body as two
``send`` calls as soon as each is written.  Here, what cheroot writes
is kept (up to 1 MiB) until the response is complete or until the
server is about to read from the client (a ``100 Continue`` is sent
before the body it asks for is read), and then goes out in one call:
one segment on the wire for a small answer, one wake-up of the
client.  A stream of the
change feed flushes each event itself (``cmd/wsgi.py``).  The ``Date``
header is formatted once a second, not once a response.

After a response, cheroot hands a keep-alive connection back to its
selector thread unless a request is already buffered; here the check
also looks at the socket, so a request that arrived while the last one
was answered is read by the same thread at once.  While no other request
waits for a thread, the check waits for the next request a little
(``Reader.linger``, set from the server's ``keep_alive_linger``): a
client that asks again at once, as a poller or a reader of pages does,
is served without the selector's round trip (the selector thread's
wake-up, the connection registered again, a hand-over to a worker).
"""

import email.utils
import io
import select
import socket
import time

from cheroot import makefile as cheroot_makefile
from cheroot import server as cheroot_server

# a response up to this size is joined and sent in one call; above it,
# its parts are sent one by one (joining would copy a large body)
JOIN_UP_TO = 64 * 1024
# what a response written in many pieces may hold back: beyond it, what
# was written so far is sent at once
HOLD_UP_TO = 1024 * 1024
# select() takes descriptors below this only
FD_SETSIZE = 1024


class Writer:
    """The write side of a connection: keeps what is written until
    ``flush``."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._parts: list[bytes] = []
        self._size = 0
        self.bytes_written = 0   # cheroot's statistics read it

    @property
    def pending(self) -> bool:
        return bool(self._parts)

    def write(self, data) -> int:
        if isinstance(data, str):
            raise TypeError("can't write str to binary stream")
        n = len(data)
        if n:
            self._parts.append(bytes(data))
            self._size += n
            self.bytes_written += n
            if self._size > HOLD_UP_TO:
                self.flush()
        return n

    def flush(self) -> None:
        parts, size = self._parts, self._size
        if not parts:
            return
        self._parts, self._size = [], 0
        if len(parts) == 1:
            self._sock.sendall(parts[0])
        elif size <= JOIN_UP_TO:
            self._sock.sendall(b''.join(parts))
        else:
            for part in parts:
                self._sock.sendall(part)

    def close(self) -> None:
        try:
            self.flush()
        except OSError:
            # the client went away: nothing left to tell it
            self._parts, self._size = [], 0


class _SocketIO(socket.SocketIO):
    """The raw side of the reader: sends what was written before it
    waits for the client."""

    def __init__(self, sock: socket.socket, writer: Writer) -> None:
        super().__init__(sock, 'rb')
        self._writer = writer

    def readinto(self, b):
        if self._writer.pending:
            self._writer.flush()
        return super().readinto(b)


class Reader(io.BufferedReader):
    """The read side of a connection (C-buffered), with what cheroot asks
    of its own reader."""

    bytes_read = 0   # cheroot's statistics (off here) would count
    # how long has_data waits for the next request (seconds), while no
    # other request waits in the pool's queue
    linger = 0.0
    pool = None

    def others_idle(self) -> bool:
        return self.pool is None or self.pool.qsize == 0

    def __init__(self, sock: socket.socket, writer: Writer) -> None:
        super().__init__(_SocketIO(sock, writer), io.DEFAULT_BUFFER_SIZE)

    def has_data(self) -> bool:
        """Whether a request is already here (pipelined), without
        waiting: a peek that does not block on the socket."""
        raw = self.raw
        if raw._writer.pending:
            # sent while the socket still waits (a non-blocking send
            # could stop halfway)
            raw._writer.flush()
        sock = raw._sock
        timeout = sock.gettimeout()
        sock.settimeout(0)
        try:
            if self.peek(1):
                return True
            if self.linger <= 0 or not self.others_idle():
                return False
            # a client that asks again at once is served by this
            # thread; no other request was queued when the wait began
            fd = sock.fileno()
            if fd < 0 or fd >= FD_SETSIZE:
                return False
            ready, _, _ = select.select((fd,), (), (), self.linger)
            return bool(ready) and bool(self.peek(1))
        except (OSError, ValueError):
            # the connection broke: the selector sees it and the worker
            # that reads it closes it
            return False
        finally:
            sock.settimeout(timeout)


_date = (0, b'')


def http_date() -> bytes:
    """The ``Date`` header's value now (formatted once a second)."""
    global _date
    now = int(time.time())
    second, text = _date
    if second != now:
        text = email.utils.formatdate(now, usegmt=True).encode('ascii')
        _date = (now, text)
    return text


class Request(cheroot_server.HTTPRequest):
    def send_headers(self):
        if not any(k.lower() == b'date' for k, _ in self.outheaders):
            self.outheaders.append((b'Date', http_date()))
        super().send_headers()


def _no_file(sock, mode, bufsize):
    return None


class Connection(cheroot_server.HTTPConnection):
    """cheroot's connection with the reader and writer above (a TLS
    adapter's own files are kept as they are)."""

    RequestHandlerClass = Request

    def __init__(self, server, sock, makefile=cheroot_makefile.MakeFile):
        ours = makefile is cheroot_makefile.MakeFile
        super().__init__(server, sock, _no_file if ours else makefile)
        if ours:
            self.wfile = Writer(sock)
            self.rfile = Reader(sock, self.wfile)
            self.rfile.linger = getattr(server, 'keep_alive_linger', 0.0)
            self.rfile.pool = getattr(server, 'requests', None)

    def communicate(self):
        # the answer goes out here, not only when cheroot next looks at
        # the socket (has_data's peek would send it too)
        try:
            return super().communicate()
        finally:
            if isinstance(self.wfile, Writer):
                self.wfile.close()

    def close(self):
        if isinstance(self.wfile, Writer):
            self.wfile.close()
        super().close()
