"""Coalescing RPC calls to one conductor into batches.

Under load an API process sends the same conductor many short calls at
once (32 clients provisioning: 16 calls in flight per conductor), and
each oslo.messaging call costs a few milliseconds of CPU between the
two processes and RabbitMQ: more than the work it asks for.  So calls
to a host are coalesced, as databases group commits: a call that finds
no batch in flight to its host is sent at once (alone: an idle system
answers as fast as before); calls that arrive while one is in flight
wait for it and then go together, as one ``call_batch`` RPC, whose
reply carries each call's result or error.  The batch is sent by the
first of its callers; the others wait for their own answer.

A batch its conductor does not answer (a timeout, or the message not
delivered: NoValidHost) is not followed by the calls queued behind it:
each gets NotSent, and the API routes it again (conductor/rpcapi.py) -
a conductor that died has them wait no second RPC timeout, one after the
other, and the API's ring may route around it by then.  Nor do they
wait for that timeout once the API routes around their conductor (its
heartbeat is ``[api]conductor_silent_after`` old: ``moved``, looked at
every ``RECHECK`` seconds while a call waits): a call still queued gets
NotSent then, and one sent (in a batch) is answered 503: GivenUp
(whether the conductor carried it out is not known, as after the
timeout).  The batch's RPC goes on in the thread of whoever sends it
(``send``, given the sender's ``moved``: it may give up waiting too).

The conductor runs a batch's calls one after the other, each with its
own request context, exactly as it runs them one at a time; an error
(NodeLocked, InvalidStateRequested, ...) belongs to its call only.  Only
calls whose handlers are quick belong in a batch (they take a lock,
check, change the state and hand the long work to a worker): a slow one
would hold up the others.
"""

import threading
from collections.abc import Callable
from typing import Any

from baremetal.common import exception
from baremetal.common import metrics

# the conductor methods whose calls are coalesced: quick handlers
BATCHED = frozenset(('do_provisioning_action', 'change_node_power_state'))

# how often a call waiting on its conductor looks whether the API still
# routes its node there (seconds)
RECHECK = 1.0

# send(host, calls, moved) -> one outcome per call: {'result': value},
# {'error': serialize_error(e)} (from the conductor) or {'raise': e};
# raises if the batch as a whole failed (GivenUp: its conductor went
# silent, ``moved()``, before it answered)
Sender = Callable[[str, list[dict], Callable[[], bool] | None], list[dict]]


def serialize_error(e: BaseException) -> dict:
    """An error of one call, for the reply (a baremetal exception keeps
    its class and message; anything else becomes a 500 with its text)."""
    out = {'type': type(e).__name__, 'message': str(e) or repr(e)}
    if isinstance(e, exception.BaremetalException):
        out['baremetal'] = True
    return out


def deserialize_error(error: dict) -> Exception:
    cls = getattr(exception, error.get('type', ''), None)
    if error.get('baremetal') and isinstance(cls, type) and issubclass(
            cls, exception.BaremetalException):
        return cls(error['message'])
    return exception.BaremetalException(
        'Conductor error: %s: %s' % (error.get('type'),
                                     error.get('message')))


