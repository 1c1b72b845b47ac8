"""The process's Prometheus metrics: labels, outcomes, exposition."""

import datetime
import time
import urllib.request

import pytest
from futurist import periodics
from prometheus_client import parser

from baremetal.common import exception
from baremetal.common import metrics
from tests.functional import processes


def value(name: str, **labels) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def test_api_requests_are_labelled_by_route_method_and_status_class():
    labels = {'route': '/v1/nodes/{node}', 'method': 'GET',
              'status_class': '4xx'}
    before = value('baremetal_api_request_duration_seconds_count',
                   **labels)
    metrics.observe_api_request('/v1/nodes/{node}', 'GET', '404 Not Found',
                                0.002)
    assert value('baremetal_api_request_duration_seconds_count',
                 **labels) == before + 1
    # bounded: an unknown method is "other", no route is "unmatched"
    odd = {'route': 'unmatched', 'method': 'other', 'status_class': '4xx'}
    before = value('baremetal_api_request_duration_seconds_count', **odd)
    metrics.observe_api_request(None, 'BREW', '405 Method Not Allowed',
                                0.001)
    assert value('baremetal_api_request_duration_seconds_count',
                 **odd) == before + 1


def test_a_step_is_observed_from_its_start_to_its_end():
    step = {'interface': 'deploy', 'step': 'erase_devices'}
    ok = {'kind': 'clean', 'interface': 'deploy', 'step': 'erase_devices',
          'outcome': 'succeeded'}
    failed = dict(ok, outcome='failed')
    before = (value('baremetal_step_duration_seconds_count', **ok),
              value('baremetal_step_duration_seconds_count', **failed))
    metrics.step_started('node-a', 'clean', step)
    metrics.step_ended('node-a', 'clean', step)
    metrics.step_started('node-a', 'clean', step)
    metrics.step_ended('node-a', 'clean', step, failed=True)
    # an end this conductor did not see start, or of another step, is
    # not a duration
    metrics.step_ended('node-a', 'clean', step)
    metrics.step_started('node-b', 'clean', step)
    metrics.step_ended('node-b', 'clean', {'interface': 'deploy',
                                           'step': 'other'})
    assert (value('baremetal_step_duration_seconds_count', **ok),
            value('baremetal_step_duration_seconds_count', **failed)) == \
        (before[0] + 1, before[1] + 1)


def test_bmc_requests_are_timed_and_their_failures_counted():
    labels = {'protocol': 'redfish', 'operation': 'read power state'}
    before = (value('baremetal_bmc_request_duration_seconds_count',
                    **labels),
              value('baremetal_bmc_request_errors_total', **labels))
    with metrics.bmc_request('redfish', 'read power state'):
        pass
    with pytest.raises(exception.RedfishError):
        with metrics.bmc_request('redfish', 'read power state'):
            raise exception.RedfishError(error='boom')
    assert (value('baremetal_bmc_request_duration_seconds_count',
                  **labels),
            value('baremetal_bmc_request_errors_total', **labels)) == \
        (before[0] + 2, before[1] + 1)


def test_lock_waits_say_whether_the_lock_was_taken():
    def count(mode, outcome):
        return value('baremetal_lock_wait_seconds_count', mode=mode,
                     outcome=outcome)
    before = (count('exclusive', 'acquired'), count('exclusive', 'locked'),
              count('shared', 'acquired'))
    with metrics.lock_wait(False):
        pass
    with pytest.raises(exception.NodeLocked):
        with metrics.lock_wait(False):
            raise exception.NodeLocked(node='n', host='h')
    with pytest.raises(exception.NodeNotFound):
        # no node: nothing waited for a lock
        with metrics.lock_wait(False):
            raise exception.NodeNotFound(node='n')
    with metrics.lock_wait(True):
        pass
    assert (count('exclusive', 'acquired'), count('exclusive', 'locked'),
            count('shared', 'acquired')) == \
        (before[0] + 1, before[1] + 1, before[2] + 1)


calls = []


def check_timeouts(conductor):
    calls.append(conductor)
    time.sleep(0.002)   # longer than the interval below, whatever clock


def test_periodic_tasks_are_named_timed_and_their_overruns_counted():
    conductor = object()
    task = periodics.periodic(0.001)(metrics.periodic_task(
        lambda: check_timeouts(conductor)))
    runs = value('baremetal_periodic_task_duration_seconds_count',
                 task='check_timeouts')
    overruns = value('baremetal_periodic_task_overruns_total',
                     task='check_timeouts')
    task()
    assert calls[-1] is conductor
    assert value('baremetal_periodic_task_duration_seconds_count',
                 task='check_timeouts') == runs + 1
    # it took longer than its interval
    assert value('baremetal_periodic_task_overruns_total',
                 task='check_timeouts') == overruns + 1

    slow = periodics.periodic(3600)(metrics.periodic_task(
        lambda: conductor.__class__(), name='hourly'))
    slow()
    assert value('baremetal_periodic_task_overruns_total',
                 task='hourly') == 0


