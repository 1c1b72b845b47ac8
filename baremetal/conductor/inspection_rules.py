"""Running inspection rules (API 1.96) on what inspection found.

When inspection data arrives (the agent's inventory through
``continue_inspection``, or what an out-of-band inspect interface read
from the BMC), every rule of the phase, those in the database and the
built-in ones of ``[inspection_rules]built_in_rules``, is tried from the
highest priority down.  A rule whose conditions all hold has its actions
run, in order, on the node (fields, capabilities, traits, its ports) and
on the plugin data.  An action that fails, or a ``fail`` action, fails
the inspection: the node goes to ``inspect failed`` with the reason in
``last_error``.

Conditions and format strings see passwords and tokens in the data as
'***' unless ``[inspection_rules]mask_secrets`` says otherwise.
"""

import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import yaml
from oslo_log import log

from baremetal.common import exception
from baremetal.common import inspection_rules as rules
from baremetal.common import traits as traits_mod
from baremetal.db import inspection_rules as db_inspection_rules
from baremetal.db import traits as db_traits
from baremetal.drivers import registry as registry_mod

LOG = log.getLogger(__name__)

# what a rule may not change: the node's identity, its lock and state
_NODE_FIXED = frozenset(('id', 'uuid', 'reservation', 'provision_state',
                         'target_provision_state', 'power_state',
                         'target_power_state', 'created_at', 'updated_at'))
_PORT_FIXED = frozenset(('id', 'uuid', 'node_id', 'created_at',
                         'updated_at'))


class ActionError(Exception):
    """An action could not be carried out."""


# ---------------------------------------------------------------- rules
def built_in_rules(path: str | None) -> list[dict]:
    """The rules of the built-in rules file (none when unset).  A
    missing or bad file fails the inspection rather than running a
    partial set of rules."""
    if not path:
        return []
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise exception.ConfigInvalid(
            'Cannot read the built-in inspection rules file %s '
            '([inspection_rules]built_in_rules): %s' % (path, e)) from None
    if not isinstance(data, list):
        raise exception.ConfigInvalid(
            'The built-in inspection rules file %s must hold a list of '
            'rules' % path)
    out = []
    synthetic = 0
    for i, raw in enumerate(data):
        try:
            rule = rules.validate_rule(raw, built_in=True)
        except exception.Invalid as e:
            raise exception.ConfigInvalid(
                'Built-in inspection rule #%d in %s: %s'
                % (i, path, e)) from None
        if rule['uuid'] is None:
            # a stable made-up UUID, so that logs can name the rule
            rule['uuid'] = '00000000-0000-0000-0000-%012x' % synthetic
            synthetic += 1
        out.append(rule)
    return out


def rules_for(conf, phase: str) -> list[dict]:
    """The rules to try, highest priority first (ties: API rules in
    creation order, then built-in ones in file order)."""
    found = db_inspection_rules.of_phase(phase)
    found += [r for r in built_in_rules(conf.inspection_rules.built_in_rules)
              if r['phase'] == phase]
    return sorted(found, key=lambda r: r['priority'] or 0, reverse=True)


# -------------------------------------------------------------- actions
def _settable(record, parts: list[str], fixed: frozenset) -> None:
    if parts[0] in fixed or parts[0] not in record.rows.columns:
        raise ActionError('%s is not a field an inspection rule may '
                          'change' % parts[0])


def _container(record, parts: list[str], create: bool) -> Any:
    """The dict holding the last part of a path into a JSON field."""
    if parts[0] not in record.json_fields:
        raise ActionError('%s is not an object' % parts[0])
    current = getattr(record, parts[0])
    if current is None and create:
        current = {}
        setattr(record, parts[0], current)
    for part in parts[1:-1]:
        if not isinstance(current, dict):
            raise ActionError('%s is not an object' % part)
        current = current.setdefault(part, {}) if create else current[part]
    if not isinstance(current, dict):
        raise ActionError('%s is not an object' % '/'.join(parts[:-1]))
    return current


def _not_empty(record, field: str) -> None:
    if field in record.rows.required:
        raise ActionError('%s cannot be removed or set to null: it must '
                          'have a value' % field)


