"""Chassis create and PATCH refused as Ironic 39 refuses them (status
and message recorded from tools/api-diff against Ironic)."""

import pytest

from tests import harness

V = '1.95'
LONG = 'x' * 256

CREATE_CASES = [
    ({'nope': 1}, "Schema error for chassis: Additional properties are "
                  "not allowed ('nope' was unexpected)"),
    ({'description': LONG},
     "Schema error for chassis: '%s' is too long" % LONG),
    ({'extra': 's'},
     "Schema error for chassis: 's' is not of type 'object', 'null'"),
    ({'uuid': 'x'}, 'Expected UUID for uuid: x'),
]


@pytest.mark.parametrize('body,message', CREATE_CASES)
def test_chassis_create_refused_as_ironic(api, body, message):
    status, out, _ = api.request('POST', '/v1/chassis', body, version=V)
    assert (status, harness.error_message(out)) == (400, message)


PATCH_CASES = [
    ('add', '/nope', 1, 'Cannot patch /nope. Only the following can be '
                        'updated: uuid, extra, description'),
    ('replace', '/description', LONG,
     "Schema error for patch: '%s' is too long" % LONG),
    ('replace', '/extra', 's',
     "Schema error for patch: 's' is not of type 'object', 'null'"),
]


@pytest.mark.parametrize('op,path,value,message', PATCH_CASES)
def test_chassis_patch_refused_as_ironic(api, op, path, value, message):
    status, ch, _ = api.request('POST', '/v1/chassis',
                                {'description': 'rack'}, version=V)
    assert status == 201
    status, out, _ = api.request(
        'PATCH', '/v1/chassis/%s' % ch['uuid'],
        [{'op': op, 'path': path, 'value': value}], version=V)
    assert (status, harness.error_message(out)) == (400, message)
    status, now, _ = api.request('GET', '/v1/chassis/%s' % ch['uuid'],
                                 version=V)
    assert now['description'] == 'rack' and now['extra'] == {}
