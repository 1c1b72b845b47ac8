"""The consistent hash ring."""

import collections
import uuid

from baremetal.conductor import hash_ring


def _keys(n=2000):
    return [str(uuid.UUID(int=i * 7919 + 1)) for i in range(n)]


def test_nodes_split_between_conductors():
    ring = hash_ring.HashRing(['c1', 'c2'], replicas=64)
    counts = collections.Counter(ring.get_host(k) for k in _keys())
    assert set(counts) == {'c1', 'c2'}
    assert min(counts.values()) > 2000 * 0.3


def test_adding_a_conductor_moves_only_its_share():
    keys = _keys()
    before = hash_ring.HashRing(['c1', 'c2', 'c3'])
    after = hash_ring.HashRing(['c1', 'c2', 'c3', 'c4'])
    moved = [k for k in keys if before.get_host(k) != after.get_host(k)]
    assert all(after.get_host(k) == 'c4' for k in moved)
    assert len(moved) < len(keys) * 0.4


def test_removing_a_conductor_keeps_the_others_nodes():
    keys = _keys()
    before = hash_ring.HashRing(['c1', 'c2', 'c3'])
    after = hash_ring.HashRing(['c1', 'c3'])
    for k in keys:
        if before.get_host(k) != 'c2':
            assert after.get_host(k) == before.get_host(k)


def test_the_same_hosts_give_the_same_ring_everywhere():
    a = hash_ring.HashRing(['x', 'y', 'z'])
    b = hash_ring.HashRing(['z', 'y', 'x'])
    assert all(a.get_host(k) == b.get_host(k) for k in _keys(200))


def test_ring_manager_groups_by_hardware_type_and_group(api):
    rings = api.conductor.rings.rings()
    assert ('fake-hardware', '') in rings
    assert rings[('fake-hardware', '')].hosts == ['test-conductor']
    host = api.conductor.rings.host_for(str(uuid.uuid4()), 'fake-hardware',
                                        '')
    assert host == 'test-conductor'