def _coerce(record, field: str, value: Any) -> Any:
    """A whole field's new value, of the column's type (format strings
    give strings: "true" for a boolean, "4" for an integer)."""
    if value is None:
        _not_empty(record, field)
        return None
    kind = record.rows.kind(field)
    if field in record.dict_fields and not isinstance(value, dict):
        raise ActionError('%s must be an object, got %r' % (field, value))
    if isinstance(value, (dict, list)) and field not in record.json_fields:
        raise ActionError('%s cannot hold %r' % (field, value))
    if kind == 'boolean':
        return rules.to_bool(field, value)
    if kind == 'integer' and not isinstance(value, bool):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ActionError('%s must be an integer, got %r'
                              % (field, value)) from None
    return value


def _save(record, check=None) -> None:
    """Save a node or port (after ``check(record)``, when given); if
    the check or the database refuses the change, drop it so that
    nothing saves it later."""
    try:
        if check is not None:
            check(record)
        record.save()
    except Exception:
        record.refresh()
        raise


def _driver_check(task):
    """A check that the node's hardware type and interfaces, where a
    rule changed them, are ones this conductor runs (a PATCH is checked
    so by the API): a node left with an unknown driver would have none
    that works."""
    registry = task.conductor.registry

    def check(node) -> None:
        changed = node.changes()
        if 'driver' not in changed and not any(
                f.endswith('_interface') for f in changed):
            return
        if node.driver not in registry.hardware_types:
            raise ActionError('%s is not a hardware type this conductor '
                              'runs' % node.driver)
        for it in registry_mod.INTERFACE_TYPES:
            impl = getattr(node, '%s_interface' % it, None)
            if impl is not None and (
                    impl not in registry.supported(node.driver, it)
                    or impl not in registry.interfaces[it]):
                raise ActionError(
                    '%s_interface %s is not one hardware type %s runs '
                    'here' % (it, impl, node.driver))
    return check


def _set(record, fixed, path, value, check=None) -> None:
    parts = rules.split_path(path)
    _settable(record, parts, fixed)
    if len(parts) == 1:
        setattr(record, parts[0], _coerce(record, parts[0], value))
    else:
        _container(record, parts, create=True)[parts[-1]] = value
        setattr(record, parts[0], getattr(record, parts[0]))
    _save(record, check)


def _extend(record, fixed, path, value, unique=False, check=None) -> None:
    parts = rules.split_path(path)
    _settable(record, parts, fixed)
    if len(parts) == 1:
        current = getattr(record, parts[0])
        current = [] if current is None else current
    else:
        current = _container(record, parts, create=True).setdefault(
            parts[-1], [])
    if not isinstance(current, list):
        raise ActionError('Cannot extend %s: it is not a list' % path)
    if not unique or value not in current:
        current.append(value)
    setattr(record, parts[0], _coerce(record, parts[0], current)
            if len(parts) == 1 else getattr(record, parts[0]))
    _save(record, check)


def _delete(record, fixed, path, check=None) -> None:
    parts = rules.split_path(path)
    _settable(record, parts, fixed)
    if len(parts) == 1:
        _not_empty(record, parts[0])
        setattr(record, parts[0], None)
    else:
        del _container(record, parts, create=False)[parts[-1]]
        setattr(record, parts[0], getattr(record, parts[0]))
    _save(record, check)


def _port(task, port_id):
    for port in task.ports:
        if port.uuid == port_id:
            return port
    raise exception.PortNotFound(port=port_id)


def _capabilities(node) -> list[str]:
    caps = (node.properties or {}).get('capabilities') or ''
    return [c for c in str(caps).split(',') if c]


def _set_capability(task, name, value) -> None:
    # one entry per name: a second set replaces the first, in place
    new = '%s:%s' % (name, value)
    caps = [new if c.split(':', 1)[0] == name else c
            for c in _capabilities(task.node)]
    if new not in caps:
        caps.append(new)
    props = task.node.properties
    props['capabilities'] = ','.join(caps)
    task.node.properties = props
    _save(task.node)


