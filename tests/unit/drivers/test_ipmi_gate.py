"""The per-BMC gate of the ipmi client: one command at a time per BMC,
spaced by min_command_interval, retried until command_retry_timeout, and
never holding a worker past the deadline.  The pyghmi session is replaced
by a plain object: these tests are about our scheduling, the protocol is
tested against a virtual BMC in tests/functional/test_ipmi.py."""

import threading
import time
import types

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import ipmi as ipmi_conf
from baremetal.drivers.modules.ipmi import client


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    ipmi_conf.register_opts(c)
    c([])
    c.set_override('min_command_interval', 0.05, group='ipmi')
    c.set_override('command_retry_timeout', 1, group='ipmi')
    return c


def bmc(conf, port, monkeypatch):
    n = types.SimpleNamespace(uuid='node-%d' % port, driver_info={
        'ipmi_address': '192.0.2.1', 'ipmi_port': port})
    b = client.BMC(n, conf)
    monkeypatch.setattr(b, '_session', lambda: object())
    return b


def test_one_command_at_a_time_and_spaced(conf, monkeypatch):
    a, b = bmc(conf, 1001, monkeypatch), bmc(conf, 1001, monkeypatch)
    spans = []
    lock = threading.Lock()

    def work(_):
        start = time.monotonic()
        time.sleep(0.05)
        with lock:
            spans.append((start, time.monotonic()))

    threads = [threading.Thread(target=x.call, args=('cmd', work))
               for x in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert len(spans) == 4
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end + 0.04  # never overlapping, interval kept


def test_transient_errors_retried_fatal_ones_not(conf, monkeypatch):
    b = bmc(conf, 1002, monkeypatch)
    calls = []

    def flaky(_):
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError('timeout')
        return 'ok'
    assert b.call('cmd', flaky) == 'ok'
    assert len(calls) == 3

    calls.clear()

    def denied(_):
        calls.append(1)
        raise RuntimeError('Incorrect password provided')
    with pytest.raises(exception.IPMIFailure) as e:
        b.call('get power state', denied)
    assert len(calls) == 1
    assert 'Incorrect password' in str(e.value)
    assert 'get power state' in str(e.value)


def test_a_hung_command_frees_the_worker_and_keeps_the_bmc_busy(
        conf, monkeypatch):
    b = bmc(conf, 1003, monkeypatch)
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(exception.BMCConnectionError) as e:
        b.call('get power state', lambda _: release.wait(30))
    assert time.monotonic() - started < 4
    assert 'does not answer' in str(e.value)
    # the BMC is still "talking" to the stuck command: others wait, then
    # fail with the same clear reason instead of piling on
    with pytest.raises(exception.BMCConnectionError):
        b.call('power on', lambda _: 'never')
    release.set()
    deadline = time.monotonic() + 5
    while True:
        try:
            assert b.call('power on', lambda _: 'done') == 'done'
            break
        except exception.BMCConnectionError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_commands_and_their_failures_are_counted_for_metrics(
        conf, monkeypatch):
    from baremetal.common import metrics

    def count(name):
        return metrics.REGISTRY.get_sample_value(name, {
            'protocol': 'ipmi', 'operation': 'get power state'}) or 0
    before = (count('baremetal_bmc_request_duration_seconds_count'),
              count('baremetal_bmc_request_errors_total'))
    b = bmc(conf, 1004, monkeypatch)
    assert b.call('get power state', lambda _: 'on') == 'on'

    def denied(_):
        raise RuntimeError('Incorrect password provided')
    with pytest.raises(exception.IPMIFailure):
        b.call('get power state', denied)
    assert (count('baremetal_bmc_request_duration_seconds_count'),
            count('baremetal_bmc_request_errors_total')) == \
        (before[0] + 2, before[1] + 1)
