"""What a Redfish read costs the reading process, by the way it waits:
``threads`` (one blocking request per thread, as the power sync's
workers read) against ``tick`` (one thread, non-blocking sockets, woken
every ``--tick-ms`` to handle every socket that is ready).  The BMCs are
tools/fleet_doubles.py's Redfish doubles in a process of their own; a
read is a new connection, ``GET`` of the System, the answer read to its
end and decoded (``http.client``'s parser, the JSON), as the lean read
does.  Prints the reads per second and this process's CPU per read.

    .venv/bin/python tools/read_probe.py threads --inflight 20
    .venv/bin/python tools/read_probe.py tick --inflight 40 --tick-ms 50

Plain HTTP only: a probe of where the CPU goes, not a client.
"""

import argparse
import http.client
import io
import json
import multiprocessing
import os
import selectors
import socket
import threading
import time

import fleet_doubles


def _serve(queue, systems: int, latency) -> None:
    fleet = fleet_doubles.RedfishFleet(systems, 1, latency_ms=latency)
    queue.put([(fleet.systems[s]['port'], s) for s in sorted(fleet.systems)])
    threading.Event().wait()


class _Received:
    """What http.client's parser reads an answer from."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode):
        return io.BytesIO(self.data)


def _decode(data: bytes) -> str:
    resp = http.client.HTTPResponse(_Received(data))
    resp.begin()
    return json.loads(resp.read())['PowerState']


def _request(sid: str) -> bytes:
    return ('GET /redfish/v1/Systems/%s HTTP/1.1\r\nHost: %s\r\n'
            'Connection: close\r\nAccept: application/json\r\n\r\n'
            % (sid, fleet_doubles.BMC_HOST)).encode()


def threads(targets, seconds: float, inflight: int) -> int:
    done = []
    stop = time.monotonic() + seconds

    def work(first: int) -> None:
        k = first
        while time.monotonic() < stop:
            port, sid = targets[k % len(targets)]
            k += inflight
            with socket.create_connection((fleet_doubles.BMC_HOST, port),
                                          timeout=10) as s:
                s.sendall(_request(sid))
                chunks = []
                while True:
                    d = s.recv(65536)
                    if not d:
                        break
                    chunks.append(d)
            _decode(b''.join(chunks))
            done.append(1)

    workers = [threading.Thread(target=work, args=(i,))
               for i in range(inflight)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return len(done)


def tick(targets, seconds: float, inflight: int, tick_s: float) -> int:
    sel = selectors.DefaultSelector()
    stop = time.monotonic() + seconds
    started = 0
    done = 0

    def start() -> None:
        nonlocal started
        port, sid = targets[started % len(targets)]
        started += 1
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((fleet_doubles.BMC_HOST, port))
        except BlockingIOError:
            pass
        sel.register(s, selectors.EVENT_WRITE, (sid, []))

    for _ in range(inflight):
        start()
    while sel.get_map():
        if tick_s:
            time.sleep(tick_s)
        for key, event in sel.select(0 if tick_s else None):
            s, (sid, chunks) = key.fileobj, key.data
            if event & selectors.EVENT_WRITE:
                s.send(_request(sid))
                sel.modify(s, selectors.EVENT_READ, key.data)
                continue
            ended = False
            while True:
                try:
                    d = s.recv(65536)
                except BlockingIOError:
                    break
                if not d:
                    ended = True
                    break
                chunks.append(d)
            if not ended:
                continue
            sel.unregister(s)
            s.close()
            _decode(b''.join(chunks))
            done += 1
            if time.monotonic() < stop:
                start()
    return done


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('mode', choices=('threads', 'tick'))
    p.add_argument('--seconds', type=float, default=30)
    p.add_argument('--inflight', type=int, default=20,
                   help='requests at once (threads, or open sockets)')
    p.add_argument('--tick-ms', type=float, default=50,
                   help='tick: how often the thread wakes (0: at every '
                        'ready socket)')
    p.add_argument('--systems', type=int, default=400)
    p.add_argument('--latency-ms', default='20-200',
                   help='the BMCs\' answer time, LOW-HIGH')
    args = p.parse_args()
    low, high = (float(x) for x in args.latency_ms.split('-'))
    queue = multiprocessing.Queue()
    bmcs = multiprocessing.Process(target=_serve, daemon=True, args=(
        queue, args.systems, (low, high)))
    bmcs.start()
    try:
        targets = queue.get(timeout=60)
        before, t0 = os.times(), time.monotonic()
        if args.mode == 'threads':
            n = threads(targets, args.seconds, args.inflight)
        else:
            n = tick(targets, args.seconds, args.inflight,
                     args.tick_ms / 1000)
        after, took = os.times(), time.monotonic() - t0
    finally:
        bmcs.kill()
        bmcs.join()
    user, system = after.user - before.user, after.system - before.system
    print(json.dumps({
        'mode': args.mode, 'inflight': args.inflight,
        'tick_ms': args.tick_ms if args.mode == 'tick' else None,
        'reads': n, 'reads_per_second': round(n / took, 1),
        'cpu_ms_per_read': round((user + system) / n * 1e3, 3),
        'user_ms_per_read': round(user / n * 1e3, 3),
        'system_ms_per_read': round(system / n * 1e3, 3)}))


if __name__ == '__main__':
    main()
