"""The power state sync (conductor/power.py) with stand-in interfaces:
when it finds the power changed outside the service, it records the boot
mode the BMC now reports (API 1.75); a BMC that cannot tell leaves it."""

import types

from baremetal.common import states
from baremetal.conductor import power


def _task(actual, mode):
    node = types.SimpleNamespace(uuid='n1', power_state=states.POWER_OFF,
                                 boot_mode='uefi', health=None)
    conf = types.SimpleNamespace(conductor=types.SimpleNamespace(
        enable_health_monitoring=False))
    return types.SimpleNamespace(
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
