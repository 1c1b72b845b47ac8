"""Node retirement: a retired node never takes another workload.

Rules (see doc/source/admin/retirement.rst):
* ``retired`` may be set in any state but ``available`` (manage first);
* cleaning of a retired node ends in MANAGEABLE, never AVAILABLE
  (``cleaning._done``);
* ``provide`` on a retired node is refused with 409 (Ironic answers 400).

The two checks are the API's (before any RPC) and the conductor's (under
the node's lock), so they live here, below both.
"""

from baremetal.common import exception
from baremetal.common import states


def check_can_retire(node) -> None:
    if node.provision_state == states.AVAILABLE:
        raise exception.NodeNotRetirable(node=node.uuid,
                                         state=node.provision_state)


def check_providable(node) -> None:
    if node.retired:
        raise exception.NodeIsRetired(op='provide', node=node.uuid)
