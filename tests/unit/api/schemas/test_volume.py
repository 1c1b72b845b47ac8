"""Volume connector and target create refused as Ironic 39 refuses them
(status and message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'

CONNECTOR_CASES = [
    ({'nope': 1}, "Schema error for connector: Additional properties are "
                  "not allowed ('nope' was unexpected)"),
    ({'connector_id': None},
     "Schema error for connector: 'connector_id' is a required property"),
    ({'node_uuid': 'nope'}, 'Expected UUID for node_uuid: nope'),
    ({'extra': 's'},
     "Schema error for connector: 's' is not of type 'object', 'null'"),
    ({'uuid': 'x'}, 'Expected UUID for uuid: x'),
]

TARGET_CASES = [
    ({'nope': 1}, "Schema error for target: Additional properties are "
                  "not allowed ('nope' was unexpected)"),
    ({'volume_type': None},
     "Schema error for target: 'volume_type' is a required property"),
    ({'boot_index': 'x'},
     "Schema error for target: 'x' is not of type 'integer'"),
    ({'properties': 's'},
     "Schema error for target: 's' is not of type 'object', 'null'"),
    ({'uuid': 'x'}, 'Expected UUID for uuid: x'),
]


def _body(base, fields):
    body = dict(base, **fields)
    return {k: v for k, v in body.items() if v is not None}


@pytest.mark.parametrize('fields,message', CONNECTOR_CASES)
def test_volume_connector_create_refused_as_ironic(api, fields, message):
    node = api.create_node()
    body = _body({'node_uuid': node['uuid'], 'type': 'iqn',
                  'connector_id': 'iqn.x'}, fields)
    status, out, _ = api.request('POST', '/v1/volume/connectors', body,
                                 version=V)
    assert (status, harness.error_message(out)) == (400, message)


@pytest.mark.parametrize('fields,message', TARGET_CASES)
def test_volume_target_create_refused_as_ironic(api, fields, message):
    node = api.create_node()
    body = _body({'node_uuid': node['uuid'], 'volume_type': 'iscsi',
                  'volume_id': 'v1', 'boot_index': 0}, fields)
    status, out, _ = api.request('POST', '/v1/volume/targets', body,
                                 version=V)
    assert (status, harness.error_message(out)) == (400, message)


def test_volume_target_patch_of_a_field_not_patchable(api):
    node = api.create_node()
    status, vt, _ = api.request(
        'POST', '/v1/volume/targets',
        {'node_uuid': node['uuid'], 'volume_type': 'iscsi',
         'volume_id': 'v1', 'boot_index': 0}, version=V)
    assert status == 201, vt
    status, out, _ = api.request(
        'PATCH', '/v1/volume/targets/%s' % vt['uuid'],
        [{'op': 'add', 'path': '/nope', 'value': 1}], version=V)
    assert (status, harness.error_message(out)) == (
        400, 'Cannot patch /nope. Only the following can be updated: '
             'boot_index, extra, node_uuid, properties, volume_id, '
             'volume_type')


def test_volume_connector_patch_removing_a_required_field(api):
    node = api.create_node()
    status, vc, _ = api.request(
        'POST', '/v1/volume/connectors',
        {'node_uuid': node['uuid'], 'type': 'iqn', 'connector_id': 'iqn.q'},
        version=V)
    assert status == 201, vc
    status, out, _ = api.request(
        'PATCH', '/v1/volume/connectors/%s' % vc['uuid'],
        [{'op': 'remove', 'path': '/connector_id'}], version=V)
    assert (status, harness.error_message(out)) == (
        400, "Schema error for patch: 'connector_id' is a required property")
