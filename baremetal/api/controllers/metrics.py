"""GET /metrics: this process's Prometheus metrics and the fleet's.

Authenticated like the rest of the API (policy ``baremetal:metrics:get``,
system readers by default); under noauth anyone on the API's address may
read it.  Besides what the process measures (common/metrics.py), every
scrape counts the nodes per provision state, power state and fault, and
in maintenance, with one grouped statement (db/node_stats.py).  In a
scale-out deployment these gauges come from baremetal-api only; each
baremetal-conductor serves its own measures on its own listener.
"""

from collections.abc import Iterator

from oslo_log import log
from prometheus_client import core
from prometheus_client import registry as prom_registry

from baremetal.api import policy
from baremetal.api import request as api_request
from baremetal.api import request_metrics
from baremetal.api.routing import route
from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import state_machine
from baremetal.common import states
from baremetal.db import node_stats

LOG = log.getLogger(__name__)

# label value of a node whose power state is not known (NULL)
NO_POWER_STATE = 'none'


class FleetCollector:
    """Node counts from the database, at each collection.  Every known
    provision state, power state and fault is shown, with 0 where no
    node is, so that series do not come and go."""

    def collect(self) -> Iterator[core.Metric]:
        up = core.GaugeMetricFamily(
            'baremetal_node_stats_up',
            'Whether the node counts below could be read from the '
            'database at this scrape (1) or not (0)')
        try:
            counts = node_stats.count_nodes()
        except exception.DatabaseUnavailable as e:
            LOG.warning('Metrics: node counts not available: %s', e)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        total = core.GaugeMetricFamily('baremetal_nodes',
                                       'Nodes enrolled')
        total.add_metric([], counts.total)
        yield total
        yield _family(
            'baremetal_nodes_by_provision_state',
            'Nodes in each provision state', 'provision_state',
            dict.fromkeys(state_machine.STATES, 0),
            counts.provision_state)
        yield _family(
            'baremetal_nodes_by_power_state',
            'Nodes in each power state (none: not known yet)',
            'power_state', dict.fromkeys((states.POWER_ON,
                                          states.POWER_OFF), 0),
            {NO_POWER_STATE if k is None else k: v
             for k, v in counts.power_state.items()})
        yield _family(
            'baremetal_nodes_by_fault',
            'Nodes in maintenance because of a fault, by fault',
            'fault', dict.fromkeys(states.FAULTS, 0), counts.fault)
        maintenance = core.GaugeMetricFamily(
            'baremetal_nodes_maintenance', 'Nodes in maintenance')
        maintenance.add_metric([], counts.maintenance)
        yield maintenance


def _family(name: str, doc: str, label: str, zeros: dict,
            counts: dict) -> core.GaugeMetricFamily:
    family = core.GaugeMetricFamily(name, doc, labels=[label])
    values = dict(zeros)
    for key, n in counts.items():
        values[str(key)] = values.get(str(key), 0) + n
    for key in sorted(values):
        family.add_metric([key], values[key])
    return family


FLEET = prom_registry.CollectorRegistry(auto_describe=False)
FLEET.register(FleetCollector())


@route('GET', '/metrics')
def prometheus_metrics(req):
    """Prometheus metrics of this process and node counts (text)"""
    policy.authorize(req, 'baremetal:metrics:get')
    body, content_type = metrics.render(
        req.raw.environ.get(request_metrics.ACCEPT_KEY), FLEET)
    return api_request.Raw(body, content_type)