class NotSent(Exception):
    """A call queued behind a batch that its conductor did not answer
    (``cause``): not sent to it."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


class GivenUp(exception.NoValidHost):
    """A call sent to a conductor that went silent before it answered:
    not waited for any longer."""

    def __init__(self, host: str) -> None:
        super().__init__(reason=gone(host, sent=True))


def gone(host: str, sent: bool) -> str:
    return ('Conductor %s stopped heartbeating before it answered; the '
            'request was %s. Retry later.'
            % (host, 'sent to it and may or may not have been carried out'
               if sent else 'not sent to it'))


def moved_now(moved: Callable[[], bool]) -> bool:
    """``moved()``, False when it cannot tell (the rings unreadable)."""
    try:
        return moved()
    except Exception:
        return False


class _Call:
    __slots__ = ('call', 'moved', 'ready', 'outcome', 'batch', 'left')

    def __init__(self, call: dict, moved) -> None:
        self.call = call
        self.moved = moved
        self.ready = threading.Event()
        self.outcome: dict | None = None      # {'result'}/{'error'}/{'raise'}
        self.batch: list[_Call] | None = None   # set: send these
        self.left = False       # gave up waiting (GivenUp, counted)


class Coalescer:
    def __init__(self, send: Sender) -> None:
        self._send = send
        self._lock = threading.Lock()
        self._busy: set[str] = set()
        self._pending: dict[str, list[_Call]] = {}

    def call(self, host: str, call: dict,
             moved: Callable[[], bool] | None = None) -> Any:
        """``call`` = {'method', 'context', 'kwargs'}: its result, or its
        error raised.  ``moved()``: whether ``host`` went silent and
        the API routes the call's node to another conductor now."""
        me = _Call(call, moved)
        with self._lock:
            if host in self._busy:
                self._pending.setdefault(host, []).append(me)
                batch = None
            else:
                self._busy.add(host)
                batch = [me]
        if batch is None:
            self._wait(host, me, moved)
            batch = me.batch        # None: answered by another's batch
        if batch is not None:
            self._run(host, batch)
        outcome = me.outcome
        if 'raise' in outcome:
            raise outcome['raise']
        if 'error' in outcome:
            raise deserialize_error(outcome['error'])
        return outcome['result']

    def _wait(self, host: str, me: _Call,
              moved: Callable[[], bool] | None) -> None:
        """Until ``me`` is answered or is to send the next batch; raises
        once its conductor went silent and its node is routed elsewhere
        (``moved``): NotSent while it is still queued, GivenUp once
        another caller sent it."""
        while not me.ready.wait(None if moved is None else RECHECK):
            if not moved_now(moved):
                continue
            with self._lock:
                if me.batch is not None or me.outcome is not None:
                    break       # it sends the next batch, or answered
                queue = self._pending.get(host)
                queued = queue is not None and me in queue
                if queued:
                    queue.remove(me)
                    if not queue:
                        del self._pending[host]
                else:
                    me.left = True
            if queued:
                raise NotSent(exception.NoValidHost(
                    reason=gone(host, sent=False)))
            metrics.conductor_call_moved(host, 'given_up')
            raise GivenUp(host)
        me.ready.wait()

    def _run(self, host: str, batch: list[_Call]) -> None:
        """Send ``batch``, answer its callers, hand what queued meanwhile
        to the first of those callers (who sends it as the next batch)."""
        unanswered = None       # the conductor did not answer the batch
        try:
            outcomes = self._send(host, [c.call for c in batch],
                                  batch[0].moved)
            if len(outcomes) != len(batch):
                raise exception.BaremetalException(
                    'Conductor %s answered %d calls of %d'
                    % (host, len(outcomes), len(batch)))
        except Exception as e:
            outcomes = [{'raise': e}] * len(batch)
            if isinstance(e, exception.NoValidHost):
                unanswered = e
            if isinstance(e, GivenUp):
                # queued behind it: not sent, routed again
                unanswered = exception.NoValidHost(
                    reason=gone(host, sent=False))
        # each caller's outcome, the next batch's sender and the calls
        # not sent: all under the lock a caller that stops waiting takes
        # (one popped to be answered NotSent must not think it was sent)
        with self._lock:
            nxt = self._pending.pop(host, None)
            if not nxt or unanswered is not None:
                self._busy.discard(host)
            else:
                nxt[0].batch = nxt
            given_up = [c for c in batch if not c.left] \
                if isinstance(outcomes[0].get('raise'), GivenUp) else ()
            for c, outcome in zip(batch, outcomes, strict=True):
                c.outcome = outcome
            if nxt and unanswered is not None:
                for c in nxt:
                    c.outcome = {'raise': NotSent(unanswered)}
        for _ in given_up:
            metrics.conductor_call_moved(host, 'given_up')
        for c in batch:
            c.ready.set()
        if nxt and unanswered is not None:
            for c in nxt:
                c.ready.set()
        elif nxt:
            nxt[0].ready.set()
