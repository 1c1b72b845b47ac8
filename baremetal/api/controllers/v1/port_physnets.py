"""Physical networks of port groups and their member ports.

All the ports of a port group are on one physical network (None, the
legacy "any network", counts as one).  From API 1.102 the port group
has a physical_network of its own: setting it sets its ports', and a
member port's physical_network can then only change with its group's.
"""

from baremetal.common import exception
from baremetal.db import portgroups as db_portgroups
from baremetal.db import ports as db_ports


def check_member(portgroup_id: int, physnet: str | None,
                 port_id: int | None = None) -> None:
    """Check that a port on ``physnet`` may be a member of the group
    (``port_id``: the port itself, when it exists already).

    The group's physical network is its other ports', else its own;
    a group with neither takes the joining port's.  Raises Conflict
    when they differ."""
    others = db_ports.physnets_in_portgroup(portgroup_id, port_id)
    group = db_portgroups.ROWS.get(portgroup_id,
                                   ('id', 'uuid', 'physical_network'))
    if len(others) > 1:
        raise exception.Conflict(
            reason='Port group %s has member ports with inconsistent '
                   'physical networks (%s); all ports of a port group '
                   'must have the same physical network'
            % (group['uuid'], ', '.join(sorted(map(str, others)))))
    if others:
        expected = others.pop()
    elif group['physical_network'] is not None:
        expected = group['physical_network']
    else:
        if physnet is not None:
            db_portgroups.ROWS.update(portgroup_id,
                                      {'physical_network': physnet})
        return
    if physnet != expected:
        raise exception.Conflict(
            reason='Port with physical network %s cannot become a member '
                   'of port group %s which has ports in physical network '
                   '%s.' % (physnet, group['uuid'], expected))


def set_for_group(portgroup_id: int, physnet: str | None) -> None:
    """Give the group's member ports the group's new physical network."""
    db_ports.set_physnet_of_portgroup(portgroup_id, physnet)


def check_value(physnet) -> str | None:
    """A physical_network as a request gives it: null, or a string of
    1 to 64 characters."""
    if physnet is None:
        return None
    if not isinstance(physnet, str) or len(physnet) > 64:
        raise exception.InvalidParameterValue(
            err='physical_network must be a string of at most 64 '
                'characters')
    if not physnet:
        raise exception.InvalidParameterValue(
            err='A non-empty value is required when setting '
                'physical_network')
    return physnet

