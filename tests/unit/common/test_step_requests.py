"""common/step_requests.py: the shape of user-given steps, as the API
and the conductor both check it."""

import pytest

from baremetal.common import exception
from baremetal.common import step_requests
from baremetal.drivers import base


def test_every_interface_type_has_its_place():
    assert base.INTERFACE_ORDER is step_requests.INTERFACE_ORDER
    assert set(step_requests.INTERFACE_ORDER) == set(base.INTERFACE_CLASSES)


def test_well_formed_steps_come_back_plain():
    got = step_requests.check_request_shape(
        [{'interface': 'bios', 'step': 'apply', 'priority': 5},
         {'interface': 'raid', 'step': 'create', 'args': {'a': 1}}],
        'deploy')
    assert got == [{'interface': 'bios', 'step': 'apply', 'args': {},
                    'priority': 5},
                   {'interface': 'raid', 'step': 'create',
                    'args': {'a': 1}}]
    assert step_requests.check_request_shape(
        [{'interface': 'bios', 'step': 'apply', 'order': 0}], 'service',
        ordered=True) == [{'interface': 'bios', 'step': 'apply',
                           'args': {}, 'order': 0}]
    # no deploy steps asked for is no deploy steps
    assert step_requests.check_request_shape([], 'deploy') == []


@pytest.mark.parametrize('kind, steps, shape, message', [
    ('clean', [], {}, 'clean_steps must be a non-empty list of objects '
                      'with "interface" and "step"'),
    ('deploy', 'x', {}, 'deploy_steps must be a non-empty list of objects '
                        'with "interface" and "step"'),
    ('clean', ['x'], {}, "clean_steps[0] must be an object, got 'x'"),
    ('clean', [{'interface': 'bios', 'step': 's', 'priority': 1}], {},
     'clean_steps[0] has unknown keys: priority'),
    ('clean', [{'interface': 'disk', 'step': 's'}], {},
     'clean_steps[0]: "interface" must be one of %s, got \'disk\''
     % ', '.join(step_requests.INTERFACE_ORDER)),
    ('clean', [{'interface': 'bios', 'step': ''}], {},
     'clean_steps[0]: "step" must be a non-empty string'),
    ('clean', [{'interface': 'bios', 'step': 's', 'args': []}], {},
     'clean_steps[0]: "args" must be an object'),
    ('deploy', [{'interface': 'bios', 'step': 's'}],
     {'require_priority': True},
     'deploy_steps[0]: "priority" must be an integer >= 0'),
    ('deploy', [{'interface': 'bios', 'step': 's', 'priority': True}], {},
     'deploy_steps[0]: "priority" must be an integer >= 0'),
    ('service', [{'interface': 'bios', 'step': 's', 'order': -1}],
     {'ordered': True}, 'service_steps[0]: "order" must be an integer >= 0'),
])
def test_a_bad_shape_says_what_is_wrong(kind, steps, shape, message):
    with pytest.raises(exception.InvalidParameterValue) as e:
        step_requests.check_request_shape(steps, kind, **shape)
    assert message in str(e.value)
