"""The power state sync is kind to BMCs: a baremetal-server syncs the
power of redfish nodes behind simulated BMCs (tools/fleet_doubles.py:
one loopback port per BMC, some serving several systems as a chassis
manager does), and the BMCs count what reaches them.

* one request at a time per BMC, and one GET of the ComputerSystem per
  node per sync (its PowerState and Status.Health both come from it);
* a BMC that answers with errors is backed off (a request per erring
  round, not per node; rounds left out) while the others are read at
  every round, and its nodes still go into maintenance after
  ``power_state_sync_max_retries`` failed syncs, as in Ironic;
* a slow BMC delays only its own nodes;
* a round uses as few workers as keep its pace: BMCs that answer at
  once are read by one worker although four are allowed.

Rounds are counted from the server's own metrics (the periodic task's
run count); no duration is asserted."""

import time
import urllib.request

import pytest
from prometheus_client import parser

from tests import fleet as test_fleet
from tests.functional import bmc_server as bs
from tests.functional import processes

fleet_doubles = test_fleet.doubles()

# BMCs: two chassis of five systems, four of one, a slow one of two,
# an erring chassis of three
BLOCKS = [5, 5, 1, 1, 1, 1, 2, 3]
GOOD = range(0, 6)
SLOW, BAD = 6, 7
HEALTH = '1.109'


@pytest.fixture(scope='module')
def fleet():
    f = fleet_doubles.RedfishFleet(sum(BLOCKS), per_bmc=BLOCKS)
    yield f
    f.stop()


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('power-sync')
    conf = bs.conf(tmp)
    conf['conductor'].update({
        'sync_power_state_workers': 4, 'power_state_sync_max_retries': 3,
        'power_sync_max_backoff': 30})
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture(scope='module')
def nodes(server, fleet):
    return enroll_all(server, fleet)


def enroll_all(server, fleet):
    """Every system enrolled and managed: {system id: node uuid}."""
    out = {}
    for sid in sorted(fleet.systems):
        out[sid] = bs.create(server, driver='redfish', driver_info={
            'redfish_address': fleet.address(sid),
            'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
            'redfish_username': 'admin',
            'redfish_password': 'password'})['uuid']
        st, body = bs.http_unlocked(
            server, 'PUT', '/v1/nodes/%s/states/provision' % out[sid],
            {'target': 'manage'})
        assert st == 202, body
    for uuid in out.values():
        bs.wait_provision(server, uuid, 'manageable', timeout=60)
    return out


def rounds(server) -> int:
    with urllib.request.urlopen(server.endpoint + '/metrics',
                                timeout=30) as r:
        text = r.read().decode()
    for family in parser.text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == ('baremetal_periodic_task_duration_seconds_'
                          'count') and \
                    s.labels.get('task') == 'sync_power_states':
                return int(s.value)
    return 0


def wait_rounds(server, n, timeout=120):
    """Until ``n`` more sync rounds ended."""
    first = rounds(server)
    deadline = time.monotonic() + timeout
    while rounds(server) < first + n:
        assert time.monotonic() < deadline, 'the sync does not run'
        time.sleep(0.1)


class Window:
    """What reached the BMCs between two moments."""

    def __init__(self, fleet):
        self.fleet = fleet
        with fleet.lock:
            self.gets = {s: len(v) for s, v in fleet.gets.items()}
            self.ports = dict(fleet.by_port)
            fleet.max_busy.clear()

    def close(self):
        f = self.fleet
        with f.lock:
            self.get_delta = {s: len(v) - self.gets[s]
                              for s, v in f.gets.items()}
            self.port_delta = {p: n - self.ports.get(p, 0)
                               for p, n in f.by_port.items()}
            self.max_busy = dict(f.max_busy)
        return self

    def gets_of(self, bmc):
        return [self.get_delta[s] for s in self.fleet.bmcs[bmc][1]]


