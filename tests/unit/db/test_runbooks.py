"""db/runbooks.py: which runbooks a project sees and runbook traits,
against a real (SQLite) database."""

from baremetal.db import models
from baremetal.db import rows as db_rows
from baremetal.db import runbooks as db_runbooks

RB = models.TABLES['runbooks']


def _runbook(name, **fields):
    return db_rows.create(RB, dict({'name': name, 'public': False}, **fields))


def test_visible_to_a_project_its_own_and_public_ones(api):
    _runbook('CUSTOM_MINE', owner='p1')
    _runbook('CUSTOM_THEIRS', owner='p2')
    _runbook('CUSTOM_PUBLIC', public=True)
    _runbook('CUSTOM_NOBODYS')
    names = sorted(r['name'] for r in db_rows.query(
        RB, (db_runbooks.visible_to('p1'),)))
    assert names == ['CUSTOM_MINE', 'CUSTOM_PUBLIC']


def test_traits_set_add_and_delete(api):
    a, b = _runbook('CUSTOM_A'), _runbook('CUSTOM_B')
    assert db_runbooks.traits_of([a['id'], b['id']]) == {}
    assert db_runbooks.traits_of([]) == {}

    db_runbooks.set_traits(a['id'], ['CUSTOM_Z', 'CUSTOM_Y', 'CUSTOM_Z'])
    db_runbooks.add_trait(b['id'], 'CUSTOM_X')
    db_runbooks.add_trait(b['id'], 'CUSTOM_X')     # once only
    assert db_runbooks.traits_of([a['id'], b['id']]) == {
        a['id']: ['CUSTOM_Y', 'CUSTOM_Z'], b['id']: ['CUSTOM_X']}

    db_runbooks.set_traits(a['id'], ['CUSTOM_W'])
    assert db_runbooks.traits_of([a['id']]) == {a['id']: ['CUSTOM_W']}
    db_runbooks.delete_trait(b['id'], 'CUSTOM_NONE')
    db_runbooks.delete_trait(b['id'], 'CUSTOM_X')
    assert db_runbooks.traits_of([b['id']]) == {}

    db_runbooks.add_trait(b['id'], 'CUSTOM_V')
    db_runbooks.delete_traits(a['id'])
    db_runbooks.set_traits(b['id'], [])
    assert db_runbooks.traits_of([a['id'], b['id']]) == {}
