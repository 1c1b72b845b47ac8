"""Inspection rules (API 1.96): what a rule may say and what its
conditions mean.

A rule is ``{uuid, description, priority, sensitive, phase, conditions,
actions}``.  Each condition and action is ``{op, args[, loop]}``
(a condition also ``multiple``); ``args`` is an object of named
arguments or, deprecated, a list of them in signature order.  A
condition's op may be inverted with one leading ``!``.  String
arguments are Python format strings over ``node``, ``inventory``,
``plugin_data`` (and ``item`` inside a loop), so
``"{inventory[cpu][count]}"`` reads the inventory.

This module holds the catalogue of ops and their signatures, the
validation the API and the built-in rules file share, and the
conditions themselves (they only read).  The conductor's
``inspection_rules`` module runs the rules and their actions.
"""

import _string
import dataclasses
import ipaddress
import re
import string
from collections.abc import Callable
from typing import Any

from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)

PHASES = ('main',)
MULTIPLE = ('any', 'all', 'first', 'last')
MAX_USER_PRIORITY = 9999
DESCRIPTION_MAX = 255
LOG_LEVELS = ('debug', 'info', 'warning', 'error', 'critical')
# keys whose values rules see as '***' ([inspection_rules]mask_secrets)
SECRET_KEYS = frozenset(('password', 'auth_token', 'bmc_password'))
MASK = '***'

_FIELDS = ('uuid', 'description', 'priority', 'sensitive', 'phase',
           'conditions', 'actions')
_TRUE = ('true', '1', 'yes', 'on', 't', 'y')
_FALSE = ('false', '0', 'no', 'off', 'f', 'n')


@dataclasses.dataclass(frozen=True)
class Signature:
    """The arguments of an op: required names, optional names with
    defaults, and which ones are format strings outside a loop (inside
    one, every argument is)."""
    required: tuple[str, ...]
    optional: tuple[tuple[str, Any], ...] = ()
    formatted: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return self.required + tuple(n for n, _ in self.optional)


# ------------------------------------------------------------ conditions
class ConditionError(Exception):
    """A condition could not be evaluated (bad value, bad regex)."""


def _compare(op: Callable[[Any, Any], bool]):
    def check(values, force_strings=False) -> bool:
        if not isinstance(values, list):
            raise ConditionError(
                "Expected a list for 'values', got %s"
                % type(values).__name__)
        if force_strings:
            values = [str(v) for v in values]
        try:
            return all(op(a, b) for a, b in zip(values, values[1:],
                                                 strict=False))
        except TypeError as e:
            raise ConditionError('cannot compare %r: %s' % (values, e)) \
                from None
    return check


def _is_empty(value) -> bool:
    return str(value) in ('', 'None', '[]', '{}')


def _in_net(address, subnet) -> bool:
    try:
        network = ipaddress.ip_network(str(subnet), strict=False)
    except ValueError as e:
        raise ConditionError('invalid value: %s' % e) from None
    try:
        return ipaddress.ip_address(str(address)) in network
    except ValueError as e:
        raise ConditionError('invalid value: %s' % e) from None


def _regex(regex) -> re.Pattern:
    try:
        return re.compile(str(regex))
    except re.error as e:
        raise ConditionError('invalid regular expression: %s' % e) \
            from None


def _matches(value, regex) -> bool:
    regex = str(regex)
    if not regex.endswith('$'):
        regex += '$'
    return _regex(regex).match(str(value)) is not None


def _contains(value, regex) -> bool:
    return _regex(regex).search(str(value)) is not None


def _is_true(value) -> bool:
    if isinstance(value, (bool, int, float)):
        return bool(value)
    if isinstance(value, str):
        return value.lower() in ('yes', 'true')
    return False


def _is_false(value) -> bool:
    if isinstance(value, (bool, int, float)):
        return not value
    if isinstance(value, str):
        return value.lower() in ('no', 'false')
    return value is None


def _one_of(value, values=()) -> bool:
    try:
        return value in values
    except TypeError as e:
        raise ConditionError(str(e)) from None


_VALUES = Signature(('values',), (('force_strings', False),), ('values',))
_VALUE = Signature(('value',), (), ('value',))
_REGEX = Signature(('value', 'regex'), (), ('value',))

