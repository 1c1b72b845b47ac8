"""What inspection rule conditions mean: each op, inversion, loops and
how their results combine, format strings, masking."""

import pytest

from baremetal.common import exception
from baremetal.common import inspection_rules as rules

INVENTORY = {'cpu': {'count': 4, 'architecture': 'x86_64'},
             'bmc_address': '10.0.0.5', 'bmc_password': 'secret',
             'interfaces': [{'name': 'eth0', 'ipv4_address': '10.1.0.9'}]}
CTX = {'inventory': INVENTORY, 'plugin_data': {'auth_token': 't'},
       'node': None}


def _check(op, args, **extra):
    return rules.check_condition(dict(op=op, args=args, **extra), CTX)


@pytest.mark.parametrize('op,args,expected', [
    ('eq', {'values': [1, 1, 1]}, True),
    ('eq', {'values': [1, 2]}, False),
    ('eq', {'values': [1]}, True),
    ('eq', {'values': ['{inventory[cpu][count]}', '4']}, True),
    # a format string gives a string: no match with the number
    ('eq', {'values': ['{inventory[cpu][count]}', 4]}, False),
    ('eq', {'values': ['{inventory[cpu][count]}', 4],
            'force_strings': True}, True),
    ('lt', {'values': [1, 2, 3]}, True),
    ('lt', {'values': [1, 3, 2]}, False),
    ('gt', {'values': [3, 2]}, True),
    ('is-empty', {'value': ''}, True),
    ('is-empty', {'value': '{inventory[nothing]}'}, True),
    ('is-empty', {'value': []}, True),
    ('is-empty', {'value': '{inventory[cpu][count]}'}, False),
    ('in-net', {'address': '{inventory[bmc_address]}',
                'subnet': '10.0.0.0/24'}, True),
    ('in-net', {'address': '10.0.1.5', 'subnet': '10.0.0.0/24'}, False),
    ('matches', {'value': '{inventory[cpu][architecture]}',
                 'regex': 'x86'}, False),
    ('matches', {'value': 'x86_64', 'regex': 'x86.*'}, True),
    ('contains', {'value': 'x86_64', 'regex': '86'}, True),
    ('one-of', {'value': 'b', 'values': ['a', 'b']}, True),
    ('one-of', {'value': 'c', 'values': ['a', 'b']}, False),
    ('is-none', {'value': None}, True),
    ('is-none', {'value': 0}, False),
    ('is-true', {'value': 'Yes'}, True),
    ('is-true', {'value': 1}, True),
    ('is-true', {'value': 'on'}, False),
    ('is-false', {'value': 'false'}, True),
    ('is-false', {'value': None}, True),
    ('is-false', {'value': 0}, True),
    ('is-false', {'value': 'x'}, False),
])
def test_condition_ops(op, args, expected):
    assert _check(op, args) is expected
    assert _check('!' + op, args) is (not expected)
    assert _check(' ! ' + op + ' ', args) is (not expected)


def test_list_args_are_taken_in_signature_order():
    assert _check('eq', [[2, 2]]) is True
    assert _check('matches', ['x86_64', 'x86.*']) is True
    assert _check('one-of', ['a', ['a']]) is True


@pytest.mark.parametrize('op,args', [
    ('eq', {'values': 'not a list'}),
    ('lt', {'values': [1, 'a']}),
    ('in-net', {'address': 'nope', 'subnet': '10.0.0.0/8'}),
    ('in-net', {'address': '10.0.0.1', 'subnet': 'nope'}),
    ('matches', {'value': 'x', 'regex': '{inventory[cpu][count]}('}),
])
def test_conditions_that_cannot_be_evaluated_raise(op, args):
    with pytest.raises(rules.ConditionError):
        _check(op, args)


@pytest.mark.parametrize('multiple,items,expected', [
    ('any', [1, 2, 3], True), ('any', [1, 3], False),
    ('all', [2, 2], True), ('all', [2, 3], False),
    ('first', [1, 2], True), ('first', [1, 3], False),
    ('last', [2, 1], False), ('last', [1, 2], True),
])
def test_loops_combine_results(multiple, items, expected):
    # inside a loop numbers are compared as strings
    assert _check('eq', {'values': ['{item}', 2]}, loop=items,
                  multiple=multiple) is expected


def test_loop_default_is_any_and_an_object_loop_is_one_item():
    assert _check('eq', {'values': ['{item}', 2]}, loop=[5, 2]) is True
    assert _check('eq', {'values': ['{item[a]}', 'x']},
                  loop={'a': 'x'}) is True
    # an empty loop is no loop
    assert _check('eq', {'values': [1, 1]}, loop=[]) is True


def test_inversion_applies_to_each_item_of_a_loop():
    assert _check('!eq', {'values': ['{item}', 2]}, loop=[1, 3],
                  multiple='all') is True
    assert _check('!eq', {'values': ['{item}', 2]}, loop=[1, 2],
                  multiple='all') is False


def test_interpolation_refuses_private_attributes():
    class Node:
        uuid = 'u1'
    ctx = {'node': Node()}
    assert rules.interpolate('{node.uuid}', ctx) == 'u1'
    assert rules.interpolate('{node.__class__}', ctx) == '{node.__class__}'
    assert rules.interpolate({'{node.uuid}': ['{node.uuid}', 1]}, ctx) == \
        {'u1': ['u1', 1]}


def test_masked_hides_secret_keys_at_any_depth():
    out = rules.masked({'a': {'password': 'p', 'list': [
        {'auth_token': 't', 'x': 1}]}, 'bmc_password': 'b'})
    assert out == {'a': {'password': '***', 'list': [
        {'auth_token': '***', 'x': 1}]}, 'bmc_password': '***'}


def test_validate_rule_fills_defaults():
    out = rules.validate_rule({'actions': [{'op': 'fail',
                                            'args': {'msg': 'x'}}]})
    assert out == {'uuid': None, 'description': None, 'priority': 0,
                   'sensitive': False, 'phase': 'main', 'conditions': [],
                   'actions': [{'op': 'fail', 'args': {'msg': 'x'}}]}


def test_built_in_rules_may_have_any_priority():
    body = {'actions': [{'op': 'fail', 'args': {'msg': 'x'}}],
            'priority': -5}
    with pytest.raises(exception.InvalidParameterValue):
        rules.validate_rule(body)
    assert rules.validate_rule(body, built_in=True)['priority'] == -5
    body['priority'] = 20000
    assert rules.validate_rule(body, built_in=True)['priority'] == 20000


def test_plugin_data_actions_accept_the_argument_ironic_stores():
    rules.validate_rule({'actions': [{'op': 'set-plugin-data', 'args': {
        'path': 'a', 'value': 1, 'plugin_data': {}}}]})


def test_split_path():
    assert rules.split_path('/properties/a') == ['properties', 'a']
    assert rules.split_path('properties.a') == ['properties', 'a']
    with pytest.raises(ValueError):
        rules.split_path('/')
