"""Node locks and the ``task`` every driver call receives.

``acquire(conductor, node_id, shared=...)`` returns a context manager.
An exclusive task holds ``node.reservation`` (one atomic UPDATE); leaving
the ``with`` block saves pending node changes and drops the reservation
in one UPDATE, unless work was handed to a worker with ``spawn_after``
(or ``process_event(..., callback=...)``): the worker then owns the lock
and releases it when it finishes.

A lock that cannot be released because the database is unreachable is
released (with the node's last changes) by a background thread as soon
as the database answers again: a live conductor never keeps a node
locked.  Work interrupted that way leaves the node in its last recorded
state; the takeover pass then resumes or fails it (takeover.py).
"""

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from oslo_log import log

from baremetal.common import exception
from baremetal.common import mac_address
from baremetal.common import metrics
from baremetal.common import node_locks
from baremetal.common import notifications
from baremetal.common import state_machine
from baremetal.common import step_timings
from baremetal.common import storable
from baremetal.conductor import inspection_rules
from baremetal.conductor import notify
from baremetal.conductor import power
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports
from baremetal.db import reservations as db_reservations
from baremetal.db import rows as db_rows
from baremetal import objects
from baremetal.objects import history

LOG = log.getLogger(__name__)

# what is saved of a node whose changes the database refused even with
# their texts escaped (TaskManager._release_storable)
_STATES = ('provision_state', 'target_provision_state',
           'provision_updated_at', 'power_state', 'target_power_state')
# a last_error the conductor writes about an error it did not expect
_ERROR_SIZE = 1000