def test_task_names_of_the_conductors_lambdas():
    conductor = object()
    assert metrics.task_name(lambda: conductor.heartbeat()) == 'heartbeat'
    assert metrics.task_name(
        lambda: metrics.task_name(conductor)) == 'metrics'

    def named():
        pass
    assert metrics.task_name(named) == 'named'


def test_heartbeat_interval_is_the_time_since_the_previous_one():
    before = value('baremetal_agent_heartbeat_interval_seconds_count')
    le_60 = value('baremetal_agent_heartbeat_interval_seconds_bucket',
                  le='60.0')
    le_20 = value('baremetal_agent_heartbeat_interval_seconds_bucket',
                  le='20.0')
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    last = (now - datetime.timedelta(seconds=45)).isoformat()
    metrics.agent_heartbeat({'agent_last_heartbeat': last})
    # the first heartbeat of a boot, or garbage: nothing to measure
    metrics.agent_heartbeat({})
    metrics.agent_heartbeat(None)
    metrics.agent_heartbeat({'agent_last_heartbeat': 'yesterday'})
    assert value('baremetal_agent_heartbeat_interval_seconds_count') == \
        before + 1
    assert value('baremetal_agent_heartbeat_interval_seconds_bucket',
                 le='60.0') == le_60 + 1
    assert value('baremetal_agent_heartbeat_interval_seconds_bucket',
                 le='20.0') == le_20


def test_lookups_are_counted_by_outcome():
    def count(outcome):
        return value('baremetal_agent_lookups_total', outcome=outcome)
    before = [count(o) for o in ('found', 'not_found', 'error')]
    with metrics.agent_lookup():
        pass
    for exc in (exception.NodeNotFound(node='x'),
                exception.InvalidParameterValue(err='bad')):
        with pytest.raises(type(exc)):
            with metrics.agent_lookup():
                raise exc
    assert [count(o) for o in ('found', 'not_found', 'error')] == \
        [b + 1 for b in before]


def test_render_speaks_both_text_formats():
    body, ctype = metrics.render(None)
    assert ctype.startswith('text/plain; version=0.0.4')
    names = {f.name for f in parser.text_string_to_metric_families(
        body.decode())}
    assert {'baremetal_api_request_duration_seconds',
            'baremetal_bmc_request_errors',
            'process_resident_memory_bytes'} <= names
    assert b'_created' not in body
    body, ctype = metrics.render(
        'application/openmetrics-text;version=1.0.0,text/plain;q=0.5')
    assert ctype.startswith('application/openmetrics-text')
    assert body.endswith(b'# EOF\n')


def test_the_listener_serves_the_registry():
    port = processes.free_port()
    server = metrics.start_listener('127.0.0.1', port)
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port,
                                    timeout=10) as r:
            text = r.read().decode()
        families = {f.name for f in
                    parser.text_string_to_metric_families(text)}
        assert 'baremetal_step_duration_seconds' in families
        # the fleet's node counts are the API's, not a conductor's
        assert 'baremetal_nodes_by_provision_state' not in families
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(OSError):
        # a port taken: the conductor stops with a clear message
        busy = metrics.start_listener('127.0.0.1', processes.free_port())
        try:
            metrics.start_listener('127.0.0.1', busy.server_address[1])
        finally:
            busy.shutdown()
            busy.server_close()


def test_the_conductor_listener_follows_its_options():
    from baremetal.cmd import common
    from tests import harness
    harness.configure()
    try:
        assert common.start_metrics_listener() is None     # port 0: off
        busy = metrics.start_listener('127.0.0.1', processes.free_port())
        try:
            harness.CONF.set_override('conductor_listen_port',
                                      busy.server_address[1], 'metrics')
            with pytest.raises(common.CannotStart) as e:
                common.start_metrics_listener()
            assert 'conductor_listen_host, conductor_listen_port' in \
                str(e.value)
        finally:
            busy.shutdown()
            busy.server_close()
        port = processes.free_port()
        harness.CONF.set_override('conductor_listen_port', port, 'metrics')
        server = common.start_metrics_listener()
        try:
            with urllib.request.urlopen(
                    'http://127.0.0.1:%d/metrics' % port, timeout=10) as r:
                assert b'baremetal_lock_wait_seconds' in r.read()
        finally:
            server.shutdown()
            server.server_close()
    finally:
        harness.CONF.reset()
