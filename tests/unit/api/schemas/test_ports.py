"""Port create and PATCH refused as Ironic 39 refuses them (status and
message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'
MAC = '52:54:00:00:00:09'
BOOL_VALUES = ("'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', "
               "'true', 'y', 'yes'")
ALLOWED = ('address, extra, is_smartnic, local_link_connection, '
           'node_ident, node_uuid, physical_network, portgroup_uuid, '
           'pxe_enabled, name, description, vendor, category, '
           'available_for_dynamic_portgroup')

CREATE_CASES = [
    ({}, "Schema error for port: 'address' is a required property"),
    ({'address': 'zz'}, 'Expected valid MAC address for address: zz'),
    ({'node_uuid': 'nope'}, 'Expected UUID for node_uuid: nope'),
    ({'nope': 1}, "Schema error for port: Additional properties are not "
                  "allowed ('nope' was unexpected)"),
    ({'extra': 's'},
     "Schema error for port: 's' is not of type 'object', 'null'"),
    ({'uuid': 'x'}, 'Expected UUID for uuid: x'),
    ({'pxe_enabled': 'maybe'}, "Invalid pxe_enabled: Unrecognized value "
                               "'maybe', acceptable values are: "
                               + BOOL_VALUES),
    ({'physical_network': 'x' * 65},
     "Schema error for port: '%s' is too long" % ('x' * 65)),
]


@pytest.mark.parametrize('fields,message', CREATE_CASES)
def test_port_create_refused_as_ironic(api, fields, message):
    node = api.create_node()
    body = {'node_uuid': node['uuid'], 'address': MAC}
    body.update(fields)
    if fields == {}:
        del body['address']
    status, out, _ = api.request('POST', '/v1/ports', body, version=V)
    assert (status, harness.error_message(out)) == (400, message)


PATCH_CASES = [
    ('add', '/nope', 1,
     'Cannot patch /nope. Only the following can be updated: ' + ALLOWED),
    ('replace', '/uuid', '12345678-1234-1234-1234-123456789012',
     'Cannot patch /uuid. Only the following can be updated: ' + ALLOWED),
    ('replace', '/address', 'zz',
     'Expected valid MAC address for address: zz'),
    ('replace', '/extra', 's',
     "Schema error for patch: 's' is not of type 'object', 'null'"),
    ('remove', '/address', None,
     "Schema error for patch: 'address' is a required property"),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_port_patch_refused_as_ironic(api, op, path, value, message):
    node = api.create_node()
    status, port, _ = api.request(
        'POST', '/v1/ports', {'node_uuid': node['uuid'], 'address': MAC},
        version=V)
    assert status == 201
    patch = {'op': op, 'path': path}
    if op != 'remove':
        patch['value'] = value
    status, out, _ = api.request('PATCH', '/v1/ports/%s' % port['uuid'],
                                 [patch], version=V)
    assert (status, harness.error_message(out)) == (400, message)
    status, now, _ = api.request('GET', '/v1/ports/%s' % port['uuid'],
                                 version=V)
    assert now['address'] == MAC and now['extra'] == {}
