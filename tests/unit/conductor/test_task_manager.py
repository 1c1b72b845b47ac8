"""Node locks: one atomic reservation, 409 for the loser, shared reads."""

import threading
import time

import pytest

from baremetal.common import exception
from baremetal.conductor import task_manager
from baremetal.db import reservations as db_reservations
from tests import harness


def test_exclusive_lock_is_atomic_one_of_many_wins(api):
    n = api.create_node()
    winners, losers = [], []
    barrier = threading.Barrier(8)

    def grab(i):
        barrier.wait()
        try:
            db_reservations.reserve_node('host-%d' % i, n['uuid'])
            winners.append(i)
        except exception.NodeLocked:
            losers.append(i)

    threads = [threading.Thread(target=grab, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1 and len(losers) == 7
    assert api.node(n['uuid'])['reservation'] == 'host-%d' % winners[0]


def test_locked_node_answers_409_and_stays_as_it_was(api):
    n = api.create_node(name='locked')
    db_reservations.reserve_node('other-conductor', n['uuid'])
    before = api.node(n['uuid'])
    for method, path, body in (
            ('PUT', '/v1/nodes/locked/states/provision',
             {'target': 'manage'}),
            ('PUT', '/v1/nodes/locked/states/power',
             {'target': 'power on'}),
            ('PATCH', '/v1/nodes/locked',
             [{'op': 'add', 'path': '/extra/a', 'value': 1}]),
            ('DELETE', '/v1/nodes/locked', None)):
        status, resp, _ = api.request(method, path, body)
        assert status == 409, (method, path, resp)
        msg = harness.error_message(resp)
        assert 'locked by host other-conductor' in msg
    assert api.node(n['uuid']) == before


@pytest.mark.parametrize('method,path,body', [
    ('PUT', '/v1/nodes/{n}/states/power', {'target': 'power on'}),
    ('PUT', '/v1/nodes/{n}/states/provision', {'target': 'manage'}),
    ('PATCH', '/v1/nodes/{n}', [{'op': 'add', 'path': '/extra/a',
                                 'value': 1}]),
    ('PUT', '/v1/nodes/{n}/traits/CUSTOM_A', None),
    ('PUT', '/v1/nodes/{n}/maintenance', {}),
    ('DELETE', '/v1/nodes/{n}', None)])
def test_request_waits_for_a_lock_held_for_a_moment(tmp_path, method, path,
                                                    body):
    """As Ironic ([conductor]node_locked_retry_attempts/_interval): a
    request that meets a node another task holds for a moment (a power
    change finishing, the power sync) is served once the lock is free,
    not answered 409 (tempest's power test met that in CI)."""
    h = harness.Harness(tmp_path, {
        'conductor.node_locked_retry_attempts': 3,
        'conductor.node_locked_retry_interval': 1.0})
    try:
        n = h.create_node(name='busy')
        row = db_reservations.reserve_node('other-conductor', n['uuid'])
        threading.Timer(0.3, db_reservations.release_node,
                        ('other-conductor', row['id'])).start()
        status, resp, _ = h.request(method, path.format(n=n['uuid']), body,
                                    version='1.60')
        assert status < 300, (status, resp)
        if method != 'DELETE':
            h.conductor.workers.wait_idle(5)
            assert h.node(n['uuid'])['reservation'] is None
    finally:
        h.close()


def test_request_gives_up_after_the_retries_and_periodics_do_not_wait(
        tmp_path):
    h = harness.Harness(tmp_path, {
        'conductor.node_locked_retry_attempts': 3,
        'conductor.node_locked_retry_interval': 0.2})
    try:
        n = h.create_node()
        db_reservations.reserve_node('other-conductor', n['uuid'])
        t0 = time.monotonic()
        status, resp, _ = h.request('PUT', '/v1/nodes/%s/states/power'
                                    % n['uuid'], {'target': 'power on'})
        waited = time.monotonic() - t0
        assert status == 409, resp
        assert 'locked by host other-conductor' in harness.error_message(
            resp)
        assert waited >= 0.4          # (3 - 1) x 0.2 s
        t0 = time.monotonic()
        with pytest.raises(exception.NodeLocked):
            task_manager.acquire(h.conductor, n['uuid'], shared=False)
        assert time.monotonic() - t0 < 0.2
    finally:
        h.close()


def test_shared_tasks_do_not_block_each_other(api):
    n = api.create_node()
    c = api.conductor
    with task_manager.acquire(c, n['uuid'], shared=True) as t1:
        with task_manager.acquire(c, n['uuid'], shared=True) as t2:
            assert t1.node.uuid == t2.node.uuid
        with task_manager.acquire(c, n['uuid'], shared=False) as t3:
            assert t3.node.reservation == c.host
    assert api.node(n['uuid'])['reservation'] is None


def test_lock_released_after_a_failing_worker(api):
    n = api.create_node(driver_info={'fake_fail_steps': ['deploy.deploy']})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    api.wait_for(n['uuid'], 'available')
    api.provision(n['uuid'], 'active')
    node = api.wait_for(n['uuid'], 'deploy failed')
    assert node['reservation'] is None
    assert 'deploy.deploy' in node['last_error']


def test_lock_released_when_the_block_raises(api):
    n = api.create_node()
    with pytest.raises(RuntimeError):
        with task_manager.acquire(api.conductor, n['uuid'], shared=False):
            raise RuntimeError('boom')
    assert api.node(n['uuid'])['reservation'] is None


def test_no_free_worker_is_503_and_the_node_is_untouched(api):
    n = api.create_node()
    pool = api.conductor.workers
    gate = threading.Event()
    started = 0
    while True:
        try:
            pool.submit(gate.wait, 10)
            started += 1
        except exception.NoFreeConductorWorker:
            break
    try:
        status, body, _ = api.request(
            'PUT', '/v1/nodes/%s/states/provision' % n['uuid'],
            {'target': 'manage'})
        assert status == 503, body
        node = api.node(n['uuid'])
        assert node['provision_state'] == 'enroll'
        assert node['reservation'] is None
    finally:
        gate.set()
    assert started == pool.size


def _flaky_release(monkeypatch, failures: int) -> list:
    """db_reservations.release_node failing ``failures`` times as if the
    database had gone away, then working; the calls it saw."""
    real = db_reservations.release_node
    calls = []

    def release_node(*args, **kwargs):
        calls.append(args)
        if len(calls) <= failures:
            raise exception.DatabaseUnavailable(reason='server restarting')
        return real(*args, **kwargs)
    monkeypatch.setattr(db_reservations, 'release_node', release_node)
    return calls


def _wait_unlocked(api, uuid):
    for _ in range(200):
        node = api.node(uuid)
        if node['reservation'] is None:
            return node
        threading.Event().wait(0.05)
    raise AssertionError('node %s is still locked' % uuid)


def test_a_lock_the_database_could_not_take_back_is_released_later(
        api, monkeypatch):
    n = api.create_node()
    calls = _flaky_release(monkeypatch, failures=2)
    with pytest.raises(exception.DatabaseUnavailable):
        with task_manager.acquire(api.conductor, n['uuid'],
                                  shared=False) as task:
            task.node.extra = {'kept': 'yes'}
    node = _wait_unlocked(api, n['uuid'])
    assert len(calls) == 3
    # the node's changes went in with the release
    assert node['extra'] == {'kept': 'yes'}


def test_a_worker_that_loses_the_database_leaves_the_node_unlocked(
        api, monkeypatch):
    n = api.create_node()
    _flaky_release(monkeypatch, failures=1)

    def work(task):
        raise exception.DatabaseUnavailable(reason='server restarting')
    with task_manager.acquire(api.conductor, n['uuid'],
                              shared=False) as task:
        task.spawn_after(work)
    node = _wait_unlocked(api, n['uuid'])
    assert node['provision_state'] == 'enroll'


def _manage_with(api, monkeypatch, at_the_end):
    """A node taken to manage, ``at_the_end(task)`` run where its
    verification ends (in the worker, with the lock); the node once its
    lock is gone."""
    from baremetal.conductor import rescuing
    monkeypatch.setattr(rescuing, '_record_boot_mode', at_the_end)
    n = api.create_node()
    api.provision(n['uuid'], 'manage')
    api.conductor.workers.wait_idle(10)
    return _wait_unlocked(api, n['uuid'])


def test_a_worker_that_raises_unexpectedly_fails_the_node(api, monkeypatch):
    """Not left in its transient state (verifying, unlocked, for good):
    the failure state, as any failed action, saying what happened."""
    def boom(task):
        raise RuntimeError('a bug, say')
    node = _manage_with(api, monkeypatch, boom)
    assert (node['provision_state'], node['target_provision_state']) == \
        ('enroll', None)
    assert node['last_error'] == ('provision action manage failed '
                                  'unexpectedly: RuntimeError: a bug, say')


def test_texts_no_database_holds_are_saved_escaped(any_db_api, monkeypatch):
    """A lone surrogate (which a BMC's JSON can carry) in a change: no
    driver encodes it; a NUL character, which PostgreSQL refuses in a
    text: saved as their escapes, the node released."""
    api = any_db_api

    def odd(task):
        task.node.extra = {'bmc said': 'On\udfff'}
        task.node.maintenance_reason = 'BMC says \x00\ud800'
        task.node.description = 'BMC \x00'
    node = _manage_with(api, monkeypatch, odd)
    assert node['provision_state'] == 'manageable'
    assert node['extra'] == {'bmc said': 'On\\udfff'}
    # error texts are escaped as they are set
    assert node['maintenance_reason'] == 'BMC says \\x00\\ud800'
    # other texts only where the database refused them
    assert node['description'] == (
        'BMC \\x00' if api.db_kind == 'postgresql' else 'BMC \x00')
    assert node['last_error'] is None


def test_changes_the_database_refuses_leave_the_states_and_say_so(
        any_db_api, monkeypatch):
    """Changes that cannot be stored even escaped (here a value no JSON
    holds): the lock is released with the node's states, and last_error
    says what was refused; never a lock kept for a value."""
    def odd(task):
        task.node.extra = {'not JSON': object()}
    node = _manage_with(any_db_api, monkeypatch, odd)
    assert node['provision_state'] == 'manageable'
    assert node['extra'] == {}
    assert node['last_error'].startswith(
        'The database refused the changes of provision action manage: ')
