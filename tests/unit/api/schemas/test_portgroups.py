"""Portgroup create and PATCH refused as Ironic 39 refuses them (status
and message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'
BOOL_VALUES = ("'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', "
               "'true', 'y', 'yes'")

CREATE_CASES = [
    ({'name': 'bad name!'},
     "Cannot create portgroup with invalid name 'bad name!'"),
    ({'nope': 1}, "Schema error for portgroup: Additional properties are "
                  "not allowed ('nope' was unexpected)"),
    ({'address': 'zz'}, 'Expected valid MAC address for address: zz'),
    ({'node_uuid': None},
     "Schema error for portgroup: 'node_uuid' is a required property"),
    ({'node_uuid': 'nope'}, 'Expected UUID for node_uuid: nope'),
    ({'mode': 5},
     "Schema error for portgroup: 5 is not of type 'string', 'null'"),
    ({'standalone_ports_supported': 'maybe'},
     "Invalid standalone_ports_supported: Unrecognized value 'maybe', "
     "acceptable values are: " + BOOL_VALUES),
    ({'uuid': 'x'}, 'Expected UUID for uuid: x'),
]


@pytest.mark.parametrize('fields,message', CREATE_CASES)
def test_portgroup_create_refused_as_ironic(api, fields, message):
    node = api.create_node()
    body = {'node_uuid': node['uuid']}
    body.update(fields)
    body = {k: v for k, v in body.items() if v is not None}
    status, out, _ = api.request('POST', '/v1/portgroups', body, version=V)
    assert (status, harness.error_message(out)) == (400, message)


PATCH_CASES = [
    ('add', '/nope', 1, 'Cannot patch /nope. Only the following can be '
     'updated: address, extra, mode, name, node_uuid, properties, '
     'standalone_ports_supported, physical_network, category'),
    ('replace', '/name', 'bad name!',
     "Portgroup {u}: Cannot change name to invalid name 'bad name!'"),
    ('replace', '/extra', 's',
     "Schema error for patch: 's' is not of type 'object', 'null'"),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_portgroup_patch_refused_as_ironic(api, op, path, value, message):
    node = api.create_node()
    status, pg, _ = api.request(
        'POST', '/v1/portgroups', {'node_uuid': node['uuid'], 'name': 'pg'},
        version=V)
    assert status == 201
    status, out, _ = api.request(
        'PATCH', '/v1/portgroups/%s' % pg['uuid'],
        [{'op': op, 'path': path, 'value': value}], version=V)
    assert (status, harness.error_message(out)) == (
        400, message.format(u=pg['uuid']))
    status, now, _ = api.request('GET', '/v1/portgroups/%s' % pg['uuid'],
                                 version=V)
    assert now['name'] == 'pg' and now['extra'] == {}
