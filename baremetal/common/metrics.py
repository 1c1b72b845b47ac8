"""Prometheus metrics of this process (prometheus-client).

One registry per process holds what the process measures: the API's
request latencies and agent callbacks, the conductor's steps, BMC and
agent requests, node locks and periodic tasks (the embedded server has
both halves).  The node counts per state are not here: the API computes
them from the database at scrape time (api/controllers/metrics.py).

Everything on a hot path is a histogram observe or a counter increment
(prometheus-client's own per-value mutex, uncontended); labelled children
are looked up once and kept in plain dicts (a lookup under the GIL, no
lock of ours).  Labels are bounded: route templates, not paths; step,
command and operation names from the code, never a node.
"""

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import prometheus_client
from prometheus_client import exposition
from prometheus_client import registry as prom_registry

from baremetal.common import agent_tokens
from baremetal.common import exception

# no ``*_created`` series beside every counter and histogram: they
# double what Prometheus stores and Grafana does not use them
prometheus_client.disable_created_metrics()
REGISTRY = prom_registry.CollectorRegistry(auto_describe=True)
prometheus_client.ProcessCollector(registry=REGISTRY)
prometheus_client.PlatformCollector(registry=REGISTRY)

_FAST = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1.0,
         2.5, 5.0, 10.0)
_REMOTE = (.01, .025, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
           120.0)
_STEPS = (.01, .1, 1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0,
          1200.0, 1800.0, 3600.0, 7200.0)
_HEARTBEATS = (1.0, 5.0, 10.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0,
               180.0, 300.0, 600.0)
_PERIODICS = (.001, .01, .05, .1, .25, .5, 1.0, 2.5, 5.0, 10.0, 30.0,
              60.0, 120.0, 300.0)

API_REQUEST_SECONDS = prometheus_client.Histogram(
    'baremetal_api_request_duration_seconds',
    'Time the API took to answer a request, authentication included, by '
    'route template, method and status class',
    ('route', 'method', 'status_class'), buckets=_FAST, registry=REGISTRY)
STEP_SECONDS = prometheus_client.Histogram(
    'baremetal_step_duration_seconds',
    'Time a clean, deploy or service step took, from its start to its '
    'end (asynchronous steps: until the conductor resumed after it)',
    ('kind', 'interface', 'step', 'outcome'), buckets=_STEPS,
    registry=REGISTRY)
BMC_REQUEST_SECONDS = prometheus_client.Histogram(
    'baremetal_bmc_request_duration_seconds',
    'Time one operation on a BMC took as the conductor saw it (IPMI: '
    'waiting for the BMC\'s gate and retries included)',
    ('protocol', 'operation'), buckets=_REMOTE, registry=REGISTRY)
BMC_ERRORS = prometheus_client.Counter(
    'baremetal_bmc_request_errors',
    'BMC operations that failed', ('protocol', 'operation'),
    registry=REGISTRY)
AGENT_COMMAND_SECONDS = prometheus_client.Histogram(
    'baremetal_agent_command_duration_seconds',
    'Time a request to ironic-python-agent\'s command API took (POST: '
    'send a command; GET: read its status), retries included',
    ('command', 'method'), buckets=_REMOTE, registry=REGISTRY)
AGENT_COMMAND_ERRORS = prometheus_client.Counter(
    'baremetal_agent_command_errors',
    'Requests to ironic-python-agent that failed (unreachable, an HTTP '
    'error or an answer that is not a command record)',
    ('command', 'method'), registry=REGISTRY)
HEARTBEAT_INTERVAL_SECONDS = prometheus_client.Histogram(
    'baremetal_agent_heartbeat_interval_seconds',
    'Time between two accepted heartbeats of one node\'s agent (the '
    'heartbeat lag), over all nodes',
    buckets=_HEARTBEATS, registry=REGISTRY)
LOOKUPS = prometheus_client.Counter(
    'baremetal_agent_lookups',
    'Agent lookups (GET /v1/lookup) by outcome: found, not_found (no '
    'node for these addresses in a state that takes a lookup) or error',
    ('outcome',), registry=REGISTRY)
LOCK_SECONDS = prometheus_client.Histogram(
    'baremetal_lock_wait_seconds',
    'Time taken to get a node\'s task (mode shared: read the node; '
    'exclusive and upgrade: take its reservation), by outcome: acquired '
    'or locked (another holder had it)',
    ('mode', 'outcome'), buckets=_FAST, registry=REGISTRY)
PERIODIC_SECONDS = prometheus_client.Histogram(
    'baremetal_periodic_task_duration_seconds',
    'Time one run of a conductor\'s periodic task took',
    ('task',), buckets=_PERIODICS, registry=REGISTRY)
