"""Node create and PATCH validation: the status and the message Ironic
39 answers for the same request (recorded with tools/api-diff)."""

import pytest

from tests import harness

V = '1.95'
BOOL_VALUES = ("'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', "
               "'true', 'y', 'yes'")

CREATE_CASES = [
    ({'name': 'bad name!'},
     "Cannot create node with invalid name 'bad name!'"),
    ({'uuid': 'not-a-uuid'}, 'Expected UUID for uuid: not-a-uuid'),
    ({'chassis_uuid': 'nope'}, 'Expected UUID for chassis_uuid: nope'),
    ({'instance_uuid': 'nope'}, 'Expected UUID for instance_uuid: nope'),
    ({'resource_class': 'x' * 81},
     "Schema error for node: '%s' is too long" % ('x' * 81)),
    ({'nope': 1}, "Schema error for node: Additional properties are not "
                  "allowed ('nope' was unexpected)"),
    ({'nope': 1, 'zz': 2}, "Schema error for node: Additional properties "
                           "are not allowed ('nope', 'zz' were unexpected)"),
    ({'driver': 5}, "Schema error for node: 5 is not of type 'string'"),
    ({'extra': [1]},
     "Schema error for node: [1] is not of type 'object', 'null'"),
    ({'name': 5}, "Schema error for node: 5 is not of type 'string', 'null'"),
    ({'owner': 5},
     "Schema error for node: 5 is not of type 'string', 'null'"),
    ({'maintenance': 'maybe'}, "Invalid maintenance: Unrecognized value "
                               "'maybe', acceptable values are: "
                               + BOOL_VALUES),
    ({'parent_node': 'x' * 37},
     "Schema error for node: '%s' is too long" % ('x' * 37)),
]


@pytest.mark.parametrize('fields,message', CREATE_CASES)
def test_node_create_refused_as_ironic(api, fields, message):
    body = dict({'driver': 'fake-hardware'}, **fields)
    status, out, _ = api.request('POST', '/v1/nodes', body, version=V)
    assert (status, harness.error_message(out)) == (400, message)


def test_node_create_without_driver_is_a_schema_error(api):
    status, out, _ = api.request('POST', '/v1/nodes', {'name': 'x'},
                                 version=V)
    assert (status, harness.error_message(out)) == (
        400, "Schema error for node: 'driver' is a required property")


def test_node_create_empty_instance_name(api):
    status, out, _ = api.request(
        'POST', '/v1/nodes', {'driver': 'fake-hardware',
                              'instance_name': ''}, version='1.104')
    assert (status, harness.error_message(out)) == (
        400, "Schema error for node: '' should be non-empty")


PATCH_CASES = [
    ('replace', '/name', 'bad name!',
     "Node {u}: Cannot change name to invalid name 'bad name!'"),
    ('replace', '/name', 5, "Node {u}: Cannot change name to invalid "
                            "name '5'"),
    ('replace', '/resource_class', 'x' * 81,
     "Schema error for patch: '%s' is too long" % ('x' * 81)),
    ('replace', '/extra', 's',
     "Schema error for patch: 's' is not of type 'object', 'null'"),
    ('replace', '/driver', None,
     "Schema error for patch: None is not of type 'string'"),
    ('remove', '/driver', None,
     "Schema error for patch: 'driver' is a required property"),
    ('replace', '/owner', 5,
     "Schema error for patch: 5 is not of type 'string', 'null'"),
    ('replace', '/protected_reason', 5,
     "Schema error for patch: 5 is not of type 'string', 'null'"),
    ('replace', '/instance_uuid', 'nope',
     'Expected UUID for instance_uuid: nope'),
    ('replace', '/chassis_uuid', 'nope',
     'Expected UUID for chassis_uuid: nope'),
    ('replace', '/description', 'x' * 4097,
     'Cannot update node with description exceeding 4096 characters'),
    ('replace', '/protected', 'maybe',
     "Invalid protected: Unrecognized value 'maybe', acceptable values "
     "are: " + BOOL_VALUES),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_node_patch_refused_as_ironic(api, op, path, value, message):
    node = api.create_node(name='schema-node')
    patch = {'op': op, 'path': path}
    if op != 'remove':
        patch['value'] = value
    status, out, _ = api.request('PATCH', '/v1/nodes/%s' % node['uuid'],
                                 [patch], version=V)
    assert (status, harness.error_message(out)) == (
        400, message.format(u=node['uuid']))
    assert api.node(node['uuid'])['name'] == 'schema-node'


@pytest.mark.parametrize('path', ['/nope', '/uuid', '/target_raid_config',
                                  '/maintenance_reason'])
def test_node_patch_of_a_field_not_patchable(api, path):
    node = api.create_node()
    status, out, _ = api.request(
        'PATCH', '/v1/nodes/%s' % node['uuid'],
        [{'op': 'replace', 'path': path, 'value': 'x'}], version=V)
    message = harness.error_message(out)
    assert status == 400
    assert message.startswith(
        'Cannot patch %s. Only the following can be updated: '
        'automated_clean, bios_interface, boot_interface, ' % path)
    assert message.endswith(', parent_node, firmware_interface')


def test_node_patch_valid_change_still_applies(api):
    node = api.create_node()
    status, out, _ = api.request(
        'PATCH', '/v1/nodes/%s' % node['uuid'],
        [{'op': 'add', 'path': '/extra/k', 'value': 'v'},
         {'op': 'replace', 'path': '/maintenance', 'value': 'true'}],
        version=V)
    assert status == 200, out
    assert out['extra'] == {'k': 'v'} and out['maintenance'] is True


def test_node_create_body_not_an_object(api):
    status, out, _ = api.request('POST', '/v1/nodes', [1], version=V)
    assert (status, harness.error_message(out)) == (
        400, "Schema error for node: [1] is not of type 'object'")
