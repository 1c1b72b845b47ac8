"""db/step_lists.py: the steps of named lists (here deploy templates'
and runbooks'), read, replaced and deleted, against a real (SQLite)
database."""

from baremetal.db import deploy_templates as db_deploy_templates
from baremetal.db import runbooks as db_runbooks

STEPS = db_deploy_templates.STEPS
FK = 'deploy_template_id'


def _step(name, priority):
    return {'interface': 'deploy', 'step': name, 'args': {},
            'priority': priority}


def test_replace_read_and_delete(api):
    a = db_deploy_templates.ROWS.create({'name': 'CUSTOM_A'})
    b = db_deploy_templates.ROWS.create({'name': 'CUSTOM_B'})
    STEPS.replace(a['id'], [_step('x', 10), _step('y', 20)])
    STEPS.replace(b['id'], [_step('z', 30)])
    STEPS.replace(a['id'], [_step('w', 40)])   # replaces

    rows = STEPS.steps_of([a['id'], b['id']])
    assert sorted((r[FK], r['step'], r['priority']) for r in rows) == [
        (a['id'], 'w', 40), (b['id'], 'z', 30)]
    assert all(r['created_at'] is not None for r in rows)
    assert STEPS.steps_of([999]) == []

    STEPS.delete(a['id'])
    assert [r['name'] for r in db_deploy_templates.ROWS.list_page()] == [
        'CUSTOM_B']
    assert [r['step'] for r in STEPS.steps_of([a['id'], b['id']])] == ['z']


def test_runbooks_steps_are_their_own(api):
    rb = db_runbooks.ROWS.create({'name': 'CUSTOM_A'})
    dt = db_deploy_templates.ROWS.create({'name': 'CUSTOM_A'})
    db_runbooks.STEPS.replace(rb['id'], [
        {'interface': 'bios', 'step': 'apply', 'args': {}, 'order': 1}])
    assert [r['step'] for r in db_runbooks.STEPS.steps_of([rb['id']])] == [
        'apply']
    assert STEPS.steps_of([dt['id']]) == []
    assert db_runbooks.STEPS.lists is db_runbooks.ROWS
    db_runbooks.STEPS.delete(rb['id'])
    assert db_runbooks.ROWS.list_page() == []
    assert db_deploy_templates.ROWS.list_page()[0]['id'] == dt['id']
