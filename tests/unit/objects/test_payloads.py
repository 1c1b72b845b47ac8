"""Notification payloads (objects/payloads.py) against Ironic's payload
classes: names, versions, every field, datetimes as
oslo.versionedobjects writes them, secrets masked."""

import datetime

import pytest

from baremetal.objects import payloads

# Ironic's NodePayload 1.17 fields (ironic/objects/node.py)
IRONIC_NODE_FIELDS = {
    'clean_step', 'conductor_group', 'console_enabled', 'created_at',
    'deploy_step', 'description', 'disable_power_off', 'driver', 'extra',
    'boot_mode', 'secure_boot', 'inspection_finished_at',
    'inspection_started_at', 'instance_uuid', 'last_error', 'maintenance',
    'maintenance_reason', 'fault', 'bios_interface', 'boot_interface',
    'console_interface', 'deploy_interface', 'inspect_interface',
    'management_interface', 'network_interface', 'power_interface',
    'raid_interface', 'rescue_interface', 'storage_interface',
    'vendor_interface', 'name', 'owner', 'lessee', 'power_state',
    'properties', 'protected', 'protected_reason', 'provision_state',
    'provision_updated_at', 'resource_class', 'retired', 'retired_reason',
    'target_power_state', 'target_provision_state', 'traits',
    'updated_at', 'uuid'}

NODE_ROW = {
    'id': 7, 'uuid': '1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
    'driver': 'ipmi', 'provision_state': 'deploying',
    'target_provision_state': 'active', 'power_state': 'power off',
    'created_at': datetime.datetime(2016, 1, 26, 20, 41, 3, 123456),
    'updated_at': None, 'extra': None, 'properties': {'cpus': 8},
    'driver_info': {'ipmi_address': '192.0.2.1', 'ipmi_password': 'pw'},
    'instance_info': {'image_url': 'http://u:p@host/img',
                      'image_source': 'x'},
    'driver_internal_info': {'is_whole_disk_image': True},
    'reservation': 'c1', 'chassis_id': 3, 'firmware_interface': 'fake',
    'shard': 's', 'health': 'OK'}


def _data(p):
    return p['ironic_object.data']


@pytest.mark.parametrize('name,version,more', [
    ('NodePayload', '1.17', set()),
    ('NodeSetPowerStatePayload', '1.17', {'to_power'}),
    ('NodeCorrectedPowerStatePayload', '1.17', {'from_power'}),
    ('NodeSetProvisionStatePayload', '1.18', {
        'instance_info', 'driver_internal_info', 'event',
        'previous_provision_state', 'previous_target_provision_state'}),
    ('NodeCRUDPayload', '1.15', {'chassis_uuid', 'instance_info',
                                 'driver_info'}),
])
def test_node_payloads_carry_exactly_ironics_fields(name, version, more):
    extra = {f: 'x' for f in more & {'to_power', 'from_power', 'event',
                                      'previous_provision_state',
                                      'previous_target_provision_state',
                                      'chassis_uuid'}}
    p = payloads.node(name, NODE_ROW, ['T2', 'CUSTOM_T1'], **extra)
    assert p['ironic_object.name'] == name
    assert p['ironic_object.namespace'] == 'ironic'
    assert p['ironic_object.version'] == version
    assert set(_data(p)) == IRONIC_NODE_FIELDS | more
    d = _data(p)
    # internal columns Ironic leaves out stay out
    assert not {'id', 'reservation', 'chassis_id', 'shard', 'health',
                'firmware_interface'} & set(d)
    assert d['traits'] == ['CUSTOM_T1', 'T2']
    assert d['created_at'] == '2016-01-26T20:41:03Z'
    assert d['updated_at'] is None
    assert d['extra'] == {}
    for f in extra:
        assert d[f] == 'x'