class TaskManager:
    _notes: list | None = None     # notifications waiting for a save

    def __init__(self, conductor, node_id: Any, shared: bool = True,
                 purpose: str = 'unspecified action',
                 node_row: dict | None = None, wait: bool = False) -> None:
        self.conductor = conductor
        # the options of the wait for a node another task holds
        # (requests wait a little, as in Ironic; periodic tasks skip a
        # busy node): common/node_locks.py
        self.lock_wait = conductor.conf if wait else None
        self.context = None
        self.purpose = purpose
        self.shared = shared
        if node_row is not None:
            row = node_row
        elif shared:
            row = db_nodes.get_node(node_id)
        else:
            row = node_locks.retrying(
                self.lock_wait, db_reservations.reserve_node,
                conductor.host, node_id)
        self.node = objects.Node(row)
        self._spawn: tuple[Callable, tuple, dict] | None = None
        self._ports: list | None = None
        self.released = False
        self.state_before: dict | None = None
        # None, or a dict in which driver interfaces keep what they read
        # from the BMC for the rest of a read-only step of this task (the
        # power sync: its power and health reads are one request)
        self.bmc_read_cache: dict | None = None
        # the step a conductor lost midway left the node at, while this
        # task resumes it (conductor/takeover.py): the agent may still
        # be running, or have run, the command that step sent
        self.resumed_step: dict | None = None
        try:
            self.driver = conductor.registry.driver_for(self.node)
        except Exception:
            self.release_resources(save=False)
            raise

    # ---- power ----
    def power_action(self, new_state: str, timeout: int | None = None
                     ) -> None:
        """Switch the node's power (power on, power off, reboot...) the
        one way every power action takes, with its power_set
        notifications (conductor/power.py ``act``); raises what the
        driver raised.  For drivers and workflows: they never call the
        power interface to change the power themselves."""
        power.act(self, new_state, timeout)

    @contextlib.contextmanager
    def bmc_reads(self) -> Iterator[None]:
        """A stretch of reads only: what the driver reads from the BMC
        inside it is kept (``bmc_read_cache``) and read once, e.g. a
        Redfish ComputerSystem that the power, health, boot mode, BIOS
        and firmware reads all look at.  Nothing that changes the
        machine belongs inside."""
        if self.bmc_read_cache is not None:
            yield
            return
        self.bmc_read_cache = {}
        try:
            yield
        finally:
            self.bmc_read_cache = None

    # ---- locks ----
    def upgrade_lock(self) -> None:
        """Turn a shared task into an exclusive one.  The node is read
        again; what this task changed while shared is carried over,
        JSON objects key by key (objects/base.py ``rebased``), so what
        another task stored between the two reads is not overwritten.
        A caller that finds the node moved on meanwhile releases
        without saving (``release_resources(save=False)``)."""
        if not self.shared:
            return
        with metrics.lock_upgrade():
            row = node_locks.retrying(
                self.lock_wait, db_reservations.reserve_node,
                self.conductor.host, self.node.id)
        self.node = self.node.rebased(row)
        self.shared = False

    def release_resources(self, save: bool = True) -> None:
        if self.released:
            return
        if self.shared:
            self.released = True
            return
        values = self.node.changes() if save else {}
        # DatabaseUnavailable leaves the task unreleased (see _release_later)
        try:
            released = db_reservations.release_node(
                self.conductor.host, self.node.id, values)
        except exception.DatabaseUnavailable:
            raise
        except Exception as e:
            if not values:
                raise
            released, values = self._release_storable(values, e)
        self.released = True
        if self._notes:
            notify.flush(self, saved=save)
        if not released:
            LOG.warning('Node %s: reservation by %s was already gone when '
                        'releasing it after %s', self.node.uuid,
                        self.conductor.host, self.purpose)
        elif values.get('last_error'):
            history.record_changes(
                dict(self.node.as_dict(), **(self.state_before or {})),
                values, self.conductor.host)
        self.node._reset_tracking(values if save else None)
        self.state_before = None

    def _release_storable(self, values: dict, error: Exception
                          ) -> tuple[bool, dict]:
        """Release the lock when the database refused the node's changes
        (a value no database holds, one too long for its column): with
        every text made storable, else with the node's states alone and
        the error as its last_error.  A lock is never kept for a value.
        Returns (released, what was saved)."""
        LOG.error('Node %s: the database refused its changes after %s '
                  '(%s: %s); saving them with their texts escaped',
                  self.node.uuid, self.purpose, type(error).__name__, error)
        states_only = {k: v for k, v in values.items() if k in _STATES}
        states_only['last_error'] = storable.bounded(
            'The database refused the changes of %s: %s'
            % (self.purpose, error), _ERROR_SIZE)
        for candidate in (storable.deep(values), states_only):
            try:
                return db_reservations.release_node(
                    self.conductor.host, self.node.id, candidate), candidate
            except exception.DatabaseUnavailable:
                raise
            except Exception as e:
                LOG.error('Node %s: saving after %s failed again: %s',
                          self.node.uuid, self.purpose, e)
                error = e
        raise error

    def _fail_unexpected(self, error: Exception) -> None:
        """A worker that raised what nothing expected: the node leaves
        its transient state for the failure state (as any failed action
        does) instead of resting in it unlocked for good."""
        node = self.node
        if self._spawn is not None or self.released or \
                state_machine.next_state(node.provision_state,
                                         'fail') is None:
            return
        try:
            self.process_event('fail', last_error=storable.bounded(
                '%s failed unexpectedly: %s: %s'
                % (self.purpose, type(error).__name__, error), _ERROR_SIZE))
        except Exception:
            LOG.exception('Node %s: could not fail it after %s',
                          node.uuid, self.purpose)

    # ---- state machine ----
    def process_event(self, event: str, callback: Callable | None = None,
                      call_args: tuple = (), call_kwargs: dict | None = None,
                      target_state: str | None = None,
                      last_error: Any = ...) -> None:
        """Advance the provision state machine; optionally spawn work."""
        node = self.node
        current = node.provision_state
        new = state_machine.next_state(current, event)
        if new is None:
            raise exception.InvalidStateRequested(
                action=event, node=node.uuid, state=current)
        # where the node was before this transition: a history event
        # recorded with it (an error that made it fail) happened there
        self.state_before = {
            'provision_state': current,
            'target_provision_state': node.target_provision_state,
            'provision_updated_at': node.provision_updated_at}
        node.provision_state = new
        if current in step_timings.WORKING or new in step_timings.WORKING:
            step_timings.on_transition(node.driver_internal_info, current,
                                       new, event)
        if new in state_machine.STABLE_STATES:
            node.target_provision_state = None
        elif target_state is not None:
            node.target_provision_state = target_state
        elif not (event in state_machine.KEEP_TARGET_EVENTS
                  and node.target_provision_state):
            node.target_provision_state = state_machine.target_of(new)
        node.provision_updated_at = db_rows.utcnow()
        if last_error is not ...:
            node.last_error = last_error
        if notifications.ON:
            notify.provision_changed(self, event)
        if callback is not None:
            self.spawn_after(callback, *call_args, **(call_kwargs or {}))

    def spawn_after(self, fn: Callable, *args, **kwargs) -> None:
        """Run ``fn(self, *args, **kwargs)`` in a worker after the
        ``with`` block; the worker then owns the lock."""
        self._spawn = (fn, args, kwargs)

    # ---- helpers for drivers ----
    @property
    def ports(self) -> list:
        if self._ports is None:
            self._ports = [objects.Port(r)
                           for r in db_ports.of_node(self.node.id)]
        return self._ports

    def create_port(self, address: str, pxe_enabled: bool = True,
                    extra: dict | None = None) -> None:
        """A port of ``address`` (what inspection found: a BMC or an
        agent may report anything as a NIC's MAC: none is made of what
        is not a MAC address)."""
        macs = mac_address.usable([address], self.node.uuid, 'inspection')
        if not macs:
            return
        address = macs[0]
        if any(p.address == address for p in self.ports):
            return
        try:
            port = objects.Port.create({'address': address,
                                        'node_id': self.node.id,
                                        'pxe_enabled': pxe_enabled,
                                        'extra': extra or {}})
        except exception.MACAlreadyExists:
            LOG.warning('Node %s: port %s already belongs to another node',
                        self.node.uuid, address)
            return
        self.ports.append(port)

    def apply_inspection_rules(self, inventory: dict,
                               plugin_data: dict) -> None:
        """Run the inspection rules on what an out-of-band inspection
        found (conductor/inspection_rules.py); raises when a rule fails
        the inspection."""
        inspection_rules.apply(self, inventory, plugin_data)

    def poll_step_soon(self) -> None:
        """Have the conductor poll the asynchronous step the node waits
        on, soon and then backing off (conductor/step_polling.py), under
        a shared lock: for a driver that learns the step may have moved
        on (an agent's heartbeat) without waiting on the hardware."""
        kind = self.conductor.wait_kind(self.node.provision_state)
        step = getattr(self.node, kind.step_field) if kind else None
        if step:
            self.conductor.step_poller.watch(
                self.node.uuid, self.node.provision_state, step)

    def resume_steps(self, error: str | None = None) -> None:
        """A driver reports that the async step the node waits on ended
        (``error`` set: it failed)."""
        self.conductor.resume_steps(self, error)

    # ---- context manager ----
    def __enter__(self) -> 'TaskManager':
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None or self._spawn is None:
            try:
                self.release_resources(save=exc_type is None)
            except exception.DatabaseUnavailable:
                self._release_later(save=exc_type is None)
                if exc_type is None:
                    raise
            return
        fn, args, kwargs = self._spawn
        self._spawn = None
        try:
            self.conductor.workers.reserve()
        except exception.NoFreeConductorWorker:
            try:
                self.release_resources(save=False)
            except exception.DatabaseUnavailable:
                self._release_later(save=False)
            raise
        try:
            # make the transition visible before the API answers 202
            if not self.shared:
                self.node.save()
        except Exception:
            self.conductor.workers.release()
            try:
                self.release_resources(save=False)
            except exception.DatabaseUnavailable:
                self._release_later(save=False)
            raise
        if self._notes:
            notify.flush(self)
        self.conductor.workers.start(self._run, fn, args, kwargs)

    def _run(self, fn, args, kwargs) -> None:
        try:
            fn(self, *args, **kwargs)
        except exception.DatabaseUnavailable as e:
            self._spawn = None
            LOG.error('Node %s: the database was lost during %s (%s); the '
                      'node stays as last recorded, to be resumed or '
                      'failed once it answers again', self.node.uuid,
                      self.purpose, e)
        except Exception as e:
            LOG.exception('Node %s: unexpected error in %s',
                          self.node.uuid, self.purpose)
            self._fail_unexpected(e)
        finally:
            if self._spawn is not None:
                # the worker chained more work: hand the lock on
                fn2, args2, kwargs2 = self._spawn
                self._spawn = None
                try:
                    self.node.save()
                except exception.DatabaseUnavailable:
                    self._release_later()
                else:
                    if self._notes:
                        notify.flush(self)
                    self._run(fn2, args2, kwargs2)
            else:
                try:
                    self.release_resources()
                except exception.DatabaseUnavailable:
                    self._release_later()

    def _release_later(self, save: bool = True) -> None:
        """Release the lock (saving the node's changes) once the
        database answers again, from a thread of its own."""
        LOG.warning('Node %s: the database is unreachable; its lock will '
                    'be released as soon as it answers', self.node.uuid)

        def retry() -> None:
            delay = 0.2
            while not self.released:
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
                try:
                    self.release_resources(save=save)
                except exception.DatabaseUnavailable:
                    continue
                LOG.info('Node %s: lock released, the database answers '
                         'again', self.node.uuid)

        threading.Thread(target=retry, daemon=True,
                         name='release-%s' % self.node.uuid).start()


def acquire(conductor, node_id: Any, shared: bool = True,
            purpose: str = 'unspecified action',
            wait: bool = False) -> TaskManager:
    """A task on the node; ``wait``: a request's, which waits a little
    for a node another task holds (common/node_locks.py) before NodeLocked."""
    with metrics.lock_wait(shared):
        return TaskManager(conductor, node_id, shared=shared,
                           purpose=purpose, wait=wait)
