"""A shared task that turns exclusive (task.upgrade_lock) writes what it
changed, not the node as it read it: what another task stored between
its read and its lock stays.  Seen in CI as a lost update: two polls of
one finished RAID step (the step poller's and the periodic one's); the
first resumed the node, the agent looked it up (its token stored), the
second, finding the node moved on, still saved the driver_internal_info
it had read before, with the old step index and no token, and the
agent's heartbeat then resumed the finished step again, rebooting the
node under the agent."""

import threading
import time

from baremetal import objects
from baremetal.common import states
from baremetal.conductor import periodics
from baremetal.conductor import power
from baremetal.conductor import step_polling
from baremetal.conductor import task_manager
from baremetal.db import nodes as db_nodes
from baremetal.db import rows as db_rows
from baremetal.drivers.modules import fake

STEP = 'deploy.erase_devices_metadata'


def _store(uuid: str, **values) -> None:
    """Another task's write, between this task's read and its lock."""
    db_rows.update(db_nodes.NODES, db_nodes.get_node(uuid)['id'], values)


def _info(uuid: str) -> dict:
    return db_nodes.get_node(uuid)['driver_internal_info']


def test_rebased_carries_only_the_keys_changed():
    node = objects.Node({'id': 1, 'uuid': 'u', 'name': 'a',
                         'driver_internal_info': {'keep': 1, 'gone': 2,
                                                  'mine': 3},
                         'properties': {'cpus': 2}})
    info = node.driver_internal_info
    info.pop('gone')
    info['mine'] = 4
    info['new'] = 5
    props = dict(node.properties)       # read, then set anew
    props['local_gb'] = 50
    node.properties = props
    node.extra = {'set': 'unread'}      # set without reading: all of it
    node.name = 'b'
    fresh = node.rebased({
        'id': 1, 'uuid': 'u', 'name': 'a', 'properties': {'cpus': 8},
        'extra': {'theirs': 1},
        'driver_internal_info': {'keep': 10, 'gone': 2, 'mine': 3,
                                 'theirs': 6}})
    assert fresh.changes() == {
        'name': 'b',
        'properties': {'cpus': 8, 'local_gb': 50},
        'extra': {'set': 'unread'},
        'driver_internal_info': {'keep': 10, 'mine': 4, 'new': 5,
                                 'theirs': 6}}


def test_rebased_replaces_what_is_not_an_object_on_both_sides():
    node = objects.Node({'id': 1, 'uuid': 'u', 'raid_config': None})
    node.raid_config = {'logical_disks': []}
    fresh = node.rebased({'id': 1, 'uuid': 'u', 'raid_config': None})
    assert fresh.changes() == {'raid_config': {'logical_disks': []}}


def test_upgrade_keeps_what_was_stored_meanwhile(api):
    n = api.create_node(driver_info={'a': 1})
    with task_manager.acquire(api.conductor, n['uuid'], shared=True) as t:
        t.node.driver_internal_info['mine'] = 1
        _store(n['uuid'], driver_internal_info={'theirs': 2},
               extra={'x': 1})
        t.upgrade_lock()
        assert t.node.extra == {'x': 1}
    assert _info(n['uuid']) == {'theirs': 2, 'mine': 1}


def _waiting(api) -> dict:
    n = api.create_node(driver_info={'fake_async_steps': [STEP]})
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    api.provision(n['uuid'], 'provide')
    return api.wait_for(n['uuid'], 'clean wait')


def _finished_and_moved_on(monkeypatch, node: dict):
    """The step's poll finds it finished and changes the node it read
    (as the Redfish RAID poll drops its task list); meanwhile another
    task resumed the node: next step, index, an agent token."""
    stored = dict(node['driver_internal_info'], clean_step_index=1,
                  agent_secret_token='t0ken')

    def poll_step(self, task, step):
        task.node.driver_internal_info['polled'] = True
        _store(node['uuid'], driver_internal_info=stored,
               clean_step={'interface': 'deploy', 'step': 'next'})
        return True
    monkeypatch.setattr(fake.FakeBase, 'poll_step', poll_step)
    return stored


def _taken_over(api, node: dict) -> None:
    """As on a conductor that took the waiting node over (or started
    again): its step poller does not watch the step, the periodic poll
    is what polls it (once a poll of the poller under way is over)."""
    poller = api.conductor.step_poller
    poller.stop()
    for _ in range(500):
        with poller.polling(node['uuid']) as free:
            if free:
                return
        time.sleep(0.01)
    raise AssertionError('the step poller kept polling')


def test_periodic_poll_of_a_node_moved_on_keeps_nothing(api, monkeypatch):
    node = _waiting(api)
    _taken_over(api, node)
    stored = _finished_and_moved_on(monkeypatch, node)
    periodics.poll_async_steps(api.conductor)
    after = db_nodes.get_node(node['uuid'])
    assert after['driver_internal_info'] == stored
    assert after['provision_state'] == states.CLEANWAIT
    assert after['reservation'] is None


