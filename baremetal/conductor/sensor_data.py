"""Sensor data notifications: each node's BMC readings, periodically,
as Ironic's conductor sends them ([sensor_data] options).

Every ``[sensor_data]interval`` seconds a conductor reads, through the
node's management interface (``get_sensors_data``), the sensors of the
nodes the hash ring gives it (deployed ones only unless
``enable_for_undeployed_nodes``), at most ``workers`` at once, and sends
one ``hardware.<driver>.metrics`` notification per node::

    {"message_id": ..., "instance_uuid": ..., "node_uuid": ...,
     "node_name": ..., "event_type": "hardware.<driver>.metrics.update",
     "timestamp": "2026-01-02T03:04:05.000006",
     "payload": {"<sensor type>": {"<sensor id>": {...}}, ...}}

Nodes in maintenance or held by a task are skipped: the task may be
talking to the same BMC.  The reading runs under a shared lock (no
exclusive lock is held while the BMC answers), and a BMC that fails is
logged and skipped until the next round.

With ``[sensor_data]enable_for_conductor`` each round also sends the
conductor's own ``ironic.metrics`` notification, as Ironic's conductor
does with its ``collector`` metrics backend: a timer (runs and their
total milliseconds) per periodic task, named as the ConductorManager
method Ironic times for the same job (``conductor_message``), which
ironic-prometheus-exporter turns into ``ironic_conductormanager_<task>``
gauges labelled with the conductor's host name.
"""

import concurrent.futures
import datetime
import uuid

import futurist
from oslo_log import log

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import notifications
from baremetal.conductor import task_manager
from baremetal.db import nodes as db_nodes

LOG = log.getLogger(__name__)

# what ironic-prometheus-exporter's header parser reads
TIMESTAMP_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'


def filter_types(data: dict, data_types: list[str]) -> dict:
    """Only the sensor types ``[sensor_data]data_types`` names (without
    case); everything with ``ALL``."""
    allowed = {t.lower() for t in data_types}
    if 'all' in allowed:
        return data
    return {k: v for k, v in data.items() if k.lower() in allowed}


def message(node, data: dict) -> dict:
    """The notification body Ironic sends for ``node``'s readings."""
    return {
        'message_id': str(uuid.uuid4()),
        'instance_uuid': node.instance_uuid,
        'node_uuid': node.uuid,
        'node_name': node.name,
        'event_type': 'hardware.%s.metrics.update' % node.driver,
        'timestamp': datetime.datetime.now(datetime.UTC).strftime(
            TIMESTAMP_FORMAT),
        'payload': data,
    }


# Ironic's ConductorManager methods for the periodic tasks that do the
# same job; the others keep their own names under the same prefix
IRONIC_TASKS = {'sync_power_states': '_sync_power_states',
                'send_sensor_data': '_send_sensor_data'}
_PREFIX = 'ironic.conductor.manager.ConductorManager.'


def conductor_message(host: str) -> dict:
    """The ``ironic.metrics`` notification body of this conductor."""
    timers = {}
    for task, (count, total) in sorted(metrics.periodic_timers().items()):
        timers[_PREFIX + IRONIC_TASKS.get(task, task)] = {
            'type': 'timer', 'count': int(count),
            'sum': round(total * 1000.0, 3)}
    return {
        'message_id': str(uuid.uuid4()),
        'instance_uuid': None,
        'node_uuid': None,
        'event_type': 'ironic.metrics.update',
        'timestamp': datetime.datetime.now(datetime.UTC).strftime(
            TIMESTAMP_FORMAT),
        'hostname': host,
        'payload': timers,
    }


class SensorSender:
    """One conductor's sensor data rounds, with a pool of
    ``[sensor_data]workers`` threads."""

    def __init__(self, conductor) -> None:
        self.conductor = conductor
        self.conf = conductor.conf.sensor_data
        # futurist's threads, as the conductor's other pools: a BMC that
        # never answers does not hold the process at exit
        self.pool = futurist.ThreadPoolExecutor(
            max_workers=self.conf.workers)

    def stop(self) -> None:
        self.pool.shutdown(wait=False)

    def nodes(self) -> list[dict]:
        rows = db_nodes.nodes_for_sensors(
            only_active=not self.conf.enable_for_undeployed_nodes)
        out = []
        for row in rows:
            try:
                if self.conductor.owns(row):
                    out.append(row)
            except exception.NoValidHost:
                continue
        return out

    def run(self) -> int:
        """One round; returns the number of notifications sent."""
        sent = 0
        if self.conf.enable_for_conductor:
            notifications.emit_sensors(
                'ironic.metrics', conductor_message(self.conductor.host))
            sent = 1
        return sent + self.run_nodes()

    def run_nodes(self) -> int:
        if not self.conf.enable_for_nodes:
            return 0
        futures = [self.pool.submit(self.send_one, row)
                   for row in self.nodes()]
        if not futures:
            return 0
        done, not_done = concurrent.futures.wait(
            futures, timeout=self.conf.wait_timeout)
        if not_done:
            LOG.warning('%d sensor data reads did not finish within '
                        '[sensor_data]wait_timeout (%d s); they go on in '
                        'the background. Consider more [sensor_data]'
                        'workers or conductors.', len(not_done),
                        self.conf.wait_timeout)
        return sum(1 for f in done if f.result())

    def send_one(self, row: dict) -> bool:
        """Read one node's sensors and send them; never raises."""
        try:
            with task_manager.acquire(self.conductor, row['id'],
                                      shared=True,
                                      purpose='getting sensors data'
                                      ) as task:
                node = task.node
                if node.maintenance:
                    return False
                mgmt = task.driver.management
                mgmt.validate(task)
                data = mgmt.get_sensors_data(task)
        except exception.UnsupportedDriverExtension:
            LOG.debug('Node %s: its management interface reads no '
                      'sensors', row['uuid'])
            return False
        except exception.NodeNotFound:
            return False
        except Exception as e:
            LOG.warning('Node %s: could not read its sensors for the '
                        'sensor data notification: %s', row['uuid'], e)
            return False
        payload = filter_types(data or {}, self.conf.data_types)
        if not payload:
            return False
        body = message(node, payload)
        notifications.emit_sensors('hardware.%s.metrics' % node.driver,
                                   body)
        return True
