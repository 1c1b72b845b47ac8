"""The consistent hash ring."""

import collections
import datetime
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


def _register(host, group=''):
    from baremetal.db import conductors as db_conductors
    db_conductors.register_conductor(host, group, [{
        'hardware_type': 'fake-hardware', 'interface_type': 'power',
        'interface_name': 'fake', 'default': True}])


def test_the_apis_rings_route_around_a_silent_conductor(api, monkeypatch):
    """baremetal-api's rings ([api]conductor_silent_after) leave out a
    conductor whose heartbeat is older than that: its nodes go to the
    conductor that will serve them once it is found dead, where each
    request used to wait [DEFAULT]rpc_response_timeout_api on it.  The
    conductors' own rings keep it until heartbeat_timeout (who owns a
    node changes only then), and a ring whose every conductor is silent
    keeps them all."""
    from baremetal.db import rows as db_rows
    real_now = db_rows.utcnow
    _register('quiet')
    _register('alone', group='far')
    later = real_now() + datetime.timedelta(seconds=31)
    monkeypatch.setattr(db_rows, 'utcnow', lambda: later)
    _register('fresh')
    _register(api.conductor.host)       # its heartbeat, 31 s on
    keys = _keys(300)
    conductors = hash_ring.RingManager(api.conductor.conf).rings()
    assert conductors[('fake-hardware', '')].hosts == [
        'fresh', 'quiet', api.conductor.host]
    manager = hash_ring.RingManager(api.conductor.conf, silent_after=30)
    rings = manager.rings()
    assert rings[('fake-hardware', '')].hosts == ['fresh',
                                                  api.conductor.host]
    assert rings[('fake-hardware', 'far')].hosts == ['alone']
    # which are silent (the API's calls waiting on them stop waiting)
    assert [h for h in ('quiet', 'alone', 'fresh', api.conductor.host)
            if manager.is_silent(h)] == ['quiet', 'alone']
    assert not hash_ring.RingManager(api.conductor.conf).is_silent('quiet')
    # the others' nodes stay where they were
    for k in keys:
        owner = conductors[('fake-hardware', '')].get_host(k)
        if owner != 'quiet':
            assert rings[('fake-hardware', '')].get_host(k) == owner


def test_the_ring_is_built_again_when_a_conductor_turns_silent(
        api, monkeypatch):
    """Not up to [conductor]hash_ring_reset_interval later."""
    from baremetal.db import rows as db_rows
    real_now = db_rows.utcnow
    _register('quiet')
    later = real_now() + datetime.timedelta(seconds=25)
    monkeypatch.setattr(db_rows, 'utcnow', lambda: later)
    _register(api.conductor.host)
    manager = hash_ring.RingManager(api.conductor.conf, silent_after=30)
    assert 'quiet' in manager.rings()[('fake-hardware', '')].hosts
    assert 4 <= manager._ttl <= 5
    later += datetime.timedelta(seconds=6)
    manager._built -= manager._ttl      # that long since
    assert 'quiet' not in manager.rings()[('fake-hardware', '')].hosts


def test_the_api_routes_around_after_three_heartbeats_by_default():
    from oslo_config import cfg

    from baremetal import conf as bm_conf
    from baremetal.conductor import rpcapi
    conf = cfg.ConfigOpts()
    bm_conf.register_all(conf)
    conf([], project='baremetal', default_config_files=[])
    assert rpcapi.silent_after(conf) == 30
    conf.set_override('heartbeat_timeout', 20, 'conductor')
    assert rpcapi.silent_after(conf) == 20
    conf.set_override('conductor_silent_after', 5, 'api')
    assert rpcapi.silent_after(conf) == 5
