"""Access control with real Keystone tokens, persona by persona.

baremetal-server runs with ``auth_strategy = keystone`` against the
Keystone fixture; tests/rbac_personas.py's request sequence is sent as
each persona (system admin/member/reader, projects A and B with
admin/manager/member/reader, the service user).  The expected answers
are real Ironic 39's under the same Keystone, recorded by
``tools/api-diff --personas --json-out`` into rbac_ironic39.json
(status, and what the answer shows: the nodes, ports and allocations a
list holds, which node fields are redacted).  Where we answer otherwise
on purpose, DELIBERATE says so (doc/source/api/differences.rst explains
each).
"""

import json
import os

import pytest

from tests import keystone_service
from tests import rbac_personas
from tests.functional.conftest import start_keystone_server

EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        'rbac_ironic39.json')
# (persona, step) -> our answer, where it differs from Ironic 39's:
# a project-scoped token on a system-only list is a 403 (Ironic: 500)
DELIBERATE: dict[tuple[str, str], list] = {
    (persona, step): [403, None]
    for persona in keystone_service.personas()
    if not persona.startswith('system-')
    for step in ('chassis', 'drivers')}


@pytest.fixture(scope='module')
def answers(tmp_path_factory, keystone):
    tmp = tmp_path_factory.mktemp('rbac')
    svc = start_keystone_server(tmp, keystone)
    try:
        ids = rbac_personas.setup(svc.endpoint, keystone)
        found = rbac_personas.run(svc.endpoint, keystone,
                                  keystone_service.personas(), ids)
        # without a token, and with one Keystone does not know
        for token in (None, 'not-a-token'):
            found[token] = rbac_personas.Client(
                svc.endpoint, token).request('GET', '/v1/nodes')[0]
        yield found
    finally:
        assert svc.stop() == 0, svc.log()


def _ironic() -> dict:
    with open(EXPECTED) as f:
        return json.load(f)


@pytest.mark.parametrize('persona', keystone_service.personas())
def test_persona_is_answered_as_ironic_39_answers_it(answers, persona):
    expected = _ironic()[persona]
    got = answers[persona]
    wrong = []
    for sid, _m, _p, _b in rbac_personas.STEPS:
        want = DELIBERATE.get((persona, sid), expected[sid])
        if got[sid] != want:
            wrong.append('%s: ours %s, expected %s' % (sid, got[sid], want))
    assert not wrong, '\n'.join(wrong)


def test_a_valid_token_is_required(answers):
    assert answers[None] == 401
    assert answers['not-a-token'] == 401