def _unset_capability(task, name) -> None:
    props = task.node.properties
    props['capabilities'] = ','.join(
        c for c in _capabilities(task.node)
        if c.split(':', 1)[0] != name)
    task.node.properties = props
    _save(task.node)


def _add_trait(task, name) -> None:
    if not traits_mod.is_valid(name):
        raise ActionError(traits_mod.describe(name))
    db_traits.add_node_trait(task.node.id, name)


def _remove_trait(task, name) -> None:
    if not isinstance(name, str):
        # (a string that is no trait is on no node: only not found)
        raise ActionError(traits_mod.describe(name))
    if not db_traits.delete_node_trait(task.node.id, name):
        LOG.warning('Node %s: inspection rule removes trait %s, which '
                    'the node does not have', task.node.uuid, name)


def _plugin_path(path) -> list[str]:
    if not isinstance(path, str) or not path:
        raise ActionError('a plugin data path must be a non-empty string')
    return path.split('.')


def _set_plugin_data(data: dict, path, value) -> None:
    parts = _plugin_path(path)
    current = data
    for part in parts[:-1]:
        current = current.setdefault(part, {})
        if not isinstance(current, dict):
            raise ActionError('%s is not an object' % part)
    current[parts[-1]] = value


def _extend_plugin_data(data: dict, path, value, unique=False) -> None:
    current: Any = data
    for part in _plugin_path(path):
        current = current.get(part) if isinstance(current, dict) else None
    if current is None:
        current = []
        _set_plugin_data(data, path, current)
    if not isinstance(current, list):
        raise ActionError('Cannot extend %s: it is not a list' % path)
    if not unique or value not in current:
        current.append(value)


def _unset_plugin_data(data: dict, path) -> None:
    parts = _plugin_path(path)
    parents = [data]
    for part in parts[:-1]:
        nxt = parents[-1].get(part)
        if not isinstance(nxt, dict):
            LOG.warning('Inspection rule: no plugin data at %s', path)
            return
        parents.append(nxt)
    if parts[-1] not in parents[-1]:
        LOG.warning('Inspection rule: no plugin data at %s', path)
        return
    del parents[-1][parts[-1]]
    # an object left empty goes too
    for i in range(len(parents) - 1, 0, -1):
        if parents[i]:
            break
        del parents[i - 1][parts[i - 1]]


def _log(task, msg, level='info') -> None:
    level = str(level).lower()
    if level not in rules.LOG_LEVELS:
        raise ActionError('Invalid log level: %s. Choose from %s'
                          % (level, ', '.join(rules.LOG_LEVELS)))
    getattr(LOG, level)('Node %s: inspection rule says: %s',
                        task.node.uuid, msg)


def _fail(task, msg) -> None:
    raise exception.HardwareInspectionFailure(error=str(msg))


def _api_call(task, url, headers=None, proxies=None, timeout=5, retries=3,
              backoff_factor=0.3) -> None:
    """GET ``url``; 429 and 5xx answers and connection errors are
    retried ``retries`` times, waiting backoff_factor * 2**n seconds."""
    try:
        timeout, retries = float(timeout), int(retries)
        backoff_factor = float(backoff_factor)
    except (TypeError, ValueError) as e:
        raise ActionError('Invalid parameter: %s' % e) from None
    if timeout <= 0:
        raise ActionError('Invalid parameter: timeout must be greater '
                          'than zero')
    handlers = [urllib.request.ProxyHandler(proxies)] if proxies else []
    opener = urllib.request.build_opener(*handlers)
    req = urllib.request.Request(str(url), headers=headers or {})
    for attempt in range(max(retries, 0) + 1):
        try:
            with opener.open(req, timeout=timeout):
                return
        except urllib.error.HTTPError as e:
            error = 'HTTP %d' % e.code
            if e.code != 429 and e.code < 500:
                break
        except (urllib.error.URLError, OSError, ValueError) as e:
            error = str(e)
        if attempt < retries:
            time.sleep(backoff_factor * 2 ** attempt)
    raise ActionError('Request to %s failed: %s' % (url, error))


