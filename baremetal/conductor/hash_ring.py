"""Which conductor owns a node: consistent hashing with replicas.

One ring per (hardware type, conductor group), built from the live
conductors recorded in the database.  Adding or removing a conductor
moves only the nodes that hashed to it.
"""

import bisect
import datetime
import hashlib
import threading
import time

from baremetal.common import exception
from baremetal.db import conductors as db_conductors
from baremetal.db import rows as db_rows


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.md5(key.encode(),
                                      usedforsecurity=False).digest()[:8],
                          'big')


class HashRing:
    """Consistent hash ring over a set of host names."""

    def __init__(self, hosts, replicas: int = 64) -> None:
        self.hosts = sorted(set(hosts))
        points = sorted((_hash('%s-%d' % (h, r)), h)
                        for h in self.hosts for r in range(replicas))
        self._keys = [p[0] for p in points]
        self._hosts = [p[1] for p in points]

    def get_host(self, key: str) -> str:
        if not self._keys:
            raise exception.NoValidHost(reason='empty hash ring')
        if len(self.hosts) == 1:
            return self.hosts[0]
        i = bisect.bisect(self._keys, _hash(key)) % len(self._keys)
        return self._hosts[i]


class RingManager:
    """Rings from the conductors table, rebuilt every ``reset_interval``
    seconds or on demand (``reset()``).

    ``silent_after`` (the API's rings): a conductor whose last heartbeat
    is older than that many seconds is left out of its rings - unless
    every conductor of a ring is, when all stay: requests go to the
    conductor that will serve the node, rather than wait on one that
    died until it is found dead (``heartbeat_timeout``).  A conductor's
    own rings keep it until then: which conductor *owns* a node (its
    periodic work, the take-over of a dead one's) changes only then."""

    def __init__(self, conf, silent_after: int | None = None) -> None:
        self.conf = conf
        self._silent_after = silent_after
        self._lock = threading.Lock()
        self._rings: dict[tuple[str, str], HashRing] | None = None
        self._silent: frozenset[str] = frozenset()
        self._built = 0.0
        self._ttl = 0.0

    def reset(self) -> None:
        with self._lock:
            self._rings = None

    def rings(self) -> dict[tuple[str, str], HashRing]:
        now = time.monotonic()
        rings = self._rings  # one read: reset() may clear it meanwhile
        if rings is not None and now - self._built < self._ttl:
            return rings
        c = self.conf.conductor
        live = db_conductors.live_conductors(c.heartbeat_timeout)
        hosts: dict[tuple[str, str], set[str]] = {}
        silent: set[str] = set()
        ttl = c.hash_ring_reset_interval
        if self._silent_after is not None:
            since = db_rows.utcnow() - datetime.timedelta(
                seconds=self._silent_after)
            for cond in live:
                left = (cond['updated_at'] - since).total_seconds()
                if left < 0:
                    silent.add(cond['hostname'])
                else:
                    # rebuilt when the next one would turn silent
                    ttl = min(ttl, max(left, 1.0))
        for cond in live:
            for hw in cond['drivers'] or []:
                hosts.setdefault((hw, cond['conductor_group'] or ''),
                                 set()).add(cond['hostname'])
        rings = {k: HashRing((v - silent) or v, c.hash_ring_replicas)
                 for k, v in hosts.items()}
        with self._lock:
            self._ttl = ttl
            self._built = now
            self._rings = rings
            self._silent = frozenset(silent)
        return rings

    def is_silent(self, host: str) -> bool:
        """Whether ``host``'s heartbeat is ``silent_after`` old (the
        rings route around it, where it is not the last of one)."""
        self.rings()
        return host in self._silent

    def ring_for(self, driver: str, group: str | None) -> HashRing | None:
        """The ring of a hardware type and conductor group, if any
        conductor serves them."""
        ring = self.rings().get((driver, (group or '').lower()))
        if ring is None:
            # the list may be stale: look once more before failing
            self.reset()
            ring = self.rings().get((driver, (group or '').lower()))
        return ring

    def host_for(self, node_uuid: str, driver: str, group: str) -> str:
        ring = self.ring_for(driver, group)
        if ring is None:
            raise exception.NoValidHost(
                reason='No conductor service registered which supports '
                       'driver %s for conductor group "%s".'
                % (driver, group or ''))
        return ring.get_host(node_uuid)
