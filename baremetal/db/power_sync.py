"""The rows the power state sync reads each round."""

import sqlalchemy as sa

from baremetal.common import states
from baremetal.db import engine
from baremetal.db import models

_N = models.TABLES['nodes'].c

# what picks the node's owner and its BMC
COLUMNS = ('id', 'uuid', 'driver', 'conductor_group', 'provision_state',
           'power_interface', 'driver_info')


def candidates() -> list[dict]:
    """Nodes whose power the sync reads: not in maintenance, not held by
    a task, not enrolling, and not retired at rest in ``manageable``
    (whose BMCs may be unplugged any day, as the retirement spec says)."""
    with engine.reader() as conn:
        return [dict(r) for r in conn.execute(
            sa.select(*[_N[c] for c in COLUMNS]).where(
                _N.maintenance.is_(False), _N.reservation.is_(None),
                _N.provision_state != states.ENROLL,
                sa.or_(_N.retired.is_not(True),
                       _N.provision_state != states.MANAGEABLE))
        ).mappings()]
