"""IPMI readings in Ironic's ipmitool shape (ipmi/sensors.py)."""

from baremetal.drivers.modules.ipmi import sensors


def _r(**kw):
    r = {'name': 'Inlet Temp', 'number': 5, 'entity': 'System board',
         'entity_number': 7, 'type': 'Temperature', 'type_number': 1,
         'threshold': True, 'unavailable': False, 'value': 21.0,
         'imprecision': 0.5, 'unit': '\u00b0C', 'percent': False,
         'health': 0, 'states': [], 'state_bits': 0}
    r.update(kw)
    return r


def test_threshold_sensor():
    assert sensors.ironic_shape([_r()]) == {'Temperature': {
        'Inlet Temp (0x5)': {
            'Sensor ID': 'Inlet Temp (0x5)',
            'Entity ID': '7 (System board)',
            'Sensor Type (Threshold)': 'Temperature (0x01)',
            'Sensor Reading': '21 (+/- 0.5) degrees C',
            'Status': 'ok'}}}


def test_units_fractions_and_status():
    out = sensors.ironic_shape([
        _r(name='12V', number=0x10, type='Voltage', type_number=2,
           unit='V', value=12.125, imprecision=0.05, health=1),
        _r(name='PSU1', number=0x40, type='Power Supply', type_number=8,
           unit='W', value=300, imprecision=None, health=2 | 1)])
    assert out['Voltage']['12V (0x10)']['Sensor Reading'] == \
        '12.125 (+/- 0.05) Volts'
    assert out['Voltage']['12V (0x10)']['Status'] == 'nc'
    # the type is its name's first word, as Ironic takes it
    assert out['Power']['PSU1 (0x40)']['Sensor Reading'] == '300 Watts'
    assert out['Power']['PSU1 (0x40)']['Status'] == 'cr'


def test_discrete_sensor_reads_its_state_bits():
    out = sensors.ironic_shape([_r(
        name='Mgmt Health', number=0x23, threshold=False,
        type='Management Subsystem Health', type_number=0x28, value=None,
        imprecision=None, state_bits=0x2, states=['Controller offline'])])
    d = out['Management']['Mgmt Health (0x23)']
    assert d['Sensor Type (Discrete)'] == \
        'Management Subsystem Health (0x28)'
    assert (d['Sensor Reading'], d['States Asserted']) == (
        '2h', 'Controller offline')
    assert 'Status' not in d


def test_unavailable_or_unread_sensors_are_left_out():
    assert sensors.ironic_shape([_r(unavailable=True),
                                 _r(number=6, value=None)]) == {}
