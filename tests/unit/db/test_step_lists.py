"""db/step_lists.py: the steps of named lists (here deploy templates'),
read, replaced and deleted, against a real (SQLite) database."""

from baremetal.db import api as db
from baremetal.db import step_lists

DT = db.T['deploy_templates']
DTS = db.T['deploy_template_steps']
FK = 'deploy_template_id'


def _step(name, priority):
    return {'interface': 'deploy', 'step': name, 'args': {},
            'priority': priority}


def test_replace_read_and_delete(api):
    a = db.create(DT, {'name': 'CUSTOM_A'})
    b = db.create(DT, {'name': 'CUSTOM_B'})
    step_lists.replace(DTS, FK, a['id'], [_step('x', 10), _step('y', 20)])
    step_lists.replace(DTS, FK, b['id'], [_step('z', 30)])
    step_lists.replace(DTS, FK, a['id'], [_step('w', 40)])   # replaces

    rows = step_lists.steps_of(DTS, FK, [a['id'], b['id']])
    assert sorted((r[FK], r['step'], r['priority']) for r in rows) == [
        (a['id'], 'w', 40), (b['id'], 'z', 30)]
    assert all(r['created_at'] is not None for r in rows)
    assert step_lists.steps_of(DTS, FK, [999]) == []

    step_lists.delete(DTS, DT, FK, a['id'])
    assert [r['name'] for r in db.query(DT)] == ['CUSTOM_B']
    assert [r['step'] for r in db.query(DTS)] == ['z']
