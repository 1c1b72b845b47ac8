"""Polls an asynchronous step soon after it starts, backing off.

A step that goes on asynchronously on an interface that can tell when
it is done (``polls_steps``: an agent command, a BIOS change the BMC
applies) is polled 0.1 s after it starts, then at doubling intervals up
to ``[agent]command_poll_max_interval``, so a node moves on as soon as
its step ends instead of at the next heartbeat or periodic poll.  The
periodic ``poll_async_steps`` stays the fallback (a conductor that took
the node over, a restart).

One thread keeps the schedule; each poll runs in the periodic pool on a
shared task and takes the node's lock only to resume it.  This poller
and the periodic poll never poll one node at once (``polling``).
"""

import contextlib
import dataclasses
import heapq
import itertools
import threading
import time
from collections.abc import Iterator

from oslo_log import log

from baremetal.common import exception
from baremetal.conductor import task_manager

LOG = log.getLogger(__name__)

FIRST_INTERVAL = 0.1


@dataclasses.dataclass
class _Watch:
    node: str
    state: str                  # the wait state the node is in
    step: tuple                 # (interface, step) waited on
    interval: float = FIRST_INTERVAL

    @property
    def key(self) -> tuple:
        return (self.node, self.state, self.step)


class StepPoller:
    def __init__(self, conductor) -> None:
        self.conductor = conductor
        self._heap: list = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._watched: set[tuple] = set()
        self._busy: set[str] = set()

    def watch(self, node_uuid: str, state: str, step: dict) -> None:
        """Start polling the step ``node_uuid`` waits on in ``state``
        (once: a step already watched is not watched twice)."""
        w = _Watch(node_uuid, state,
                   (step.get('interface'), step.get('step')))
        with self._cv:
            if w.key in self._watched:
                return
            self._watched.add(w.key)
        self._push(w)

    def watches(self, node_uuid: str, state: str, step: dict) -> bool:
        """Whether the step ``node_uuid`` waits on in ``state`` is polled
        here (the periodic poll leaves it alone)."""
        key = (node_uuid, state, (step.get('interface'), step.get('step')))
        with self._cv:
            return key in self._watched

    @contextlib.contextmanager
    def polling(self, node_uuid: str) -> Iterator[bool]:
        """True: this thread polls the node's step; False: another poll
        of this conductor is at it.  The step poller's and the periodic
        poll may both find one step finished: only one may act on it (a
        firmware update's next component would be sent twice)."""
        with self._cv:
            mine = node_uuid not in self._busy
            if mine:
                self._busy.add(node_uuid)
        try:
            yield mine
        finally:
            if mine:
                with self._cv:
                    self._busy.discard(node_uuid)

    def _push(self, w: _Watch) -> None:
        with self._cv:
            if self._stopped:
                return
            heapq.heappush(self._heap, (time.monotonic() + w.interval,
                                        next(self._seq), w))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name='step-poller', daemon=True)
                self._thread.start()
            self._cv.notify()

    def stop(self) -> None:
        with self._cv:
            self._stopped = True
            self._heap.clear()
            self._watched.clear()
            self._cv.notify()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._stopped and (
                        not self._heap or
                        self._heap[0][0] > time.monotonic()):
                    timeout = (self._heap[0][0] - time.monotonic()
                               if self._heap else None)
                    self._cv.wait(timeout)
                if self._stopped:
                    return
                _, _, w = heapq.heappop(self._heap)
            try:
                self.conductor.periodic_pool.submit(self._poll, w)
            except RuntimeError:
                return      # the pool was shut down

    def _poll(self, w: _Watch) -> None:
        try:
            again = self._poll_once(w)
        except (exception.NodeLocked, exception.NoFreeConductorWorker):
            again = True    # busy now: look again later
        except exception.NodeNotFound:
            again = False
        except Exception:
            LOG.exception('Node %s: polling its step failed', w.node)
            again = True
        if again:
            w.interval = min(w.interval * 2,
                             self.conductor.conf.agent
                             .command_poll_max_interval)
            self._push(w)
        else:
            with self._cv:
                self._watched.discard(w.key)

    def _poll_once(self, w: _Watch) -> bool:
        """Poll once; True to poll again."""
        with self.polling(w.node) as mine:
            if not mine:
                return True     # the periodic poll is at it: look later
            return self._poll_unshared(w)

    def _poll_unshared(self, w: _Watch) -> bool:
        with task_manager.acquire(self.conductor, w.node, shared=True,
                                  purpose='poll step') as task:
            if not self._still_waiting(task.node, w):
                # a node locked may not have saved its wait yet: the
                # task that started the step watches it before it
                # releases the node (a poll under load found it still
                # cleaning and dropped the watch, leaving the step to
                # the periodic poll); look again once it is released
                return task.node.reservation is not None
            return poll_and_resume(
                self.conductor, task,
                lambda node: self._still_waiting(node, w))

    def _still_waiting(self, node, w: _Watch) -> bool:
        if node.provision_state != w.state:
            return False
        kind = self.conductor.wait_kind(node.provision_state)
        if kind is None:
            return False
        step = getattr(node, kind.step_field) or {}
        return (step.get('interface'), step.get('step')) == w.step


def poll_and_resume(conductor, task, still_waiting) -> bool:
    """Poll the step the node of the shared ``task`` waits on; True
    while it goes on.

    When it has finished (or polling it raised: the step failed), take
    the node's lock and resume its steps - unless the node moved on
    while this polled (``still_waiting(node)`` false: resumed by another
    conductor's poll, aborted), when nothing of this poll is kept: what
    it found is about a step done with."""
    kind = conductor.wait_kind(task.node.provision_state)
    if kind is None:
        return False
    step = getattr(task.node, kind.step_field) or {}
    iface = task.driver.interfaces.get(step.get('interface'))
    if iface is None or not getattr(iface, 'polls_steps', False):
        return False
    again = False
    try:
        finished, error = iface.poll_step(task, step), None
    except exception.AdoptedCommandFailed as e:
        # sent by a conductor lost since, for a step that may run again:
        # it may have failed for want of that conductor; run once more
        finished, error, again = True, None, True
        LOG.warning('Node %s: %s; running step %s.%s again', task.node.uuid,
                    e, step.get('interface'), step.get('step'))
    except Exception as e:
        finished, error = True, str(e) or repr(e)
    if not finished:
        return True
    task.upgrade_lock()
    if not still_waiting(task.node):
        task.release_resources(save=False)
        return False
    conductor.resume_steps(task, error, again)
    return False
