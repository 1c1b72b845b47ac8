"""The periodic power sync on the embedded harness: nodes are grouped
by the BMC endpoint their power interface names, and a BMC whose read
fails with an error of the BMC itself is read once per erring round,
its other nodes still counted towards maintenance, as in Ironic."""

import threading

from baremetal.common import exception
from baremetal.conductor import periodics
from baremetal.db import power_sync as db_power_sync
from baremetal.drivers.modules import fake


def _managed(api, n, bmc):
    out = []
    for _ in range(n):
        uuid = api.create_node(driver_info={'test_bmc': bmc})['uuid']
        api.provision(uuid, 'manage')
        api.wait_for(uuid, 'manageable')
        out.append(uuid)
    return out


def test_nodes_are_grouped_by_the_bmc_their_driver_names(api,
                                                         monkeypatch):
    monkeypatch.setattr(
        fake.FakePower, 'bmc_endpoint',
        lambda self, info: ('test', info['test_bmc'])
        if info.get('test_bmc') else None, raising=False)
    a = _managed(api, 3, 'a')
    b = _managed(api, 2, 'b')
    alone = _managed(api, 2, None)
    rows = {r['uuid']: r for r in db_power_sync.candidates()}
    keys = {u: periodics._bmc_key(api.conductor, rows[u])
            for u in a + b + alone}
    assert {keys[u] for u in a} == {('test', 'a')}
    assert {keys[u] for u in b} == {('test', 'b')}
    assert len({keys[u] for u in alone}) == 2     # each on its own
    stats = periodics.sync_power_states(api.conductor)
    assert (stats['queued'], stats['lanes']) == (7, 4)


def test_an_erring_bmc_is_read_once_a_round_and_its_nodes_still_fail(
        api, monkeypatch):
    monkeypatch.setattr(
        fake.FakePower, 'bmc_endpoint',
        lambda self, info: ('test', info.get('test_bmc')), raising=False)
    bad = _managed(api, 3, 'bad')
    good = _managed(api, 1, 'good')
    lock = threading.Lock()
    reads = []
    real = fake.FakePower.get_power_state

    def read(self, task):
        with lock:
            reads.append(task.node.uuid)
        if task.node.uuid in bad:
            raise exception.BMCConnectionError(node=task.node.uuid,
                                               error='no answer')
        return real(self, task)

    monkeypatch.setattr(fake.FakePower, 'get_power_state', read)
    max_retries = api.conductor.conf.conductor.power_state_sync_max_retries
    backing_off = []
    for _ in range(max_retries + 1):
        backing_off.append(
            periodics.sync_power_states(api.conductor)['backing_off'])
    # rounds 1 and 2 read the bad BMC once; round 3 leaves it alone (3
    # nodes); round 4 is the third failure of each: maintenance
    assert backing_off[:3] == [0, 0, 3]
    assert sum(1 for u in reads if u in bad) == max_retries
    assert reads.count(good[0]) == max_retries + 1
    for uuid in bad:
        node = api.node(uuid)
        assert node['maintenance'] and node['fault'] == 'power failure'
