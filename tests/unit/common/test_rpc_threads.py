"""The threads baremetal-api runs the RPCs it waits on in: each RPC gets
a thread at once while none is idle (one blocked on a dead conductor
never holds up another), idle ones are reused and end after a while,
and a process exits without waiting for an RPC still blocked."""

import subprocess
import sys
import threading
import time

import pytest

from baremetal.common import rpc_threads


def test_results_and_errors_come_back_and_threads_are_reused():
    pool = rpc_threads.RpcThreads(4)
    assert pool.submit(lambda: 42).result(5) == 42
    with pytest.raises(KeyError):
        pool.submit(lambda: {}['x']).result(5)
    for n in range(20):
        assert pool.submit(lambda n=n: n * 2).result(5) == n * 2
    assert pool.threads() == 1


def test_a_blocked_rpc_holds_up_no_other():
    pool = rpc_threads.RpcThreads(4)
    release = threading.Event()
    blocked = pool.submit(lambda: release.wait(10))
    assert pool.submit(lambda: 'other').result(5) == 'other'
    assert not blocked.done() and pool.threads() == 2
    release.set()
    assert blocked.result(5) is True


def test_beyond_the_most_work_waits_for_a_thread():
    pool = rpc_threads.RpcThreads(1)
    release = threading.Event()
    first = pool.submit(lambda: release.wait(10))
    second = pool.submit(lambda: 'then')
    time.sleep(0.05)
    assert not second.done() and pool.threads() == 1
    release.set()
    assert second.result(5) == 'then' and first.result(5) is True
    # the one thread is idle again: the next goes at once
    assert pool.submit(lambda: 'again').result(5) == 'again'
    assert pool.threads() == 1


def test_idle_threads_end(monkeypatch):
    monkeypatch.setattr(rpc_threads, 'IDLE_FOR', 0.05)
    pool = rpc_threads.RpcThreads(4)
    release = threading.Event()
    futures = [pool.submit(lambda: release.wait(10)) for _ in range(3)]
    assert pool.threads() == 3
    release.set()
    for f in futures:
        f.result(5)
    deadline = time.monotonic() + 5
    while pool.threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pool.threads() == 0
    assert pool.submit(lambda: 'new').result(5) == 'new'


def test_a_process_exits_without_waiting_for_a_blocked_rpc():
    code = ('import threading\n'
            'from baremetal.common import rpc_threads\n'
            'pool = rpc_threads.RpcThreads(2)\n'
            'pool.submit(threading.Event().wait)\n'
            'print("submitted", flush=True)\n')
    # (a pool whose threads are joined at exit would never return)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'submitted'