# op -> (signature, check(**args) -> bool)
CONDITIONS: dict[str, tuple[Signature, Callable[..., bool]]] = {
    'eq': (_VALUES, _compare(lambda a, b: a == b)),
    'lt': (_VALUES, _compare(lambda a, b: a < b)),
    'gt': (_VALUES, _compare(lambda a, b: a > b)),
    'is-empty': (_VALUE, _is_empty),
    'in-net': (Signature(('address', 'subnet'), (),
                         ('address', 'subnet')), _in_net),
    'matches': (_REGEX, _matches),
    'contains': (_REGEX, _contains),
    'one-of': (Signature(('value',), (('values', []),), ('value',)),
               _one_of),
    'is-none': (_VALUE, lambda value: value is None),
    'is-true': (_VALUE, _is_true),
    'is-false': (_VALUE, _is_false),
}

# --------------------------------------------------------------- actions
_PLUGIN_DATA = ('plugin_data', None)   # accepted and ignored, see below
ACTIONS: dict[str, Signature] = {
    'fail': Signature(('msg',)),
    'log': Signature(('msg',), (('level', 'info'),), ('msg',)),
    'set-attribute': Signature(('path', 'value'), (), ('value',)),
    'extend-attribute': Signature(('path', 'value'), (('unique', False),),
                                  ('value',)),
    'del-attribute': Signature(('path',)),
    'set-capability': Signature(('name', 'value'), (), ('value',)),
    'unset-capability': Signature(('name',)),
    'add-trait': Signature(('name',)),
    'remove-trait': Signature(('name',)),
    # Ironic's API stores an empty "plugin_data" argument with these;
    # rules read back from it keep working here (the real plugin data
    # is what they act on)
    'set-plugin-data': Signature(('path', 'value'), (_PLUGIN_DATA,),
                                 ('value',)),
    'extend-plugin-data': Signature(('path', 'value'),
                                    (('unique', False), _PLUGIN_DATA),
                                    ('value',)),
    'unset-plugin-data': Signature(('path',), (_PLUGIN_DATA,)),
    'set-port-attribute': Signature(('port_id', 'path', 'value'), (),
                                    ('value',)),
    'extend-port-attribute': Signature(('port_id', 'path', 'value'),
                                       (('unique', False),), ('value',)),
    'del-port-attribute': Signature(('port_id', 'path')),
    'api-call': Signature(('url',), (('headers', None), ('proxies', None),
                                     ('timeout', 5), ('retries', 3),
                                     ('backoff_factor', 0.3)), ('url',)),
}


def parse_op(op: Any) -> tuple[str, bool]:
    """A condition op and whether it is inverted (``!eq``)."""
    if not isinstance(op, str):
        raise ValueError('op must be a string, got %r' % (op,))
    op = op.strip()
    if op.count('!') > 1:
        raise ValueError(
            'Multiple exclamation marks are not allowed in %r: one "!" '
            'before an operator inverts it, e.g. !eq' % op)
    inverted = op.startswith('!')
    return op.lstrip('!').strip(), inverted


def named_args(sig: Signature, args: Any) -> dict:
    """``args`` as a dict of names; a list is taken in signature order
    (the deprecated form)."""
    if isinstance(args, dict):
        return dict(args)
    if not isinstance(args, list):
        raise ValueError('args must be either a list or dictionary')
    names = sig.names()
    if len(args) < len(sig.required):
        raise ValueError('missing required argument(s): %s'
                         % ', '.join(sig.required[len(args):]))
    if len(args) > len(names):
        raise ValueError('too many arguments: %d given, at most %d (%s)'
                         % (len(args), len(names), ', '.join(names)))
    return dict(zip(names, args, strict=False))


def _check_args(sig: Signature, args: Any) -> dict:
    named = named_args(sig, args)
    missing = [n for n in sig.required if n not in named]
    unexpected = sorted(set(named) - set(sig.names()))
    problems = []
    if missing:
        problems.append('missing required argument(s): %s'
                        % ', '.join(missing))
    if unexpected:
        problems.append('unexpected argument(s): %s'
                        % ', '.join(unexpected))
    if problems:
        raise ValueError('; '.join(problems))
    return named


def _check_literals(op: str, named: dict, looped: bool) -> None:
    """Arguments that are no format string can be checked now rather
    than when a node is inspected."""
    if looped:
        return
    if op in ('matches', 'contains') and isinstance(named['regex'], str):
        try:
            re.compile(named['regex'])
        except re.error as e:
            raise ValueError('invalid regular expression: %s' % e) \
                from None
    if op == 'log' and str(named.get('level', 'info')).lower() \
            not in LOG_LEVELS:
        raise ValueError('Invalid log level: %s. Choose from %s'
                         % (named['level'], ', '.join(LOG_LEVELS)))


# ------------------------------------------------------------ validation
def _invalid(msg: str) -> exception.InvalidParameterValue:
    return exception.InvalidParameterValue(err=msg)


