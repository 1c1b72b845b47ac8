"""Node: the record every workflow acts on."""

from collections.abc import Callable
from typing import Any

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import node_locks
from baremetal.common import secrets
from baremetal.common import storable
from baremetal.db import nodes as db_nodes
from baremetal.db import ports as db_ports
from baremetal.objects import base
from baremetal.objects import history

JSON_FIELDS = db_nodes.ROWS.json_columns

# free text the conductor fills from exception messages, which may quote
# a URL it requested (the agent's, with the token in its query) or one
# with a password: masked as it is set, so neither the database, the
# node's history nor any API response holds them; and what a BMC or an
# agent said, which may hold characters no database stores (escaped:
# common/storable.py)
ERROR_TEXT_FIELDS = frozenset(('last_error', 'maintenance_reason'))

# how often an API update reads a node changing under it again before
# answering 409
_REREADS = 5


class Node(base.Record):
    rows = db_nodes.ROWS
    json_fields = JSON_FIELDS
    dict_fields = JSON_FIELDS - {'raid_config', 'target_raid_config'}
    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ERROR_TEXT_FIELDS and isinstance(value, str):
            info = self._data.get('driver_internal_info') or {}
            value = storable.text(secrets.mask_text(
                value, info.get(agent_tokens.TOKEN_KEY)
                if isinstance(info, dict) else None))
        super().__setattr__(name, value)

    def _saved(self, changes: dict) -> None:
        if changes.get('last_error'):
            history.record_changes(self._data, changes)

    def save_unlocked(self, conf=None,
                      check: Callable[['Node'], Any] | None = None
                      ) -> None:
        """Save only if no conductor holds the node (API updates),
        waiting for one that does as ``conf`` allows (node_locks).

        Only onto the node as it was read: when a conductor's task came
        and went meanwhile (its ``updated_at`` moved), the node is read
        again and ``check``ed as the request checked it (``check`` gets
        the node as now stored; its state may no longer allow the
        change: the check's error is the answer), and this record's
        changes are saved on top of what the task stored (JSON fields
        key by key, objects/base.py ``rebased``); this record becomes
        that one."""
        node_locks.retrying(conf, self._save_if_unlocked, check)

    def _save_if_unlocked(self, check) -> None:
        for _ in range(_REREADS):
            if 'updated_at' not in self._data:
                where = (db_nodes.unreserved(),)  # a partial read
            else:
                where = (db_nodes.unreserved(),
                         db_nodes.unchanged_since(self._data['updated_at']))
            if self.save(where=where):
                return
            row = db_nodes.get_node(self._data['id'])
            if row['reservation']:
                raise exception.NodeLocked(node=row['uuid'],
                                           host=row['reservation'])
            if check is not None:
                check(Node(dict(row)))
            self.adopt(self.rebased(row))
        raise exception.Conflict(
            reason='node %s kept changing while it was being updated; '
                   'try again' % self._data.get('uuid'))


class Port(base.Record):
    rows = db_ports.ROWS
    json_fields = frozenset(('extra', 'local_link_connection',
                             'internal_info'))
    dict_fields = json_fields
    __slots__ = ()
