"""A conductor: registry, workers, membership, periodic tasks."""

import threading

import futurist
from oslo_log import log

from baremetal.common import exception
from baremetal.conductor import bmc_lanes
from baremetal.conductor import hash_ring
from baremetal.conductor import manager
from baremetal.conductor import periodics
from baremetal.conductor import sensor_data
from baremetal.conductor import workflows
from baremetal.conductor import step_polling
from baremetal.conductor import step_runner
from baremetal.conductor import workers
from baremetal.db import conductors as db_conductors
from baremetal.db import reservations as db_reservations
from baremetal.drivers import registry as registry_mod

LOG = log.getLogger(__name__)

WAIT_KINDS = workflows.BY_WAIT_STATE


class Conductor:
    """Everything one conductor process (or the embedded server) runs."""

    def __init__(self, conf, registry: registry_mod.Registry | None = None
                 ) -> None:
        self.conf = conf
        self.host = conf.host
        self.group = (conf.conductor.conductor_group or '').lower()
        self.registry = registry or registry_mod.Registry(conf)
        self.workers = workers.WorkerPool(conf.conductor.workers_pool_size)
        self.periodic_pool = futurist.ThreadPoolExecutor(
            max_workers=conf.conductor.sync_power_state_workers)
        self.rings = hash_ring.RingManager(conf)
        self.manager = manager.ConductorManager(self)
        self.step_poller = step_polling.StepPoller(self)
        self.power_failures: dict[str, int] = {}
        c = conf.conductor
        self.power_lanes = bmc_lanes.Lanes(
            c.sync_power_state_workers,
            c.power_sync_max_backoff // max(1, c.sync_power_state_interval))
        self.first_takeover = True
        self._periodic_worker = None
        self._periodic_thread: threading.Thread | None = None
        self.record: dict | None = None
        self.sensors = (sensor_data.SensorSender(self)
                        if conf.sensor_data.send_sensor_data else None)

    # ---- membership ----
    def register(self) -> None:
        self.record = db_conductors.register_conductor(
            self.host, self.group, self.registry.offered())
        self.rings.reset()
        LOG.info('Conductor %s registered (group "%s", hardware types %s)',
                 self.host, self.group,
                 ', '.join(sorted(self.registry.hardware_types)))

    def heartbeat(self) -> None:
        if not db_conductors.touch_conductor(self.host):
            LOG.warning('Conductor %s was missing from the database; '
                        'registering again', self.host)
            self.register()

    def serves(self, row: dict) -> bool:
        """Is the node of a hardware type and conductor group of ours?"""
        return row['driver'] in self.registry.hardware_types and \
            (row.get('conductor_group') or '').lower() == self.group

    def owns(self, row: dict) -> bool:
        """Does the hash ring map this node to us?"""
        if not self.serves(row):
            return False
        return self.rings.host_for(row['uuid'], row['driver'],
                                   row.get('conductor_group') or ''
                                   ) == self.host

    # ---- lifecycle ----
    def start(self) -> None:
        self.register()
        self._periodic_worker = periodics.build(self)
        self._periodic_thread = threading.Thread(
            target=self._periodic_worker.start, name='periodics',
            daemon=True)
        self._periodic_thread.start()

    def stop(self, graceful: bool = True) -> None:
        """Stop taking work, let running work finish (bounded), hand the
        nodes back and leave the ring."""
        self.step_poller.stop()
        if self._periodic_worker is not None:
            self._periodic_worker.stop()
            self._periodic_worker.wait()
        if graceful:
            timeout = self.conf.conductor.graceful_shutdown_timeout
            if not self.workers.wait_idle(timeout):
                LOG.warning('Conductor %s: work still running after %ss; '
                            'its nodes will be taken over', self.host,
                            timeout)
        db_conductors.unregister_conductor(self.host)
        released = db_reservations.release_reservations_of([self.host])
        for row in released:
            LOG.warning('Node %s: released at shutdown while "%s"',
                        row['uuid'], row['provision_state'])
        self.workers.shutdown(wait=False)
        self.periodic_pool.shutdown(wait=False)
        if self.sensors is not None:
            self.sensors.stop()
        self.power_lanes.shutdown()

    @staticmethod
    def wait_kind(state: str) -> step_runner.StepKind | None:
        """The kind of steps a node in wait state ``state`` runs."""
        return WAIT_KINDS.get(state)

    def resume_steps(self, task, error: str | None = None,
                     again: bool = False) -> None:
        """The async step a node waits on ended: go on (or fail;
        ``again``: run it again from its start - its command, a lost
        conductor's, failed)."""
        kind = WAIT_KINDS.get(task.node.provision_state)
        if kind is None:
            raise exception.InvalidStateRequested(
                action='resume steps', node=task.node.uuid,
                state=task.node.provision_state)
        task.upgrade_lock()
        if again:
            step_runner.run_again(task, kind)
        else:
            step_runner.resume(task, kind, error)

    def reload(self) -> None:
        """SIGHUP: mutable options were re-read by oslo.config."""
        self.rings.reset()
        LOG.info('Conductor %s reloaded its configuration', self.host)


def check_node_routable(conductor: Conductor, row: dict) -> None:
    if row['driver'] not in conductor.registry.hardware_types:
        raise exception.NoValidHost(
            reason='No conductor service registered which supports '
                   'driver %s for conductor group "%s".'
            % (row['driver'], row.get('conductor_group') or ''))
