"""db/inspection_rules.py: the stored rules of a phase, against a real
(SQLite) database."""

from baremetal.db import inspection_rules as db_rules
from baremetal.db import models
from baremetal.db import rows as db_rows

IR = models.TABLES['inspection_rules']


def _rule(phase, description):
    return db_rows.create(IR, {'phase': phase, 'description': description,
                               'priority': 0, 'conditions': [],
                               'actions': []})


def test_rules_of_a_phase_in_creation_order(api):
    _rule('main', 'first')
    _rule('other', 'elsewhere')
    _rule('main', 'second')
    assert [r['description'] for r in db_rules.of_phase('main')] == [
        'first', 'second']
    assert db_rules.of_phase('none') == []
    assert [r['description'] for r in db_rows.query(
        IR, (db_rules.in_phase('other'),))] == ['elsewhere']
