"""Network adapters for the sushy-tools emulator, which serves none.

tests/bmc/redfish_server.py adds ``/redfish/v1/Chassis/<id>/
NetworkAdapters`` and its members (a Redfish NetworkAdapter 1.x resource
each, static: the adapters below, their controller's
``FirmwarePackageVersion``) and links the collection from each chassis,
so that the firmware interface reads NIC firmware versions from it as it
does from a real BMC.
"""

import json

import flask

ADAPTERS = (
    {'Id': 'NIC.Slot.1', 'Manufacturer': 'Intel', 'Model': 'X710',
     'SerialNumber': 'X710-0001', 'FirmwarePackageVersion': '9.20'},
    {'Id': 'NIC.Embedded.1', 'Manufacturer': 'Broadcom',
     'Model': 'BCM5720', 'SerialNumber': 'BCM-0002',
     'FirmwarePackageVersion': '22.31.6'},
)


def _base(identity: str) -> str:
    return '/redfish/v1/Chassis/%s/NetworkAdapters' % identity


def _collection(identity):
    return flask.jsonify({
        '@odata.type': '#NetworkAdapterCollection.NetworkAdapterCollection',
        '@odata.id': _base(identity), 'Name': 'Network Adapters',
        'Members@odata.count': len(ADAPTERS),
        'Members': [{'@odata.id': '%s/%s' % (_base(identity), a['Id'])}
                    for a in ADAPTERS]})


def _adapter(identity, adapter):
    found = [a for a in ADAPTERS if a['Id'] == adapter]
    if not found:
        return flask.jsonify({'error': 'no such adapter'}), 404
    a = found[0]
    return flask.jsonify({
        '@odata.type': '#NetworkAdapter.v1_5_0.NetworkAdapter',
        '@odata.id': '%s/%s' % (_base(identity), a['Id']),
        'Id': a['Id'], 'Name': a['Id'], 'Manufacturer': a['Manufacturer'],
        'Model': a['Model'], 'SerialNumber': a['SerialNumber'],
        'Controllers': [{
            'FirmwarePackageVersion': a['FirmwarePackageVersion'],
            'ControllerCapabilities': {'NetworkPortCount': 2}}],
        'Status': {'State': 'Enabled', 'Health': 'OK'}})


def install(app) -> None:
    chassis = app.view_functions['chassis_resource']

    def chassis_with_adapters(identity):
        response = flask.make_response(chassis(identity))
        if flask.request.method == 'GET' and response.status_code == 200:
            doc = json.loads(response.get_data())
            doc['NetworkAdapters'] = {'@odata.id': _base(identity)}
            response.set_data(json.dumps(doc))
        return response

    app.view_functions['chassis_resource'] = chassis_with_adapters
    app.add_url_rule('/redfish/v1/Chassis/<identity>/NetworkAdapters',
                     endpoint='chassis_network_adapters',
                     view_func=_collection)
    app.add_url_rule(
        '/redfish/v1/Chassis/<identity>/NetworkAdapters/<adapter>',
        endpoint='chassis_network_adapter', view_func=_adapter)