def _check_item(kind: str, item: Any, index: int) -> None:
    where = '%s[%d]' % (kind, index)
    if not isinstance(item, dict):
        raise _invalid('%s must be an object, got %r' % (where, item))
    for key in ('op', 'args'):
        if key not in item:
            raise _invalid("%s: '%s' is a required property"
                           % (where, key))
    if not isinstance(item['args'], (list, dict)):
        raise _invalid('%s: args must be a list or an object, got %r'
                       % (where, item['args']))
    if 'loop' in item and not isinstance(item['loop'], (list, dict)):
        raise _invalid('%s: loop must be a list or an object, got %r'
                       % (where, item['loop']))
    if kind == 'conditions' and 'multiple' in item and \
            item['multiple'] not in MULTIPLE:
        raise _invalid('%s: multiple must be one of %s, got %r'
                       % (where, ', '.join(MULTIPLE), item['multiple']))


def _list_of(rule: dict, kind: str, minimum: int) -> list:
    items = rule.get(kind)
    if not isinstance(items, list):
        raise _invalid('%s must be a list, got %r' % (kind, items))
    if len(items) < minimum:
        raise _invalid('%s must hold at least %d item' % (kind, minimum))
    for i, item in enumerate(items):
        _check_item(kind, item, i)
    return items


def _op_errors(conditions: list, actions: list) -> list[str]:
    errors = []
    for cond in conditions:
        try:
            op, _ = parse_op(cond['op'])
        except ValueError as e:
            errors.append(str(e))
            continue
        if op not in CONDITIONS:
            errors.append('Unsupported condition operator: %s. Supported '
                          'operators are: %s (each may be inverted with '
                          'a leading "!")' % (op, ', '.join(CONDITIONS)))
            continue
        try:
            named = _check_args(CONDITIONS[op][0], cond['args'])
            _check_literals(op, named, bool(cond.get('loop')))
        except ValueError as e:
            errors.append('Invalid parameters for condition operator '
                          '%s: %s' % (op, e))
    for action in actions:
        op = action['op']
        if not isinstance(op, str) or op not in ACTIONS:
            errors.append('Unsupported action operator: %s. Supported '
                          'actions are: %s' % (op, ', '.join(ACTIONS)))
            continue
        try:
            named = _check_args(ACTIONS[op], action['args'])
            _check_literals(op, named, bool(action.get('loop')))
        except ValueError as e:
            errors.append('Invalid parameters for action operator %s: %s'
                          % (op, e))
    return errors


def _priority(value: Any, built_in: bool) -> int:
    if isinstance(value, str) and re.fullmatch(r'\s*-?\d+\s*', value):
        # the CLI's `inspection rule create --priority` sends a string
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid('priority must be an integer, got %r' % (value,))
    if not built_in and not 0 <= value <= MAX_USER_PRIORITY:
        raise _invalid('Priority must be between 0 and %d for '
                       'user-defined rules.' % MAX_USER_PRIORITY)
    return value