PERIODIC_OVERRUNS = prometheus_client.Counter(
    'baremetal_periodic_task_overruns',
    'Runs of a periodic task that took longer than its interval (the '
    'next run started late)', ('task',), registry=REGISTRY)
LIST_READ_AHEAD = prometheus_client.Counter(
    'baremetal_api_list_read_ahead_pages',
    'Node list pages read ahead while the client read the page before '
    '(PostgreSQL, [api]list_read_ahead), by event: read (a page read '
    'ahead), used (it answered its request), stale (a transaction had '
    'committed since: the page was read again), unused (never asked '
    'for), failed (the read failed)', ('event',), registry=REGISTRY)
CONDUCTOR_CALLS_REFUSED = prometheus_client.Counter(
    'baremetal_api_conductor_calls_refused',
    'Requests baremetal-api answered 503 at once because as many as '
    '[api]max_waiting_per_conductor already waited on the conductor they '
    'were for (dead, hung or overloaded), by conductor', ('conductor',),
    registry=REGISTRY)
CONDUCTOR_CALLS_MOVED = prometheus_client.Counter(
    'baremetal_api_conductor_calls_moved',
    'Requests for a conductor that did not answer or stopped heartbeating, '
    'by conductor and outcome: rerouted (queued for it, sent to the '
    "node's new conductor instead) or given_up (sent to it, answered 503 "
    'once it stopped heartbeating, before the RPC timeout)',
    ('conductor', 'outcome'), registry=REGISTRY)
READ_AHEAD_EVENTS = ('read', 'used', 'stale', 'unused', 'failed')
_read_ahead = {e: LIST_READ_AHEAD.labels(e) for e in READ_AHEAD_EVENTS}


def list_read_ahead(event: str) -> None:
    _read_ahead[event].inc()


def conductor_call_refused(host: str) -> None:
    CONDUCTOR_CALLS_REFUSED.labels(host).inc()


def conductor_call_moved(host: str, outcome: str) -> None:
    """``outcome``: 'rerouted' or 'given_up'."""
    CONDUCTOR_CALLS_MOVED.labels(host, outcome).inc()


# ---------------------------------------------------------------- API

_METHODS = frozenset(('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE',
                      'OPTIONS'))
# no route: refused before routing (401) or a path no route serves
UNMATCHED = 'unmatched'
_api_children: dict[tuple, Any] = {}


def observe_api_request(route: str | None, method: str, status: str,
                        seconds: float) -> None:
    """One answered API request (``status``: the WSGI status line)."""
    key = (route or UNMATCHED, method if method in _METHODS else 'other',
           status[:1] + 'xx')
    child = _api_children.get(key)
    if child is None:
        child = _api_children[key] = API_REQUEST_SECONDS.labels(*key)
    child.observe(seconds)


# --------------------------------------------------------------- steps

# node UUID -> (kind, interface, step, start): the step each node of
# this conductor runs now.  One entry per node at most; an entry whose
# end this conductor never sees (a timeout, a takeover) is replaced by
# the node's next step.
_steps_running: dict[str, tuple[str, str, str, float]] = {}


def step_started(node_uuid: str, kind: str, step: dict) -> None:
    _steps_running[node_uuid] = (kind, step.get('interface') or '',
                                 step.get('step') or '', time.monotonic())


def step_ended(node_uuid: str, kind: str, step: dict,
               failed: bool = False) -> None:
    """The step ``step`` of ``node_uuid`` ended; observed when this
    conductor saw it start."""
    started = _steps_running.pop(node_uuid, None)
    if started is None:
        return
    if started[:3] != (kind, step.get('interface') or '',
                       step.get('step') or ''):
        return
    STEP_SECONDS.labels(*started[:3], 'failed' if failed
                        else 'succeeded').observe(
        time.monotonic() - started[3])


# ---------------------------------------------------- BMCs and agents

class _Timed:
    """Times a block into ``histogram`` and counts its failures in
    ``errors`` (both already labelled)."""

    __slots__ = ('histogram', 'errors', 'start')

    def __init__(self, histogram: Any, errors: Any) -> None:
        self.histogram = histogram
        self.errors = errors

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.histogram.observe(time.monotonic() - self.start)
        if exc_type is not None:
            self.errors.inc()


_remote_children: dict[tuple, tuple] = {}


def _timed(histogram: Any, errors: Any, *labels: str) -> _Timed:
    key = (histogram, *labels)
    pair = _remote_children.get(key)
    if pair is None:
        pair = _remote_children[key] = (histogram.labels(*labels),
                                        errors.labels(*labels))
    return _Timed(*pair)


def bmc_request(protocol: str, operation: str) -> _Timed:
    """``with bmc_request('redfish', 'read power state'): ...``"""
    return _timed(BMC_REQUEST_SECONDS, BMC_ERRORS, protocol, operation)


