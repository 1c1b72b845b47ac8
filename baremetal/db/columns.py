"""What a table's columns are: their names, which hold JSON, and the
kind of value each takes.  For the layers that check a field before it
reaches the database (objects/, the inspection rules' actions), so that
they need not read the schema themselves."""

import functools

import sqlalchemy as sa

from baremetal.db import models


@functools.cache
def names(table: sa.Table) -> frozenset[str]:
    """The names of the table's columns."""
    return frozenset(table.c.keys())


@functools.cache
def required(table: sa.Table) -> frozenset[str]:
    """The names of the columns that cannot be NULL."""
    return frozenset(c.name for c in table.c if not c.nullable)


def json_names(table: sa.Table) -> frozenset[str]:
    """The names of the columns that hold JSON."""
    return frozenset(c.name for c in table.c
                     if isinstance(c.type, models.JSONText))


def kind(table: sa.Table, field: str) -> str | None:
    """``'boolean'`` or ``'integer'`` for a column of that type, else
    None; KeyError for a field that is no column."""
    t = table.c[field].type
    if isinstance(t, sa.Boolean):
        return 'boolean'
    if isinstance(t, sa.Integer):
        return 'integer'
    return None
