"""MAC addresses as ports hold them: six pairs of hex digits, lower case,
colon-separated (``aa-bb-...`` is taken too)."""

import re

from oslo_log import log

from baremetal.common import storable

LOG = log.getLogger(__name__)

_MAC_RE = re.compile(r'^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$')


def normalized(value) -> str | None:
    """``value`` as a port's address, or None if it is no MAC address."""
    if not isinstance(value, str) or not _MAC_RE.match(value):
        return None
    return value.lower().replace('-', ':')


def usable(values, node_uuid: str, who: str) -> list[str]:
    """The MAC addresses among what ``who`` reported as a node's NICs
    (a BMC or an agent may report anything), normalized; the rest is
    logged and left out."""
    out = []
    for value in values:
        mac = normalized(value)
        if mac is None:
            LOG.warning('Node %s: ignoring the NIC address %s %s reported: '
                        'not a MAC address', node_uuid,
                        storable.bounded(repr(value), 80), who)
        else:
            out.append(mac)
    return out
