"""baremetal-api's bound on the requests that wait on one conductor
([api]max_waiting_per_conductor): a conductor that died or hangs holds
at most that many of the API's threads; one request more for it is a
503 at once, saying why, while requests for other conductors go on.
Calls coalesced into batches count as waiting too.  (The same over
RabbitMQ with a conductor killed: tests/functional/
test_dead_conductor_holds_few_threads.py.)"""

import functools
import threading
import types

import pytest

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import rpc
from baremetal.conductor import rpcapi


def _api(monkeypatch, api_workers=None, limit=None, threads=64):
    monkeypatch.setattr(rpc, 'client', lambda conf, timeout: object())
    conf = types.SimpleNamespace(
        rpc_response_timeout_api=60,
        api=types.SimpleNamespace(api_workers=api_workers,
                                  max_waiting_per_conductor=limit,
                                  conductor_silent_after=None),
        conductor=types.SimpleNamespace(heartbeat_interval=10,
                                        heartbeat_timeout=60))
    return rpcapi.ConductorAPI(conf, threads=threads)


class _Conductors:
    """``_rpc`` of a ConductorAPI: calls to ``dead`` wait until
    released (and then fail as a timeout would), others answer."""

    def __init__(self, api) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.sent: list[tuple[str, str]] = []
        api._rpc = self._rpc

    def _rpc(self, host, method, context, **kwargs):
        self.sent.append((host, method))
        if host == 'dead':
            self.entered.release()
            self.release.wait(30)
            raise exception.NoValidHost(reason='timed out')
        if method == 'call_batch':
            return [{'result': 'done'} for _ in kwargs['calls']]
        return 'done'


def _refused(host):
    return metrics.CONDUCTOR_CALLS_REFUSED.labels(host)._value.get()


def _moved(host, outcome):
    return metrics.CONDUCTOR_CALLS_MOVED.labels(host, outcome)._value.get()


@pytest.mark.parametrize('method', ['validate_driver_interfaces',
                                    'do_provisioning_action'],
                         ids=['alone', 'batched'])
def test_a_silent_conductor_holds_at_most_its_share(monkeypatch, method):
    api = _api(monkeypatch, api_workers=8)       # half of 8 may wait
    conductors = _Conductors(api)
    outcomes = []

    def call():
        try:
            api._call(None, method, {}, host='dead', node_id='n')
            outcomes.append('answered')
        except exception.NoValidHost as e:
            outcomes.append(str(e))

    waiting = [threading.Thread(target=call) for _ in range(4)]
    for t in waiting:
        t.start()
    # the four are in: one sent (a batch holds the others behind it),
    # or four sent
    conductors.entered.acquire(timeout=10)
    deadline = threading.Event()
    for _ in range(200):
        if api._waiting_on.get('dead') == 4:
            break
        deadline.wait(0.01)
    assert api._waiting_on == {'dead': 4}
    before = _refused('dead')
    # a fifth for the silent one is refused without waiting
    with pytest.raises(exception.NoValidHost) as e:
        api._call(None, method, {}, host='dead', node_id='n5')
    assert 'Conductor dead has not answered the 4 requests waiting on ' \
        'it yet ([api]max_waiting_per_conductor)' in str(e.value)
    assert e.value.code == 503
    assert _refused('dead') == before + 1
    # another conductor's requests go on meanwhile
    assert api._call(None, method, {}, host='alive',
                     node_id='m') == 'done'
    assert all(t.is_alive() for t in waiting)
    conductors.release.set()
    for t in waiting:
        t.join(10)
    assert outcomes == ['timed out'] * 4
    assert api._waiting_on == {} and api.waiting() == 0
    # once they are answered, the conductor takes requests again
    conductors.release.clear()
    threading.Timer(0.05, conductors.release.set).start()
    with pytest.raises(exception.NoValidHost, match='timed out'):
        api._call(None, method, {}, host='dead', node_id='n6')


def test_the_share_is_half_the_threads_unless_set(monkeypatch):
    assert _api(monkeypatch)._per_conductor == 32
    assert _api(monkeypatch, threads=10)._per_conductor == 5
    assert _api(monkeypatch, api_workers=1)._per_conductor == 1
    assert _api(monkeypatch, api_workers=8, limit=7)._per_conductor == 7


class _Queued(types.SimpleNamespace):
    """Verbs for nodes the API routes to 'dead' (``route['to']``): the
    first (n0) sent and held there, three (n1-n3) queued behind it;
    ``outcomes``: each one's result or error message."""


def _queued_behind_the_dead(monkeypatch) -> _Queued:
    api = _api(monkeypatch, api_workers=16)
    q = _Queued(api=api, conductors=_Conductors(api), route={'to': 'dead'},
                outcomes={})
    monkeypatch.setattr(api, 'host_for', lambda node: q.route['to'])
    # 'dead' is silent once the ring routes around it, unless told
    q.silent = None
    monkeypatch.setattr(api.rings, 'is_silent', lambda host: (
        q.route['to'] != host if q.silent is None else q.silent))
    q.call = functools.partial(_verb, api, q.outcomes)
    q.first = threading.Thread(target=q.call, args=('n0',))
    q.first.start()
    assert q.conductors.entered.acquire(timeout=10)
    q.queued = [threading.Thread(target=q.call, args=('n%d' % i,))
                for i in range(1, 4)]
    for t in q.queued:
        t.start()
    for _ in range(500):
        if len(api._batches._pending.get('dead', ())) == 3:
            break
        threading.Event().wait(0.01)
    return q