def to_bool(name: str, value: Any) -> bool:
    """A boolean field; null is false, and the strings the CLI sends
    (``--sensitive true``) are read as booleans."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise _invalid('%s must be a boolean, got %r' % (name, value))


def validate_rule(rule: Any, built_in: bool = False) -> dict:
    """Check a rule as a client or the built-in rules file gives it;
    return it complete (defaults filled in).  A built-in rule may have
    any integer priority.  Raises InvalidParameterValue (a 400)."""
    if not isinstance(rule, dict):
        raise _invalid('An inspection rule must be an object')
    unknown = sorted(set(rule) - set(_FIELDS))
    if unknown:
        raise _invalid('Unknown attribute(s) for inspection rule: %s'
                       % ', '.join(unknown))
    if 'actions' not in rule:
        raise _invalid("'actions' is a required property")
    actions = _list_of(rule, 'actions', 1)
    conditions = _list_of(rule, 'conditions', 0) \
        if 'conditions' in rule else []
    description = rule.get('description')
    if description is not None and (
            not isinstance(description, str) or
            len(description) > DESCRIPTION_MAX):
        raise _invalid('description must be a string of at most %d '
                       'characters' % DESCRIPTION_MAX)
    uuid = rule.get('uuid')
    if uuid is not None and not _is_uuid(uuid):
        raise exception.InvalidUUID(uuid=uuid)
    out = {'uuid': uuid, 'description': description,
           'priority': _priority(rule.get('priority', 0), built_in),
           'sensitive': to_bool('sensitive', rule.get('sensitive')),
           'phase': rule.get('phase', PHASES[0]),
           'conditions': conditions, 'actions': actions}
    errors = []
    if out['phase'] not in PHASES:
        errors.append('Invalid phase: %s. Valid phases are: %s'
                      % (out['phase'], ', '.join(PHASES)))
    errors.extend(_op_errors(conditions, actions))
    if len(errors) == 1:
        raise _invalid(errors[0])
    if errors:
        raise _invalid('Multiple validation errors occurred: %s'
                       % '; '.join(errors))
    return out


def _is_uuid(value: Any) -> bool:
    import uuid as uuidlib
    try:
        return isinstance(value, str) and \
            str(uuidlib.UUID(value)) == value.lower()
    except ValueError:
        return False


# ---------------------------------------------------------- evaluation
class _Formatter(string.Formatter):
    """``str.format`` that reads items and public attributes only: a
    rule may say ``{node.uuid}`` or ``{inventory[cpu][count]}``, not
    ``{node.__class__}``."""

    def get_field(self, field_name, args, kwargs):
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            if is_attr:
                if key.startswith('_'):
                    raise AttributeError('%s: no such attribute' % key)
                obj = getattr(obj, key)
            else:
                obj = obj[key]
        return obj, first


_FORMATTER = _Formatter()


def _format(value: str, context: dict, op: str | None) -> Any:
    try:
        return _FORMATTER.vformat(value, (), context)
    except KeyError as e:
        if op == 'is-empty':
            # a missing field is empty
            return None
        LOG.warning('Inspection rule: %r names a missing field %s; the '
                    'string is used as it is', value, e)
    except (AttributeError, ValueError, IndexError, TypeError) as e:
        LOG.warning('Inspection rule: cannot interpolate %r (%s: %s); '
                    'the string is used as it is', value,
                    type(e).__name__, e)
    return value


def interpolate(value: Any, context: dict, op: str | None = None) -> Any:
    """``value`` with its strings formatted over ``context`` (also the
    keys of objects and the items of lists)."""
    if isinstance(value, str):
        return _format(value, context, op)
    if isinstance(value, dict):
        return {(_format(k, context, op) if isinstance(k, str) else k):
                interpolate(v, context, op) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, context, op) for v in value]
    return value


def resolve_args(sig: Signature, item: dict, context: dict,
                 op: str | None = None, looped: bool = False) -> dict:
    """The named arguments of a condition or action with their format
    strings filled in (every argument inside a loop)."""
    named = named_args(sig, item.get('args', {}))
    return {k: (interpolate(v, context, op)
                if looped or k in sig.formatted else v)
            for k, v in named.items()}


def loop_items(item: dict) -> list[Any] | None:
    """What a condition or action loops over: ``None`` without a loop;
    an object loop is one item."""
    loop = item.get('loop')
    if not loop:
        return None
    return [loop] if isinstance(loop, dict) else list(loop)


def _check_once(cond: dict, context: dict, looped: bool) -> bool:
    op, inverted = parse_op(cond['op'])
    sig, check = CONDITIONS[op]
    args = resolve_args(sig, cond, context, op, looped)
    args.pop('plugin_data', None)
    if looped and 'force_strings' in dict(sig.optional):
        # interpolation makes strings of numbers: compare as strings
        args['force_strings'] = True
    result = bool(check(**args))
    return not result if inverted else result


def check_condition(cond: dict, context: dict) -> bool:
    """Whether one condition holds; with a loop, ``multiple`` says how
    the items' results combine (any, all, first true, last).  Raises
    ConditionError or ValueError when it cannot be evaluated."""
    items = loop_items(cond)
    if items is None:
        return _check_once(cond, context, looped=False)
    multiple = cond.get('multiple', 'any')
    results = []
    for item in items:
        result = _check_once(cond, dict(context, item=item), looped=True)
        if multiple == 'first' and result:
            return True
        results = [result] if multiple == 'last' else results + [result]
    if multiple == 'all':
        return all(results)
    return any(results)


def masked(data: Any) -> Any:
    """A copy of ``data`` with the values of secret keys as '***'."""
    if isinstance(data, dict):
        return {k: (MASK if k in SECRET_KEYS else masked(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [masked(v) for v in data]
    return data


def split_path(path: Any) -> list[str]:
    """A path to a field: ``/a/b`` or ``a.b``."""
    if not isinstance(path, str) or not path.strip('/'):
        raise ValueError('a path must be a non-empty string, got %r'
                         % (path,))
    if '/' in path:
        return path.strip('/').split('/')
    return path.split('.')
