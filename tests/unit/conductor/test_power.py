"""The power state sync (conductor/power.py) with stand-in interfaces:
when it finds the power changed outside the service, it records the boot
mode the BMC now reports (API 1.75); a BMC that cannot tell leaves it."""

import types

from baremetal.common import states
from baremetal.conductor import power
from baremetal.conductor import task_manager


class _Task(types.SimpleNamespace):
    bmc_read_cache = None
    bmc_reads = task_manager.TaskManager.bmc_reads


def _task(actual, mode):
    node = types.SimpleNamespace(uuid='n1', power_state=states.POWER_OFF,
                                 boot_mode='uefi', health=None,
                                 updated_at=None)
    conf = types.SimpleNamespace(conductor=types.SimpleNamespace(
        enable_health_monitoring=False))
    return _Task(
        node=node, conductor=types.SimpleNamespace(conf=conf),
        upgrade_lock=lambda: None,
        driver=types.SimpleNamespace(
            power=types.SimpleNamespace(get_power_state=lambda t: actual),
            management=types.SimpleNamespace(
                get_boot_mode=lambda t: mode)))


def test_a_power_change_found_by_the_sync_records_the_boot_mode():
    task = _task(states.POWER_ON, 'bios')
    power.sync_one(task, {}, 3)
    assert (task.node.power_state, task.node.boot_mode) == \
        (states.POWER_ON, 'bios')


def test_no_power_change_no_bmc_read_and_unknown_mode_kept():
    task = _task(states.POWER_OFF, 'bios')
    power.sync_one(task, {}, 3)
    assert task.node.boot_mode == 'uefi'
    task = _task(states.POWER_ON, None)
    power.sync_one(task, {}, 3)
    assert task.node.boot_mode == 'uefi'


def test_a_failure_recorded_without_a_read_counts_as_ironic_counts():
    # the sync records the error of the BMC's failed read for the other
    # nodes of that BMC, without asking it: max_retries of them in a row
    # put the node into maintenance
    reads = []
    task = _task(states.POWER_ON, None)
    task.driver.power.get_power_state = lambda t: reads.append(1)
    failures = {}
    err = RuntimeError('the BMC at x answered 503')
    assert power.sync_one(task, failures, 3, error=err) is err
    assert power.sync_one(task, failures, 3, error=err) is err
    assert failures == {'n1': 2} and not getattr(task.node, 'maintenance',
                                                 False)
    power.sync_one(task, failures, 3, error=err)
    assert reads == [] and failures == {}
    assert task.node.maintenance and task.node.fault == 'power failure'
    assert 'answered 503' in task.node.maintenance_reason


def test_a_read_resets_the_failures_and_the_read_cache_is_dropped():
    task = _task(states.POWER_OFF, None)
    seen = []
    task.driver.power.get_power_state = \
        lambda t: seen.append(t.bmc_read_cache) or states.POWER_OFF
    failures = {'n1': 2}
    assert power.sync_one(task, failures, 3) is None
    assert failures == {} and task.bmc_read_cache is None
    # the read ran with a cache, dropped after a failed read too
    assert seen == [{}]
    task.driver.power.get_power_state = lambda t: 1 / 0
    assert isinstance(power.sync_one(task, failures, 3), ZeroDivisionError)
    assert failures == {'n1': 1} and task.bmc_read_cache is None