def _verb(api, outcomes, n):
    try:
        outcomes[n] = api._call({'uuid': n}, 'do_provisioning_action', {},
                                node_id=n)
    except exception.NoValidHost as e:
        outcomes[n] = str(e)


def test_calls_queued_for_a_conductor_that_did_not_answer_go_elsewhere(
        monkeypatch):
    """Provision verbs queued behind a batch to a conductor that did not
    answer it are not sent to it: routed again, they go to the conductor
    the API's ring now gives their nodes (it routes around a silent
    one), or, when it still gives that one, are answered 503 at once."""
    q = _queued_behind_the_dead(monkeypatch)
    api, conductors, route, outcomes, call = (q.api, q.conductors, q.route,
                                              q.outcomes, q.call)
    first, queued = q.first, q.queued
    assert len(api._batches._pending['dead']) == 3
    route['to'] = 'alive'           # the ring routes around it now
    conductors.release.set()
    for t in [first] + queued:
        t.join(10)
    assert outcomes == {'n0': 'timed out', 'n1': 'done', 'n2': 'done',
                        'n3': 'done'}
    assert conductors.sent.count(('dead', 'call_batch')) == 1
    assert api.waiting() == 0
    # still routed to it: 503 at once, not sent
    conductors.release.clear()
    route['to'] = 'dead'
    first = threading.Thread(target=call, args=('m0',))
    first.start()
    assert conductors.entered.acquire(timeout=10)
    queued = threading.Thread(target=call, args=('m1',))
    queued.start()
    for _ in range(500):
        if api._batches._pending.get('dead'):
            break
        threading.Event().wait(0.01)
    conductors.release.set()
    for t in (first, queued):
        t.join(10)
    assert outcomes['m0'] == outcomes['m1'] == 'timed out'
    assert conductors.sent.count(('dead', 'call_batch')) == 2


def test_calls_queued_for_a_silent_conductor_go_elsewhere_at_once(
        monkeypatch):
    """Verbs queued behind a batch the dead conductor holds go to the
    conductor the ring gives their nodes as soon as it routes around the
    dead one, without waiting for that batch's RPC timeout; the verb
    that sent the batch is answered 503 then (it may or may not have
    been carried out), its RPC left to time out alone; so is a call
    sent on its own (an agent's lookup)."""
    from baremetal.common import rpc_batch
    monkeypatch.setattr(rpc_batch, 'RECHECK', 0.01)
    q = _queued_behind_the_dead(monkeypatch)
    api, conductors, route, outcomes = (q.api, q.conductors, q.route,
                                        q.outcomes)
    first, queued = q.first, q.queued
    alone = {}

    def lookup():
        try:
            alone['n9'] = api._call({'uuid': 'n9'}, 'get_node_with_token',
                                    {}, node_id='n9')
        except exception.NoValidHost as e:
            alone['n9'] = e
    looking = threading.Thread(target=lookup)
    looking.start()
    assert conductors.entered.acquire(timeout=10)
    rerouted = _moved('dead', 'rerouted')
    given_up = _moved('dead', 'given_up')
    route['to'] = 'alive'           # the ring routes around it now
    for t in [first, looking] + queued:
        t.join(10)
        assert not t.is_alive()
    assert outcomes == {
        'n0': rpc_batch.gone('dead', sent=True), 'n1': 'done',
        'n2': 'done', 'n3': 'done'}
    assert type(alone['n9']) is rpc_batch.GivenUp
    assert alone['n9'].code == 503
    assert _moved('dead', 'rerouted') == rerouted + 3
    assert _moved('dead', 'given_up') == given_up + 2
    assert api.waiting() == 0       # the RPCs go on in threads of their own
    conductors.release.set()
    assert conductors.sent.count(('dead', 'call_batch')) == 1


def test_calls_queued_for_a_conductor_that_answers_stay_with_it(
        monkeypatch):
    """The ring routing a node elsewhere for another reason than its
    conductor's silence (a conductor joined) does not take the calls
    waiting on that conductor away from it: it still answers."""
    from baremetal.common import rpc_batch
    monkeypatch.setattr(rpc_batch, 'RECHECK', 0.01)
    q = _queued_behind_the_dead(monkeypatch)
    q.silent = False
    q.route['to'] = 'joined'
    threading.Event().wait(0.2)     # twenty looks at the ring
    assert len(q.api._batches._pending['dead']) == 3
    assert q.first.is_alive() and not q.outcomes
    q.conductors.release.set()
    for t in [q.first] + q.queued:
        t.join(10)
    assert q.outcomes['n0'] == 'timed out'