def test_node_payload_masks_secrets_as_ironic():
    d = _data(payloads.node('NodeCRUDPayload', NODE_ROW, [],
                            chassis_uuid=None))
    assert d['driver_info'] == {'ipmi_address': '192.0.2.1',
                                'ipmi_password': '******'}
    assert d['instance_info'] == {'image_url': '******',
                                  'image_source': 'x'}
    # the row itself is left as it was
    assert NODE_ROW['driver_info']['ipmi_password'] == 'pw'


def test_aware_datetimes_are_written_in_utc():
    tz = datetime.timezone(datetime.timedelta(hours=2))
    assert payloads.isotime(datetime.datetime(2020, 1, 1, 2, 0, 0,
                                              tzinfo=tz)) == \
        '2020-01-01T00:00:00Z'


@pytest.mark.parametrize('resource,name,version,fields', [
    ('chassis', 'ChassisCRUDPayload', '1.0',
     {'description', 'extra', 'created_at', 'updated_at', 'uuid'}),
    ('port', 'PortCRUDPayload', '1.8',
     {'address', 'extra', 'local_link_connection', 'pxe_enabled',
      'node_uuid', 'portgroup_uuid', 'physical_network', 'created_at',
      'updated_at', 'uuid', 'is_smartnic', 'name', 'description', 'vendor',
      'category', 'available_for_dynamic_portgroup'}),
    ('portgroup', 'PortgroupCRUDPayload', '1.3',
     {'address', 'category', 'extra', 'mode', 'name', 'node_uuid',
      'physical_network', 'properties', 'standalone_ports_supported',
      'created_at', 'updated_at', 'uuid', 'dynamic_portgroup'}),
    ('allocation', 'AllocationCRUDPayload', '1.1',
     {'uuid', 'name', 'node_uuid', 'state', 'last_error', 'owner',
      'resource_class', 'traits', 'candidate_nodes', 'extra', 'created_at',
      'updated_at'}),
    ('deploy_template', 'DeployTemplateCRUDPayload', '1.0',
     {'created_at', 'extra', 'name', 'steps', 'updated_at', 'uuid'}),
    ('volumeconnector', 'VolumeConnectorCRUDPayload', '1.0',
     {'extra', 'type', 'connector_id', 'node_uuid', 'created_at',
      'updated_at', 'uuid'}),
    ('volumetarget', 'VolumeTargetCRUDPayload', '1.0',
     {'boot_index', 'extra', 'node_uuid', 'properties', 'volume_id',
      'volume_type', 'created_at', 'updated_at', 'uuid'}),
])
def test_crud_payloads_carry_exactly_ironics_fields(resource, name,
                                                    version, fields):
    p = payloads.crud(resource, {'uuid': 'u', 'id': 1, 'node_id': 2,
                                 'internal_info': {'secret': 1}})
    assert (p['ironic_object.name'], p['ironic_object.version']) == \
        (name, version)
    assert set(_data(p)) == fields


def test_crud_payload_defaults_for_missing_values():
    d = _data(payloads.crud('port', {'uuid': 'u'}))
    assert d['extra'] == {} and d['local_link_connection'] == {}
    assert d['is_smartnic'] is False
    assert d['available_for_dynamic_portgroup'] is True
    d = _data(payloads.crud('allocation', {'uuid': 'u'}))
    assert d['traits'] == [] and d['candidate_nodes'] == []


def test_volume_target_secrets_are_masked():
    d = _data(payloads.crud('volumetarget', {'uuid': 'u', 'properties': {
        'auth_password': 'chap', 'target_lun': 1}}))
    assert d['properties'] == {'auth_password': '******', 'target_lun': 1}


def test_event_types_as_ironic_sends_them():
    assert payloads.event_type('node', 'provision_set', 'start') == \
        'baremetal.node.provision_set.start'
    # Ironic names the object by its class: DeployTemplate
    assert payloads.event_type('deploy_template', 'create', 'end') == \
        'baremetal.deploytemplate.create.end'
