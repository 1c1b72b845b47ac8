"""Redfish sensor readings in the shape Ironic's ``redfish`` management
interface reports them, as ironic-prometheus-exporter's Redfish parser
reads them::

    {"Extra": {"Manufacturer": ..., "Model": ..., "UUID": ...},
     "Temperature": {"<MemberId>@<chassis>": {
         "identity", "reading_celsius", "physical_context",
         "sensor_number", "max_reading_range_temp",
         "min_reading_range_temp", "state", "health"}},
     "Fan": {"<MemberId>@<chassis>": {
         "identity", "reading", "reading_units", "physical_context",
         "serial_number", "max_reading_range", "min_reading_range",
         "state", "health"}},
     "Power": {"<MemberId>:<Power Id>@<chassis>": {
         "power_capacity_watts", "line_input_voltage",
         "last_power_output_watts", "serial_number", "state", "health"}},
     "Drive": {"<name>:<storage>@<system>": {
         "name", "model", "capacity_bytes", "state", "health"}}}

Temperatures, fans and power supplies come from the system's first
chassis (its Thermal and Power resources), drives from the system's
SimpleStorage, else its Storage.  A resource the BMC does not serve,
or answers with what is no Redfish resource of its kind (logged), leaves
its types empty and the others are read; state and health are the
Redfish enum values ("Enabled", "OK").
"""

from typing import Any

from oslo_log import log

from baremetal.common import storable
from baremetal.drivers.modules.redfish import client

LOG = log.getLogger(__name__)

_TEMPERATURE = ('identity', 'max_reading_range_temp',
                'min_reading_range_temp', 'reading_celsius',
                'physical_context', 'sensor_number')
_FAN = ('identity', 'max_reading_range', 'min_reading_range', 'reading',
        'reading_units', 'serial_number', 'physical_context')
_POWER = ('power_capacity_watts', 'line_input_voltage',
          'last_power_output_watts', 'serial_number')
_DRIVE = ('name', 'model', 'capacity_bytes')


def _plain(value: Any) -> Any:
    return getattr(value, 'value', value)


def _fields(obj, names) -> dict:
    """The named attributes (enums as their Redfish value), then the
    object's Status as state and health."""
    out = {n: _plain(getattr(obj, n)) for n in names if hasattr(obj, n)}
    status = getattr(obj, 'status', None)
    for n in ('state', 'health'):
        if status is not None and hasattr(status, n):
            out[n] = _plain(getattr(status, n))
    return out


def _read(node, what: str, fn, default):
    """``fn()``, or ``default`` when the BMC serves no such resource or
    fails on it (logged), or answers with what is no Redfish resource of
    its kind (not JSON, a list, a field of the wrong shape: logged as a
    warning; a sensor type's readings are all or none)."""
    import sushy
    try:
        return fn()
    except sushy.exceptions.SushyError as e:
        LOG.debug('Node %s: no %s sensor data: %s', node.uuid, what, e)
    except client.ODD_ANSWER + (RecursionError,) as e:
        LOG.warning('Node %s: no %s sensor data: the BMC answered with '
                    'what is no Redfish resource of its kind (%s: %s)',
                    node.uuid, what, type(e).__name__,
                    storable.bounded(str(e), 300))
    return default


def _thermal(chassis) -> dict:
    thermal = chassis.thermal
    return {
        'Temperature': {'%s@%s' % (t.identity, chassis.identity):
                        _fields(t, _TEMPERATURE)
                        for t in thermal.temperatures},
        'Fan': {'%s@%s' % (f.identity, chassis.identity): _fields(f, _FAN)
                for f in thermal.fans}}


def _power(chassis) -> dict:
    power = chassis.power
    return {'Power': {'%s:%s@%s' % (p.identity, power.identity,
                                    chassis.identity): _fields(p, _POWER)
                      for p in power.power_supplies}}


def chassis_sensors(node, chassis) -> dict:
    out: dict[str, dict] = {'Fan': {}, 'Temperature': {}, 'Power': {}}
    out.update(_read(node, 'thermal', lambda: _thermal(chassis), {}))
    out.update(_read(node, 'power', lambda: _power(chassis), {}))
    return out


def _drive(drive, storage_id: str, system_id: str) -> tuple[str, dict]:
    data = _fields(drive, _DRIVE)
    if not data.get('state') and data.get('health'):
        data['state'] = 'Enabled'   # some BMCs report health only
    return '%s:%s@%s' % (drive.name, storage_id, system_id), data


def drive_sensors(node, system) -> dict:
    """From SimpleStorage (drives inline) if served, else Storage."""
    import sushy
    system_id = system.path.rstrip('/').split('/')[-1]
    drives: dict[str, dict] = {}
    try:
        for ss in system.simple_storage.get_members():
            for dev in ss.devices:
                if dev.capacity_bytes:      # not a backplane
                    name, data = _drive(dev, ss.identity, system_id)
                    drives[name] = data
        return drives
    except sushy.exceptions.MissingAttributeError:
        pass
    except sushy.exceptions.SushyError as e:
        LOG.debug('Node %s: no simple storage drive data: %s', node.uuid,
                  e)
        return drives
    try:
        for st in system.storage.get_members():
            for d in st.drives:
                name, data = _drive(d, st.identity, system_id)
                drives[name] = data
    except sushy.exceptions.SushyError as e:
        LOG.debug('Node %s: no storage drive data: %s', node.uuid, e)
    return drives


def read(node, system) -> dict:
    """Every sensor of ``system`` (a sushy System) in Ironic's shape."""
    out: dict[str, dict] = {
        'Extra': {'Manufacturer': system.manufacturer,
                  'Model': system.model, 'UUID': system.uuid},
        'Fan': {}, 'Temperature': {}, 'Power': {}, 'Drive': {}}
    chassis = _read(node, 'chassis', lambda: system.chassis, [])
    if chassis:
        out.update(chassis_sensors(node, chassis[0]))
    out['Drive'] = _read(node, 'drive', lambda: drive_sensors(node, system),
                         {})
    return out
