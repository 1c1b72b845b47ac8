"""A chassis Power resource for the sushy-tools emulator, which serves
Thermal (temperatures, fans) but no Power.

tests/bmc/redfish_server.py adds ``/redfish/v1/Chassis/<id>/Power``
(two power supplies, static readings, as a Redfish Power 1.5 resource)
and links it from each chassis, so that sensor data reads it as it
reads a real BMC's.
"""

import json

import flask

SUPPLIES = (
    {'MemberId': '0', 'Name': 'PSU 1', 'SerialNumber': 'PSU0001',
     'PowerCapacityWatts': 800, 'LineInputVoltage': 230,
     'LastPowerOutputWatts': 212, 'Health': 'OK'},
    {'MemberId': '1', 'Name': 'PSU 2', 'SerialNumber': 'PSU0002',
     'PowerCapacityWatts': 800, 'LineInputVoltage': 230,
     'LastPowerOutputWatts': 198, 'Health': 'Warning'},
)


def _power(identity):
    base = '/redfish/v1/Chassis/%s/Power' % identity
    return flask.jsonify({
        '@odata.type': '#Power.v1_5_0.Power', '@odata.id': base,
        'Id': 'Power', 'Name': 'Power',
        'PowerSupplies': [
            dict({k: v for k, v in s.items() if k != 'Health'},
                 **{'@odata.id': '%s#/PowerSupplies/%s'
                    % (base, s['MemberId']),
                    'Status': {'State': 'Enabled',
                               'Health': s['Health']}})
            for s in SUPPLIES]})


def install(app) -> None:
    chassis = app.view_functions['chassis_resource']

    def chassis_with_power(identity):
        response = flask.make_response(chassis(identity))
        if flask.request.method == 'GET' and response.status_code == 200:
            doc = json.loads(response.get_data())
            doc['Power'] = {'@odata.id': '/redfish/v1/Chassis/%s/Power'
                            % identity}
            response.set_data(json.dumps(doc))
        return response

    app.view_functions['chassis_resource'] = chassis_with_power
    app.add_url_rule('/redfish/v1/Chassis/<identity>/Power',
                     endpoint='chassis_power', view_func=_power)
