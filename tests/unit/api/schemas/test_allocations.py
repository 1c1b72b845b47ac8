"""Allocation create and PATCH refused as Ironic 39 refuses them
(status and message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'

CREATE_CASES = [
    ({'resource_class': 'rc', 'name': 'bad name!'},
     "Cannot create allocation with invalid name 'bad name!'"),
    ({}, 'The resource_class field is mandatory when not backfilling'),
    ({'resource_class': 'x' * 81},
     "Schema error: '%s' is too long" % ('x' * 81)),
    ({'resource_class': 'rc', 'nope': 1}, "Schema error: Additional "
     "properties are not allowed ('nope' was unexpected)"),
    ({'resource_class': 'rc', 'traits': ['bad trait']},
     "Schema error: 'bad trait' is not valid under any of the given "
     "schemas. Possible root cause: 'bad trait' does not match "
     "'^CUSTOM_[A-Z0-9_]+$'"),
    ({'resource_class': 'rc', 'traits': 'CUSTOM_A'},
     "Schema error: 'CUSTOM_A' is not of type 'array', 'null'"),
    ({'resource_class': 'rc', 'candidate_nodes': ['nope nope']},
     "Schema error: 'nope nope' is not valid under any of the given "
     "schemas. Possible root cause: 'nope nope' is not a 'uuid'"),
    ({'resource_class': 'rc', 'extra': 's'},
     "Schema error: 's' is not of type 'object', 'null'"),
]


@pytest.mark.parametrize('body,message', CREATE_CASES)
def test_allocation_create_refused_as_ironic(api, body, message):
    status, out, _ = api.request('POST', '/v1/allocations', body,
                                 version=V)
    assert (status, harness.error_message(out)) == (400, message)


def test_allocation_create_with_standard_trait_passes_the_schema(api):
    status, out, _ = api.request(
        'POST', '/v1/allocations',
        {'resource_class': 'rc', 'traits': ['HW_CPU_X86_AVX2']}, version=V)
    assert status == 201, out
    assert out['traits'] == ['HW_CPU_X86_AVX2']


PATCH_CASES = [
    ('add', '/nope', 1,
     'Cannot patch /nope. Only the following can be updated: name, extra'),
    ('replace', '/resource_class', 'x', 'Cannot patch /resource_class. '
     'Only the following can be updated: name, extra'),
    ('replace', '/name', 'bad name!',
     "Cannot update allocation with invalid name 'bad name!'"),
    ('replace', '/extra', 's',
     "Schema error for patch: 's' is not of type 'object', 'null'"),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_allocation_patch_refused_as_ironic(api, op, path, value,
                                            message):
    status, al, _ = api.request(
        'POST', '/v1/allocations', {'resource_class': 'rc', 'name': 'al'},
        version=V)
    assert status == 201
    status, out, _ = api.request(
        'PATCH', '/v1/allocations/%s' % al['uuid'],
        [{'op': op, 'path': path, 'value': value}], version=V)
    assert (status, harness.error_message(out)) == (400, message)
