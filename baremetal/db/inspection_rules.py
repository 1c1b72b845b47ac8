"""Inspection rules (API 1.96): the rules of a phase."""

from baremetal.common import exception
from baremetal.db import models
from baremetal.db import rows as db_rows

IR = models.TABLES['inspection_rules']
ROWS = db_rows.Rows(IR, exception.InspectionRuleNotFound, 'rule')


def in_phase(phase: str):
    """Condition: the rules of this phase (``main``, ...)."""
    return IR.c.phase == phase


def of_phase(phase: str) -> list[dict]:
    """The stored rules of this phase, in creation order."""
    return [dict(r) for r in db_rows.query(IR, (in_phase(phase),),
                                      sort_key='id')]
