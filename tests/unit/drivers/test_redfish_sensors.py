"""Redfish readings in Ironic's shape (redfish/sensors.py), on stand-in
sushy objects: what a BMC that lacks a resource gives."""

import types

import sushy

from baremetal.drivers.modules.redfish import sensors

NODE = types.SimpleNamespace(uuid='n1')
OK = types.SimpleNamespace(state=types.SimpleNamespace(value='Enabled'),
                           health=types.SimpleNamespace(value='OK'))


def _missing(what):
    def get(self):
        raise sushy.exceptions.MissingAttributeError(attribute=what,
                                                     resource='/x')
    return property(get)


class _Chassis:
    identity = 'C1'
    thermal = types.SimpleNamespace(
        temperatures=[types.SimpleNamespace(
            identity='0', reading_celsius=40, physical_context='CPU',
            sensor_number=1, max_reading_range_temp=90,
            min_reading_range_temp=0, status=OK)],
        fans=[])
    power = _missing('Power')


class _System:
    path = '/redfish/v1/Systems/S1'
    manufacturer, model, uuid = 'Acme', 'X1', 'u-1'
    chassis = [_Chassis()]
    simple_storage = _missing('SimpleStorage')
    storage = types.SimpleNamespace(get_members=lambda: [
        types.SimpleNamespace(identity='RAID', drives=[
            types.SimpleNamespace(name='d0', model='M', capacity_bytes=1,
                                  status=types.SimpleNamespace(
                                      health=types.SimpleNamespace(
                                          value='OK')))])])


def test_a_missing_resource_leaves_its_type_empty_and_storage_is_used():
    out = sensors.read(NODE, _System())
    assert out['Extra'] == {'Manufacturer': 'Acme', 'Model': 'X1',
                            'UUID': 'u-1'}
    assert out['Temperature'] == {'0@C1': {
        'identity': '0', 'reading_celsius': 40, 'physical_context': 'CPU',
        'sensor_number': 1, 'max_reading_range_temp': 90,
        'min_reading_range_temp': 0, 'state': 'Enabled', 'health': 'OK'}}
    assert (out['Fan'], out['Power']) == ({}, {})
    # a drive reporting only its health is taken as enabled (as Ironic)
    assert out['Drive'] == {'d0:RAID@S1': {
        'name': 'd0', 'model': 'M', 'capacity_bytes': 1, 'health': 'OK',
        'state': 'Enabled'}}


def test_a_system_in_no_chassis_has_no_chassis_sensors():
    system = _System()
    system.chassis = []
    out = sensors.read(NODE, system)
    assert (out['Temperature'], out['Fan'], out['Power']) == ({}, {}, {})
