"""Deploy template create and PATCH refused as Ironic 39 refuses them
(status and message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'
STEP = {'interface': 'bios', 'step': 'apply_configuration', 'args': {},
        'priority': 10}
BAD_NAME = ("'bad' is not valid under any of the given schemas. Possible "
            "root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'")

CREATE_CASES = [
    ({'name': 'bad', 'steps': [STEP]},
     'Schema error for template: ' + BAD_NAME),
    ({'name': 'CUSTOM_X'},
     "Schema error for template: 'steps' is a required property"),
    ({'name': 'CUSTOM_X', 'steps': []},
     'Schema error for template: [] should be non-empty'),
    ({'name': 'CUSTOM_X', 'steps': [STEP], 'nope': 1},
     "Schema error for template: Additional properties are not allowed "
     "('nope' was unexpected)"),
    ({'name': 'CUSTOM_X', 'steps': [dict(STEP, interface='nope')]},
     "Schema error for template: 'nope' is not one of ['vendor', 'power', "
     "'management', 'firmware', 'deploy', 'bios', 'raid']"),
    ({'name': 'CUSTOM_X', 'steps': [dict(STEP, priority='x')]},
     "Schema error for template: 'x' does not match '^[0-9]+$'"),
    ({'name': 'CUSTOM_X', 'steps': [dict(STEP, nope=1)]},
     "Schema error for template: Additional properties are not allowed "
     "('nope' was unexpected)"),
    ({'name': 'CUSTOM_X', 'steps': [{'interface': 'bios', 'step': 'x',
                                     'priority': 1}]},
     "Schema error for template: 'args' is a required property"),
    ({'name': 'CUSTOM_' + 'X' * 250, 'steps': [STEP]},
     "Schema error for template: '%s' is too long" % ('CUSTOM_' + 'X' * 250)),
    ({'name': 'CUSTOM_X', 'steps': [STEP], 'uuid': 'x'},
     'Expected UUID for uuid: x'),
]


@pytest.mark.parametrize('body,message', CREATE_CASES)
def test_deploy_template_create_refused_as_ironic(api, body, message):
    status, out, _ = api.request('POST', '/v1/deploy_templates', body,
                                 version=V)
    assert (status, harness.error_message(out)) == (400, message)


PATCH_CASES = [
    ('replace', '/name', 'bad', 'Schema error for patch: ' + BAD_NAME),
    ('add', '/nope', 1, 'Cannot patch /nope. Only the following can be '
                        'updated: extra, name, steps, description'),
    ('replace', '/steps', [], 'Schema error for patch: [] should be '
                              'non-empty'),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_deploy_template_patch_refused_as_ironic(api, op, path, value,
                                                 message):
    status, dt, _ = api.request(
        'POST', '/v1/deploy_templates',
        {'name': 'CUSTOM_DT', 'steps': [STEP]}, version=V)
    assert status == 201, dt
    status, out, _ = api.request(
        'PATCH', '/v1/deploy_templates/%s' % dt['uuid'],
        [{'op': op, 'path': path, 'value': value}], version=V)
    assert (status, harness.error_message(out)) == (400, message)
    status, now, _ = api.request(
        'GET', '/v1/deploy_templates/%s' % dt['uuid'], version=V)
    assert now['name'] == 'CUSTOM_DT' and len(now['steps']) == 1
