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


def test_lists_replaced_at_once_on_mariadb_all_keep_their_steps(tmp_path):
    """Replacing a list's steps (and a runbook's traits) deletes the
    old ones first: on MariaDB two such replaces at once can deadlock
    on the gap their DELETEs lock, and the victim runs again."""
    from tests import harness
    from tests import services
    from tests.unit.db import at_once
    h = harness.Harness(tmp_path, db_url=services.db_url('mysql',
                                                         schema=True))
    try:
        ids = [db_deploy_templates.ROWS.create(
            {'name': 'CUSTOM_%d' % i})['id'] for i in range(160)]
        assert at_once.run(lambda i: STEPS.replace(
            i, [_step('s%d' % i, 10)]), ids) == []
        assert {r[FK]: r['step'] for r in STEPS.steps_of(ids)} == {
            i: 's%d' % i for i in ids}
        books = [db_runbooks.ROWS.create(
            {'name': 'CUSTOM_R%d' % i})['id'] for i in range(160)]
        assert at_once.run(lambda i: db_runbooks.set_traits(
            i, ['CUSTOM_T%d' % i]), books) == []
        assert db_runbooks.traits_of(books) == {
            i: ['CUSTOM_T%d' % i] for i in books}
    finally:
        h.close()
