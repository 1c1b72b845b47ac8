"""A node's traits refused as Ironic 39 refuses them (status and message
recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'
LONG = 'CUSTOM_' + 'X' * 250

CASES = [
    ({'traits': ['bad trait']},
     "Schema error for body: 'bad trait' is not valid under any of the "
     "given schemas. Possible root cause: 'bad trait' does not match "
     "'^CUSTOM_[A-Z0-9_]+$'"),
    ({'traits': [LONG]}, "Schema error for body: '%s' is too long" % LONG),
    ({'traits': [], 'nope': 1}, "Schema error for body: Additional "
     "properties are not allowed ('nope' was unexpected)"),
]


@pytest.mark.parametrize('body,message', CASES)
def test_node_traits_refused_as_ironic(api, body, message):
    node = api.create_node()
    status, out, _ = api.request('PUT', '/v1/nodes/%s/traits'
                                 % node['uuid'], body, version=V)
    assert (status, harness.error_message(out)) == (400, message)


def test_node_trait_refused_as_ironic(api):
    node = api.create_node()
    status, out, _ = api.request('PUT', '/v1/nodes/%s/traits/lower_case'
                                 % node['uuid'], version=V)
    assert (status, harness.error_message(out)) == (
        400, "Schema error for trait: 'lower_case' is not valid under any "
             "of the given schemas. Possible root cause: 'lower_case' does "
             "not match '^CUSTOM_[A-Z0-9_]+$'")
    status, out, _ = api.request('PUT', '/v1/nodes/%s/traits/HW_CPU_X86_AVX2'
                                 % node['uuid'], version=V)
    assert status == 204, out