def test_one_request_at_a_time_per_bmc_and_one_get_per_node_per_sync(
        server, fleet, nodes):
    wait_rounds(server, 1)
    w = Window(fleet)
    wait_rounds(server, 4)
    w.close()
    for bmc in GOOD:
        port, systems = fleet.bmcs[bmc]
        # read once per round (a round may end before a chassis got to
        # its last node, which then waits for the next): never twice
        # (power, then health: 8)
        assert all(2 <= n <= 5 for n in w.gets_of(bmc)), (
            bmc, w.gets_of(bmc))
        # and nothing else was asked of the BMC
        assert w.port_delta[port] == sum(w.gets_of(bmc)), (
            bmc, w.port_delta[port])
    # never two requests at once at one BMC, chassis included
    assert w.max_busy and max(w.max_busy.values()) == 1, w.max_busy
    # the health came with the same GET (API 1.109)
    for sid in fleet.bmcs[0][1] + fleet.bmcs[2][1]:
        st, body = bs.http(server, 'GET', '/v1/nodes/%s' % nodes[sid],
                           version=HEALTH)
        assert st == 200 and body['health'] == 'OK', body


def test_a_slow_bmc_delays_only_its_own_nodes(server, fleet, nodes):
    port = fleet.bmcs[SLOW][0]
    fleet.set_bmc(port, latency_ms=(2500, 2500))
    try:
        wait_rounds(server, 1)
        w = Window(fleet)
        wait_rounds(server, 6)
        w.close()
    finally:
        fleet.set_bmc(port)
    # every other node was read at (nearly) every round ...
    good = min(min(w.gets_of(bmc)) for bmc in GOOD)
    assert good >= 4, {bmc: w.gets_of(bmc) for bmc in GOOD}
    # ... while the slow BMC answered one request per 2.5 s, one at a
    # time: its two nodes together were read less often than any other
    # node (a round waited for it no longer than the interval; when
    # rounds waited for every node, each was read as often as the rest)
    slow = sum(w.gets_of(SLOW))
    assert 1 <= slow < good, (w.gets_of(SLOW), good)
    assert w.max_busy[port] == 1


def test_an_erring_bmc_is_backed_off_and_its_nodes_go_to_maintenance(
        server, fleet, nodes):
    port, systems = fleet.bmcs[BAD]
    wait_rounds(server, 1)
    w = Window(fleet)
    fleet.set_bmc(port, error_rate=1.0)
    try:
        for sid in systems:
            got = bs.wait(server, nodes[sid], lambda n: n['maintenance'],
                          timeout=90, what='maintenance')
            assert got['fault'] == 'power failure', got
            assert 'max retries exceeded' in got['maintenance_reason']
    finally:
        w.close()
        fleet.set_bmc(port)
    # three failed syncs of every node of the chassis: three erring
    # rounds (1, 2, and 4: round 3 left out), one read each (sushy
    # tries a 5xx once more); 3 nodes x 3 rounds x 2 without back-off
    assert 3 <= w.port_delta[port] <= 6, w.port_delta[port]
    # meanwhile every other node was read at every round (4 at least)
    for bmc in GOOD:
        assert min(w.gets_of(bmc)) >= 3, (bmc, w.gets_of(bmc))
    assert w.max_busy[port] == 1


def test_bmcs_that_answer_at_once_are_read_by_one_worker(tmp_path):
    # a fleet of its own (the module's server reads the other one every
    # second) and a 12 s interval: the round's pace is 6 s for 19 reads
    # that each take milliseconds (a loaded machine would have to slow
    # them to 300 ms), so its one worker never falls a read behind, and
    # never two requests are in flight at once at all BMCs together,
    # although sync_power_state_workers allows four
    fleet = fleet_doubles.RedfishFleet(sum(BLOCKS), per_bmc=BLOCKS)
    conf = bs.conf(tmp_path)
    conf['conductor'].update({'sync_power_state_workers': 4,
                              'sync_power_state_interval': 12})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start()
    try:
        enroll_all(svc, fleet)
        wait_rounds(svc, 1, timeout=60)
        with fleet.lock:
            fleet.max_busy_total = 0
        w = Window(fleet)
        wait_rounds(svc, 1, timeout=60)
        w.close()
        assert all(n >= 1 for n in w.get_delta.values()), w.get_delta
        assert fleet.max_busy_total == 1
    finally:
        assert svc.stop() == 0, svc.log()
        fleet.stop()
