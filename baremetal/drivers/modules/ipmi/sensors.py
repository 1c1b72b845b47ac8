"""IPMI sensor readings in the shape Ironic's ``ipmi`` management
interface reports them (``ipmitool sdr -v`` parsed into a dict): sensor
type -> sensor ID -> fields, as ironic-prometheus-exporter's IPMI parser
reads them::

    {"Temperature": {"Inlet Temp (0x5)": {
        "Sensor ID": "Inlet Temp (0x5)",
        "Entity ID": "7 (System board)",
        "Sensor Type (Threshold)": "Temperature (0x01)",
        "Sensor Reading": "21 (+/- 0.5) degrees C",
        "Status": "ok"}}}

The sensor type is the first word of the type's name ("Power Supply"
-> "Power"), as Ironic takes it.  Discrete sensors read as the bits of
their asserted states in hex ("0h": none).  Sensors the BMC reports
unavailable are left out, as ipmitool shows them without a reading.
"""


# pyghmi's unit -> ipmitool's
_UNITS = {'\u00b0C': 'degrees C', '\u00b0F': 'degrees F', 'K': 'degrees K',
          'V': 'Volts', 'A': 'Amps', 'W': 'Watts', 'RPM': 'RPM',
          'Hz': 'Hz', 'CFM': 'CFM'}
# pyghmi's health bits (Warning 1, Critical 2, Failed 4) -> ipmitool's
# threshold status
_STATUS = ((4, 'nr'), (2, 'cr'), (1, 'nc'))


def _number(value: float) -> str:
    if float(value).is_integer():
        return '%d' % value
    return ('%.3f' % value).rstrip('0').rstrip('.')


def _status(health: int) -> str:
    for bit, name in _STATUS:
        if health & bit:
            return name
    return 'ok'


def _entity(r: dict) -> str:
    number = r.get('entity_number')
    return ('%d (%s)' % (number, r['entity']) if number is not None
            else r['entity'])


def _reading(r: dict) -> str | None:
    if not r['threshold']:
        return '%xh' % r['state_bits']
    if r['value'] is None:
        return None
    unit = 'percent' if r['percent'] else _UNITS.get(r['unit'], r['unit'])
    text = _number(r['value'])
    if r['imprecision'] is not None:
        text += ' (+/- %s)' % _number(r['imprecision'])
    return ('%s %s' % (text, unit)).strip()


def ironic_shape(readings: list[dict]) -> dict:
    """``client.read_sensors``' readings -> Ironic's sensor data dict."""
    out: dict[str, dict] = {}
    for r in readings:
        if r['unavailable']:
            continue
        reading = _reading(r)
        if reading is None:
            continue
        sensor_id = '%s (0x%x)' % (r['name'], r['number'])
        kind = 'Threshold' if r['threshold'] else 'Discrete'
        data = {'Sensor ID': sensor_id,
                'Entity ID': _entity(r),
                'Sensor Type (%s)' % kind: '%s (0x%02x)' % (
                    r['type'], r['type_number']),
                'Sensor Reading': reading}
        if r['threshold']:
            data['Status'] = _status(r['health'])
        elif r['states']:
            data['States Asserted'] = ', '.join(r['states'])
        category = r['type'].split(' ', 1)[0]
        out.setdefault(category, {})[sensor_id] = data
    return out
