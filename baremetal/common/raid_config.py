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


# the software RAID ironic-python-agent builds with mdadm
SOFTWARE = 'software'
SECOND_LEVELS = ('0', '1', '1+0', '5', '6')


def check_software(config: dict) -> None:
    """The agent's rules for a software RAID configuration (one whose
    logical disks name the ``software`` controller), as Ironic documents
    them; other configurations are left to whoever builds them.  Raise
    InvalidParameterValue with the agent's messages."""
    disks = config['logical_disks']
    if not any(d.get('controller') == SOFTWARE for d in disks):
        return
    errors = []
    if len(disks) not in (1, 2):
        errors.append('Software RAID configuration requires one or two '
                      'logical disks')
    if any(d.get('controller') != SOFTWARE for d in disks):
        errors.append("Software RAID configuration requires all logical "
                      "disks to have 'controller'='software'")
    names = [d['volume_name'] for d in disks if 'volume_name' in d]
    for name in sorted({n for n in names if names.count(n) > 1}):
        errors.append('Duplicate software RAID device name %s detected'
                      % name)
    for d in disks:
        hints = d.get('physical_disks')
        if hints is None:
            continue
        if len(hints) < 2:
            errors.append('The physical_disks parameter for software RAID '
                          'must be a list with at least 2 items, each '
                          'specifying a disk in the device hints format')
        if any(not isinstance(h, dict) for h in hints):
            errors.append('The physical_disks parameter for software RAID '
                          'must be a list of device hints (dictionaries)')
    if disks[0]['raid_level'] != '1':
        errors.append('Software RAID Configuration requires RAID-1 for the '
                      'first logical disk')
    if len(disks) == 2:
        if disks[0]['size_gb'] == 'MAX' and disks[1]['size_gb'] == 'MAX':
            errors.append("Software RAID can have only one RAID device "
                          "with size 'MAX'")
        if disks[1]['raid_level'] not in SECOND_LEVELS:
            errors.append('Software RAID configuration does not support '
                          'RAID level %s' % disks[1]['raid_level'])
    if errors:
        raise exception.InvalidParameterValue(err='; '.join(errors))


def names_software(node) -> bool:
    """Does the node's RAID configuration (built, or else its target)
    name the software controller?"""
    for config in (node.raid_config, node.target_raid_config):
        disks = (config or {}).get('logical_disks')
        if disks:
            return any(isinstance(d, dict) and
                       d.get('controller') == SOFTWARE for d in disks)
    return False


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