def agent_command(command: str, method: str) -> _Timed:
    return _timed(AGENT_COMMAND_SECONDS, AGENT_COMMAND_ERRORS, command,
                  method)


def agent_heartbeat(driver_internal_info: dict | None) -> None:
    """An accepted heartbeat; ``driver_internal_info`` as it was before
    it (its ``agent_last_heartbeat``: the previous one of this boot)."""
    age = agent_tokens.heartbeat_age(driver_internal_info or {})
    if age is not None:
        HEARTBEAT_INTERVAL_SECONDS.observe(max(age, 0.0))


@contextlib.contextmanager
def agent_lookup() -> Iterator[None]:
    try:
        yield
    except exception.NotFound:
        LOOKUPS.labels('not_found').inc()
        raise
    except Exception:
        LOOKUPS.labels('error').inc()
        raise
    LOOKUPS.labels('found').inc()


# --------------------------------------------------------------- locks

class _LockWait:
    __slots__ = ('mode', 'start')

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            outcome = 'acquired'
        elif issubclass(exc_type, exception.NodeLocked):
            outcome = 'locked'
        else:
            return  # no node, no database: not a wait for a lock
        child = _lock_children.get((self.mode, outcome))
        if child is None:
            child = _lock_children[(self.mode, outcome)] = \
                LOCK_SECONDS.labels(self.mode, outcome)
        child.observe(time.monotonic() - self.start)


_lock_children: dict[tuple[str, str], Any] = {}


def lock_wait(shared: bool) -> _LockWait:
    """Times getting a task: ``with lock_wait(shared): TaskManager()``"""
    return _LockWait('shared' if shared else 'exclusive')


def lock_upgrade() -> _LockWait:
    return _LockWait('upgrade')


# ----------------------------------------------------------- periodics

def task_name(fn: Callable) -> str:
    name = getattr(fn, '__name__', '') or 'task'
    code = getattr(fn, '__code__', None)
    if name == '<lambda>' and code is not None and code.co_names:
        # the conductor's tasks are ``lambda: check_timeouts(conductor)``
        # or ``lambda: conductor.heartbeat()``: the first global or
        # attribute named is the task
        return code.co_names[0]
    return name


def periodic_task(fn: Callable, name: str | None = None) -> Callable:
    """``fn`` timed as periodic task ``name`` (by default the name of
    what ``fn`` calls).  futurist's ``periodic`` decorator, applied to
    the result, sets its interval on it: a run longer than that counts
    as an overrun."""
    name = name or task_name(fn)
    histogram = PERIODIC_SECONDS.labels(name)
    overruns = PERIODIC_OVERRUNS.labels(name)

    def timed() -> Any:
        start = time.monotonic()
        try:
            return fn()
        finally:
            took = time.monotonic() - start
            histogram.observe(took)
            spacing = getattr(timed, '_periodic_spacing', None)
            if spacing and took > spacing:
                overruns.inc()
    # futurist names the task in its logs after these
    timed.__name__ = timed.__qualname__ = name
    timed.__module__ = getattr(fn, '__module__', None) or __name__
    return timed


def periodic_timers() -> dict[str, tuple[float, float]]:
    """Each periodic task measured so far: its name, how many runs and
    their total seconds (for the conductor's ``ironic.metrics``
    notification)."""
    out = {}
    for family in PERIODIC_SECONDS.collect():
        runs: dict[str, list[float]] = {}
        for sample in family.samples:
            task = sample.labels.get('task')
            if sample.name.endswith('_count'):
                runs.setdefault(task, [0.0, 0.0])[0] = sample.value
            elif sample.name.endswith('_sum'):
                runs.setdefault(task, [0.0, 0.0])[1] = sample.value
        out.update((k, (v[0], v[1])) for k, v in runs.items())
    return out


# ----------------------------------------------------------- exposition

class _Chain:
    """Several registries seen as one by the exposition functions."""

    def __init__(self, registries: tuple) -> None:
        self.registries = registries

    def collect(self) -> Iterator:
        for r in self.registries:
            yield from r.collect()


def render(accept: str | None, *extra: Any) -> tuple[bytes, str]:
    """(body, content type) of this process's metrics plus those of the
    ``extra`` registries, in the format ``accept`` asks for (Prometheus'
    text format unless it asks for OpenMetrics)."""
    encoder, content_type = exposition.choose_encoder(accept or '')
    return encoder(_Chain((REGISTRY, *extra))), content_type


def start_listener(host: str, port: int) -> Any:
    """Serve this process's metrics over HTTP on ``host``:``port`` from a
    thread of its own (any path; /metrics by convention); the server, to
    ``shutdown()``.  OSError when the address cannot be bound."""
    server, _thread = prometheus_client.start_http_server(
        port, addr=host, registry=REGISTRY)
    return server