# op -> fn(task, plugin_data, **args)
_ACTIONS: dict[str, Callable[..., None]] = {
    'fail': lambda t, d, **a: _fail(t, **a),
    'log': lambda t, d, **a: _log(t, **a),
    'set-attribute': lambda t, d, **a: _set(
        t.node, _NODE_FIXED, check=_driver_check(t), **a),
    'extend-attribute': lambda t, d, **a: _extend(
        t.node, _NODE_FIXED, check=_driver_check(t), **a),
    'del-attribute': lambda t, d, **a: _delete(
        t.node, _NODE_FIXED, check=_driver_check(t), **a),
    'set-capability': lambda t, d, **a: _set_capability(t, **a),
    'unset-capability': lambda t, d, **a: _unset_capability(t, **a),
    'add-trait': lambda t, d, **a: _add_trait(t, **a),
    'remove-trait': lambda t, d, **a: _remove_trait(t, **a),
    'set-plugin-data': lambda t, d, **a: _set_plugin_data(d, **a),
    'extend-plugin-data': lambda t, d, **a: _extend_plugin_data(d, **a),
    'unset-plugin-data': lambda t, d, **a: _unset_plugin_data(d, **a),
    'set-port-attribute': lambda t, d, port_id, **a: _set(
        _port(t, port_id), _PORT_FIXED, **a),
    'extend-port-attribute': lambda t, d, port_id, **a: _extend(
        _port(t, port_id), _PORT_FIXED, **a),
    'del-port-attribute': lambda t, d, port_id, **a: _delete(
        _port(t, port_id), _PORT_FIXED, **a),
    'api-call': lambda t, d, **a: _api_call(t, **a),
}


def _run_action(task, action: dict, context: dict, plugin_data: dict
                ) -> None:
    op = action['op']
    sig = rules.ACTIONS[op]
    items = rules.loop_items(action)
    for item in (items if items is not None else [None]):
        ctx = context if items is None else dict(context, item=item)
        args = rules.resolve_args(sig, action, ctx, op,
                                  looped=items is not None)
        args.pop('plugin_data', None)
        _ACTIONS[op](task, plugin_data, **args)


# -------------------------------------------------------------- running
def _masks(conf, rule: dict) -> bool:
    mode = conf.inspection_rules.mask_secrets
    return mode == 'always' or (mode == 'sensitive' and
                                not rule['sensitive'])


def _apply_one(task, rule: dict, inventory: dict, plugin_data: dict
               ) -> None:
    conf = task.conductor.conf
    mask = _masks(conf, rule)
    context = {'node': task.node,
               'inventory': rules.masked(inventory) if mask else inventory,
               'plugin_data': (rules.masked(plugin_data) if mask
                               else plugin_data)}
    for cond in rule['conditions'] or ():
        if not rules.check_condition(cond, context):
            LOG.debug('Node %s: inspection rule %s does not apply: '
                      'condition %s failed', task.node.uuid, rule['uuid'],
                      cond['op'])
            return
    LOG.info('Node %s: applying the actions of inspection rule %s',
             task.node.uuid, rule['uuid'])
    for action in rule['actions']:
        _run_action(task, action, context, plugin_data)


def apply(task, inventory: dict, plugin_data: dict,
          phase: str = rules.PHASES[0]) -> None:
    """Run the rules of ``phase`` on the node of ``task`` (an exclusive
    task) and ``plugin_data`` (changed in place).  Raises
    HardwareInspectionFailure for a ``fail`` action, InspectionRuleFailed
    when a condition or action cannot run."""
    node = task.node
    # what the inspect interface found is kept whatever the rules do
    node.save()
    for rule in rules_for(task.conductor.conf, phase):
        try:
            _apply_one(task, rule, inventory, plugin_data)
        except exception.HardwareInspectionFailure:
            node.refresh()
            raise
        except Exception as e:
            # an action's change the database refused must not be saved
            # with the failed state
            node.refresh()
            # whatever stops a rule stops the inspection, with the reason
            LOG.error('Node %s: inspection rule %s failed: %s', node.uuid,
                      rule['uuid'], e)
            raise exception.InspectionRuleFailed(
                rule=rule['uuid'], node=node.uuid, error=e) from e
    LOG.debug('Node %s: inspection rules of phase %s done', node.uuid,
              phase)
