"""The target RAID configuration's shape (Ironic's RAID schema) and its
check, shared by RAID interfaces."""

import jsonschema

from baremetal.common import exception

RAID_LEVELS = ('JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0')

SCHEMA = {
    '$schema': 'http://json-schema.org/draft-04/schema#',
    'type': 'object',
    'properties': {'logical_disks': {
        'type': 'array', 'minItems': 1,
        'items': {
            'type': 'object',
            'properties': {
                'raid_level': {'type': 'string', 'enum': list(RAID_LEVELS)},
                'size_gb': {'anyOf': [
                    {'type': 'integer', 'minimum': 0},
                    {'type': 'string', 'enum': ['MAX']}]},
                'volume_name': {'type': 'string'},
                'is_root_volume': {'type': 'boolean'},
                'share_physical_disks': {'type': 'boolean'},
                'disk_type': {'type': 'string', 'enum': ['hdd', 'ssd']},
                'interface_type': {'type': 'string',
                                   'enum': ['sata', 'scsi', 'sas']},
                'number_of_physical_disks': {
                    'type': 'integer', 'minimum': 0,
                    'exclusiveMinimum': True},
                'controller': {'type': 'string'},
                'physical_disks': {'anyOf': [
                    {'type': 'array', 'items': {'type': 'string'}},
                    {'type': 'array', 'items': {'type': 'object'},
                     'minItems': 2}]},
            },
            'required': ['raid_level', 'size_gb'],
            'additionalProperties': False,
            'dependencies': {'physical_disks': ['controller']},
        }}},
    'required': ['logical_disks'],
    'additionalProperties': False,
}


def validate(raid_config) -> None:
    """Raise InvalidParameterValue, with Ironic's messages, for a config
    that breaks the schema or names more than one root volume."""
    try:
        jsonschema.Draft4Validator(SCHEMA).validate(raid_config)
    except jsonschema.ValidationError as e:
        raise exception.InvalidParameterValue(
            err='RAID config validation error: %s' % e.message) from None
    roots = [d for d in raid_config['logical_disks']
             if d.get('is_root_volume')]
    if len(roots) > 1:
        raise exception.InvalidParameterValue(
            err='Raid config cannot have more than one root volume. %d '
                'root volumes were specified' % len(roots))


def filter_disks(node, create_root_volume: bool = True,
                 create_nonroot_volumes: bool = True) -> list[dict]:
    """The node's target logical disks a create step should build."""
    target = node.target_raid_config or {}
    if not target:
        raise exception.MissingParameterValue(
            err='Node %s has no target RAID configuration.' % node.uuid)
    disks = list(target.get('logical_disks') or [])
    skipped = []
    if not create_root_volume:
        disks = [d for d in disks if not d.get('is_root_volume')]
        skipped.append('skipping root volume')
    if not create_nonroot_volumes:
        disks = [d for d in disks if d.get('is_root_volume')]
        skipped.append('skipping non-root volumes')
    if not disks:
        raise exception.MissingParameterValue(
            err='Node %s has empty target RAID configuration after %s.'
            % (node.uuid, ' and '.join(skipped)))
    return disks
