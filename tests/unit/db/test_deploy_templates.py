"""db/deploy_templates.py: the steps of the templates a deployment's
traits name, against a real (SQLite) database."""

from baremetal.db import deploy_templates


def test_steps_for_the_named_templates_only(api):
    for name, step in (('CUSTOM_RAID', 'apply_configuration'),
                       ('CUSTOM_BIOS', 'apply_bios'),
                       ('CUSTOM_OTHER', 'other')):
        row = deploy_templates.ROWS.create({'name': name})
        deploy_templates.STEPS.replace(row['id'], [
            {'interface': 'raid', 'step': step, 'args': {'a': 1},
             'priority': 50}])
    rows = deploy_templates.steps_for(['CUSTOM_RAID', 'CUSTOM_BIOS',
                                       'CUSTOM_MISSING'])
    assert sorted((r['step'], r['priority'], r['args']) for r in rows) == [
        ('apply_bios', 50, {'a': 1}), ('apply_configuration', 50, {'a': 1})]
    assert deploy_templates.steps_for(['CUSTOM_MISSING']) == []
