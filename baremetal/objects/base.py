"""Rows as domain objects with change tracking.

A record wraps the dict a row came as.  Assigning an attribute marks it
changed; JSON fields may also be mutated in place: ``save()`` compares
them with their loaded form.  ``save()`` writes only what changed, in
one UPDATE.  A record class names its rows (``db.nodes.ROWS``): where
they are stored, and the error of a missing one.
"""

import copy
import json
from typing import Any, ClassVar

import orjson

from baremetal.db import rows as db_rows


def _snapshot(value: Any) -> bytes:
    """A canonical serialisation, to tell whether a JSON field changed."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS
                            | orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError too
        return json.dumps(value, sort_keys=True, default=str).encode()


def _merged(before: dict, after: dict, stored: dict) -> dict:
    """``stored`` with the top-level keys that went from ``before`` to
    ``after`` changed the same way."""
    out = dict(stored)
    for k in before.keys() - after.keys():
        out.pop(k, None)
    for k, v in after.items():
        if k not in before or _snapshot(before[k]) != _snapshot(v):
            out[k] = v
    return out


class Record:
    rows: ClassVar[db_rows.Rows]
    json_fields: ClassVar[frozenset[str]] = frozenset()
    # JSON fields that read as {} rather than None when empty
    dict_fields: ClassVar[frozenset[str]] = frozenset()
    __slots__ = ('_data', '_changed', '_json_orig', '_json_now')

    def __init__(self, data: dict) -> None:
        object.__setattr__(self, '_data', data)
        object.__setattr__(self, '_changed', set())
        object.__setattr__(self, '_json_orig', {})
        # the serialisations ``changes`` made last, which
        # ``_reset_tracking`` takes as the new originals after a save
        # (a JSON field is serialised once per save, not three times)
        object.__setattr__(self, '_json_now', None)

    def __getattr__(self, name: str) -> Any:
        data = object.__getattribute__(self, '_data')
        try:
            value = data[name]
        except KeyError:
            raise AttributeError(name) from None
        if name in self.json_fields:
            if value is None and name in self.dict_fields:
                # an empty dict the caller may fill in place
                value = data[name] = {}
            orig = self._json_orig
            if name not in orig:
                orig[name] = _snapshot(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        data = self._data
        if name not in data and name not in self.rows.columns:
            raise AttributeError('%s has no field %s'
                                 % (type(self).__name__, name))
        if name in self.json_fields and name not in self._json_orig and \
                name in data:
            # what was read, so that ``rebased`` can tell which keys
            # this record changed
            self._json_orig[name] = _snapshot(data[name])
        data[name] = value
        self._changed.add(name)

    def as_dict(self) -> dict:
        return dict(self._data)

    def changes(self) -> dict:
        out = {k: self._data[k] for k in self._changed}
        data = self._data
        now = {k: _snapshot(data.get(k)) for k in self._json_orig}
        object.__setattr__(self, '_json_now', now)
        for k, orig in self._json_orig.items():
            if k not in out and now[k] != orig:
                out[k] = data[k]
        return out

    def _reset_tracking(self, values: dict | None = None) -> None:
        """After a save of ``values`` (what ``changes`` returned just
        before): what is stored now is the new original.  JSON fields
        already handed out stay tracked, since callers may keep mutating
        the dict they hold."""
        self._changed.clear()
        orig = self._json_orig
        now = self._json_now
        object.__setattr__(self, '_json_now', None)
        data = self._data
        for k in orig:
            if values is not None and now is not None and k in now and (
                    k not in values or values[k] is data.get(k)):
                # serialised by ``changes`` and, unless the caller set
                # another object since, the value that was stored
                orig[k] = now[k]
            else:
                orig[k] = _snapshot(data.get(k))

    def rebased(self, row: dict) -> 'Record':
        """A record of ``row`` (the row read again, as another writer may
        have left it) carrying the changes made to this one.  A field
        set takes its new value; a JSON object this record read and then
        changed brings only the top-level keys it added, changed or
        removed, so what was stored meanwhile under other keys stays
        (an agent token, a step index: a whole stale dict written back
        would undo them)."""
        pending = self.changes()
        fresh = type(self)(row)
        for name, value in pending.items():
            orig = self._json_orig.get(name)
            stored = row.get(name)
            if orig is not None and isinstance(value, dict) and \
                    isinstance(stored, dict):
                before = orjson.loads(orig)
                if isinstance(before, dict):
                    value = _merged(before, value, stored)
            setattr(fresh, name, value)
        return fresh

    def adopt(self, other: 'Record') -> None:
        """Become ``other`` (a ``rebased`` copy), tracking included, for
        callers that hold this record."""
        for slot in Record.__slots__:
            object.__setattr__(self, slot, object.__getattribute__(
                other, slot))

    @classmethod
    def get(cls, ident: Any, columns=None):
        return cls(cls.rows.get(ident, columns))

    @classmethod
    def create(cls, values: dict):
        return cls(cls.rows.create(values))

    def save(self, where=()) -> int:
        """Write the changed fields; returns rows updated (0 or 1)."""
        changes = self.changes()
        if not changes:
            return 1
        changes['updated_at'] = db_rows.utcnow()
        n = self.rows.update(self._data['id'], changes, where)
        if n:
            self._data['updated_at'] = changes['updated_at']
            self._reset_tracking(changes)
            self._saved(changes)
        return n

    def _saved(self, changes: dict) -> None:
        """After ``changes`` were written (for subclasses)."""

    def refresh(self) -> None:
        fresh = self.rows.get(self._data['id'],
                              shown_as=self._data.get('uuid'))
        self._data.clear()
        self._data.update(fresh)
        self._changed.clear()
        self._json_orig.clear()

    def destroy(self) -> None:
        self.rows.delete(self._data['id'])

    def copy(self):
        return type(self)(copy.deepcopy(self._data))