def test_step_poller_of_a_node_moved_on_keeps_nothing(api, monkeypatch):
    node = _waiting(api)
    stored = _finished_and_moved_on(monkeypatch, node)
    w = step_polling._Watch(node['uuid'], states.CLEANWAIT,
                            tuple(STEP.split('.')))
    assert api.conductor.step_poller._poll_once(w) is False
    after = db_nodes.get_node(node['uuid'])
    assert after['driver_internal_info'] == stored
    assert after['provision_state'] == states.CLEANWAIT
    assert after['reservation'] is None


def test_one_poll_at_a_time_acts_on_a_step(api, monkeypatch):
    """The periodic poll and the step poller do not poll one node at
    once: the second looks again later, without asking the driver."""
    node = _waiting(api)
    _taken_over(api, node)
    entered, go, calls = threading.Event(), threading.Event(), []

    def poll_step(self, task, step):
        calls.append(threading.current_thread().name)
        entered.set()
        assert go.wait(10)
        return False
    monkeypatch.setattr(fake.FakeBase, 'poll_step', poll_step)
    periodic = threading.Thread(
        target=periodics.poll_async_steps, args=(api.conductor,))
    periodic.start()
    try:
        assert entered.wait(10)
        w = step_polling._Watch(node['uuid'], states.CLEANWAIT,
                                tuple(STEP.split('.')))
        assert api.conductor.step_poller._poll_once(w) is True  # later
        assert len(calls) == 1
    finally:
        go.set()
        periodic.join(10)
    # free again: the next poll asks the driver
    entered.clear()
    assert api.conductor.step_poller._poll_once(w) is True
    assert len(calls) == 2


def _counting_reads(monkeypatch) -> list:
    """The nodes read whole by shared tasks of this thread."""
    reads = []
    me = threading.current_thread()

    class Counted:
        def __getattr__(self, name):
            return getattr(db_nodes, name)

        def get_node(self, node_id):
            if threading.current_thread() is me:
                reads.append(node_id)
            return db_nodes.get_node(node_id)
    monkeypatch.setattr(task_manager, 'db_nodes', Counted())
    return reads


def test_periodic_poll_leaves_a_watched_step_to_the_step_poller(
        api, monkeypatch):
    """The step poller polls a step from its start: the periodic poll
    neither reads the node nor asks the driver; once no poller watches
    the step it does both."""
    node = _waiting(api)
    calls = []
    me = threading.current_thread()
    monkeypatch.setattr(
        fake.FakeBase, 'poll_step', lambda self, task, step: calls.append(
            threading.current_thread() is me) and False)
    poller = api.conductor.step_poller
    assert poller.watches(node['uuid'], states.CLEANWAIT,
                          db_nodes.get_node(node['uuid'])['clean_step'])
    reads = _counting_reads(monkeypatch)
    periodics.poll_async_steps(api.conductor)
    assert (reads, [c for c in calls if c]) == ([], [])
    _taken_over(api, node)
    calls.clear()
    periodics.poll_async_steps(api.conductor)
    assert len(reads) == 1 and [c for c in calls if c] == [True]


def test_periodic_poll_skips_a_node_waiting_with_no_step(api, monkeypatch):
    """A node waiting for its agent to boot has no step yet: nothing to
    poll, nothing read."""
    node = _waiting(api)
    _taken_over(api, node)
    _store(node['uuid'], clean_step={})
    reads = _counting_reads(monkeypatch)
    periodics.poll_async_steps(api.conductor)
    assert reads == []
    _store(node['uuid'], clean_step={'interface': 'deploy',
                                     'step': 'erase_devices_metadata'})
    periodics.poll_async_steps(api.conductor)
    assert reads == [db_nodes.get_node(node['uuid'])['id']]


def test_power_sync_does_not_record_a_read_older_than_the_node(
        api, monkeypatch):
    """The BMC read 'power on' while a power action switched the node
    on and off again and recorded 'power off': not overwritten."""
    n = api.create_node()

    def read(self, task):
        _store(n['uuid'], power_state=states.POWER_OFF)
        return states.POWER_ON
    monkeypatch.setattr(fake.FakePower, 'get_power_state', read)
    with task_manager.acquire(api.conductor, n['uuid'], shared=True) as t:
        assert power.sync_one(t, {}, 3) is None
    assert db_nodes.get_node(n['uuid'])['power_state'] == states.POWER_OFF
    # a read with nothing stored meanwhile is recorded
    monkeypatch.setattr(fake.FakePower, 'get_power_state',
                        lambda self, task: states.POWER_ON)
    with task_manager.acquire(api.conductor, n['uuid'], shared=True) as t:
        assert power.sync_one(t, {}, 3) is None
    assert db_nodes.get_node(n['uuid'])['power_state'] == states.POWER_ON
