"""Runbook create refused as Ironic 39 refuses it (status and message
recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

STEP = {'interface': 'bios', 'step': 'x', 'args': {}, 'order': 1}

CASES = [
    ({'name': 'bad', 'steps': [STEP]},
     "Schema error for runbook: 'bad' is not valid under any of the given "
     "schemas. Possible root cause: 'bad' does not match "
     "'^CUSTOM_[A-Z0-9_]+$'"),
    ({'name': 'CUSTOM_X'},
     "Schema error for runbook: 'steps' is a required property"),
    ({'name': 'CUSTOM_X', 'steps': [STEP], 'nope': 1},
     "Schema error for runbook: Additional properties are not allowed "
     "('nope' was unexpected)"),
    ({'name': 'CUSTOM_X', 'steps': [{'interface': 'bios', 'step': 'x',
                                     'args': {}, 'priority': 1}]},
     "Schema error for runbook: 'order' is a required property"),
    ({'name': 'CUSTOM_X', 'steps': [dict(STEP, order='a')]},
     "Schema error for runbook: 'a' does not match '^[0-9]+$'"),
]


@pytest.mark.parametrize('body,message', CASES)
def test_runbook_create_refused_as_ironic(api, body, message):
    status, out, _ = api.request('POST', '/v1/runbooks', body,
                                 version='1.92')
    assert (status, harness.error_message(out)) == (400, message)
    assert api.request('GET', '/v1/runbooks', version='1.92')[1][
        'runbooks'] == []
