"""Inspection (verb 'inspect')."""

import copy

from oslo_log import log

from baremetal.common import exception
from baremetal.common import states
from baremetal.common import storable
from baremetal.conductor import firmware
from baremetal.conductor import inspection_rules
from baremetal.db import rows as db_rows
from baremetal.objects import inventory as inventory_store

LOG = log.getLogger(__name__)


def start(task) -> None:
    node = task.node
    node.inspection_started_at = db_rows.utcnow()
    node.inspection_finished_at = None
    node.last_error = None
    try:
        task.driver.inspect.validate(task)
        result = task.driver.inspect.inspect_hardware(task)
    except Exception as e:
        node.last_error = 'Failed to inspect hardware. Reason: %s' % e
        LOG.error('Node %s: %s', node.uuid, node.last_error)
        task.process_event('fail')
        return
    if result == states.INSPECTWAIT:
        task.process_event('wait')
        return
    node.inspection_finished_at = db_rows.utcnow()
    # what the hardware runs now (a failure to read is only logged)
    firmware.cache(task)
    task.process_event('done')


def abort(task) -> None:
    task.driver.inspect.abort(task)
    task.node.last_error = 'Inspection was aborted by request.'
    task.process_event('abort')


def resume(task, inventory: dict, plugin_data: dict) -> None:
    """The agent posted the inventory (in-band inspection): the inspect
    interface learns from it, the inspection rules run on it and the
    node becomes manageable."""
    node = task.node
    handler = getattr(task.driver.inspect, 'continue_inspection', None)
    if handler is None:
        raise exception.UnsupportedDriverExtension(
            driver=node.driver, extension='continue_inspection')
    try:
        handler(task, inventory, plugin_data)
        _apply_rules(task, inventory, plugin_data)
    except Exception as e:
        node.last_error = ('Failed to process the inspection data of node '
                           '%s: %s' % (node.uuid, e))
        LOG.error(node.last_error)
        task.process_event('fail')
        return
    node.inspection_finished_at = db_rows.utcnow()
    task.process_event('done')
    LOG.info('Node %s: in-band inspection finished', node.uuid)
    # the outcome is saved first: a conductor lost after it powered the
    # machine off, and before it saved, left the node waiting for an
    # inventory its agent had already posted (until inspect_wait_timeout)
    task.spawn_after(_after_in_band)


def _after_in_band(task) -> None:
    """Worker, the node inspected: the ramdisk's boot ends (the inspect
    interface's way), the firmware components are read.  The inspection
    stands when the ramdisk cannot be shut down: its last_error says
    so."""
    node = task.node
    end = getattr(task.driver.inspect, 'end_inspection_boot', None)
    if end is not None:
        try:
            end(task)
        except Exception as e:
            node.last_error = storable.bounded(
                'In-band inspection of node %s finished, but its ramdisk '
                'could not be shut down: %s' % (node.uuid, e), 1000)
            LOG.warning(node.last_error)
    firmware.cache(task)


def _apply_rules(task, inventory: dict, plugin_data: dict) -> None:
    """Run the inspection rules; keep what they changed in the plugin
    data the inspect interface stored."""
    before = copy.deepcopy(plugin_data)
    inspection_rules.apply(task, inventory, plugin_data)
    if plugin_data != before:
        inventory_store.update_plugin_data(task.node.id, plugin_data)
