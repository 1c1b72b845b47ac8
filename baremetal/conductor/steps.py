"""Collect, order and validate clean and deploy steps.

One engine for both kinds: ``kind`` is ``'clean'`` or ``'deploy'``.
Steps cross the API and RPC as plain dicts
``{interface, step, priority, args, abortable}``.
"""

from baremetal.common import exception
from baremetal.conductor import step_runner
from baremetal.drivers import base

_ORDER = {name: i for i, name in enumerate(base.INTERFACE_ORDER)}


def sort_key(step: dict) -> tuple:
    """Highest priority first; ties broken by interface order."""
    return (-step['priority'], _ORDER.get(step['interface'], 99),
            step['step'])


def driver_steps(task, kind: str, known_only: bool = False) -> list[dict]:
    """Every step of ``kind`` the node's interfaces offer (any priority),
    sorted (``known_only``: leave out an interface that cannot list its
    steps yet instead of raising StepsNotReady)."""
    out = []
    for it in base.INTERFACE_ORDER:
        iface = task.driver.interfaces.get(it)
        if iface is None:
            continue
        getter = getattr(iface, 'get_%s_steps' % kind, None)
        if getter is None:
            continue
        found = getter(task)
        if found is None:
            if known_only:
                continue
            # the interface cannot list its steps now (see StepsNotReady)
            raise exception.StepsNotReady(node=task.node.uuid,
                                          retry_after=-1)
        out.extend(found)
    return sorted(out, key=sort_key)


def enabled_steps(task, kind: str) -> list[dict]:
    """Steps that run automatically (priority > 0), in order."""
    return [_plan_entry(s, s.get('args') or {}) for s in
            driver_steps(task, kind) if s['priority'] > 0]


def _plan_entry(step: dict, args: dict) -> dict:
    entry = {'interface': step['interface'], 'step': step['step'],
             'priority': step['priority'], 'args': dict(args),
             'abortable': step.get('abortable', False)}
    if step.get('idempotent') is False:
        # a conductor taking the node over must not run it again
        entry['idempotent'] = False
    return entry


def resolve_requested(task, kind: str, requested: list[dict]) -> list[dict]:
    """Match user steps against what the driver offers: an unknown step,
    an unknown argument or a missing required argument raises
    ``InvalidStepArgs`` naming the step and argument."""
    offered = None
    plan = []
    for st in requested:
        if st['step'] in step_runner.RESERVED_STEPS:
            plan.append(step_runner.check_reserved(kind, st))
            continue
        if offered is None:
            offered = {(s['interface'], s['step']): s for s in
                       driver_steps(task, kind, known_only=True)}
        name = '%s.%s' % (st['interface'], st['step'])
        found = offered.get((st['interface'], st['step']))
        if found is None:
            # an interface that cannot list its steps yet may offer it
            driver_steps(task, kind)    # raises StepsNotReady then
            raise exception.InvalidStepArgs(
                reason='%s step %s is not supported by node %s '
                       '(driver %s, %s interface %s)'
                % (kind, name, task.node.uuid, task.node.driver,
                   st['interface'],
                   getattr(task.node, '%s_interface' % st['interface'])
                   or 'default'))
        argsinfo = found.get('argsinfo') or {}
        args = st.get('args') or {}
        unknown = sorted(set(args) - set(argsinfo))
        if unknown:
            raise exception.InvalidStepArgs(
                reason='%s step %s got unexpected argument(s) %s; it takes '
                       '%s' % (kind, name, ', '.join(unknown),
                               ', '.join(sorted(argsinfo)) or 'none'))
        missing = sorted(a for a, info in argsinfo.items()
                         if info.get('required') and a not in args)
        if missing:
            raise exception.InvalidStepArgs(
                reason='%s step %s is missing required argument(s) %s'
                % (kind, name, ', '.join(missing)))
        entry = _plan_entry(found, args)
        if 'priority' in st:
            entry['priority'] = st['priority']
        plan.append(entry)
    return plan


def merge_deploy_steps(task, user_steps: list[dict]) -> list[dict]:
    """Driver deploy steps merged with user/template steps: a user step
    replaces the driver's step of the same name (priority 0 disables
    it); the result is sorted like any plan."""
    plan = {(s['interface'], s['step']): s
            for s in enabled_steps(task, 'deploy')}
    for st in user_steps:
        plan[(st['interface'], st['step'])] = st
    return sorted((s for s in plan.values() if s['priority'] > 0),
                  key=sort_key)


def listing(task, kind: str, min_priority: int | None = None
            ) -> list[dict]:
    """Steps as GET .../cleaning/steps shows them."""
    out = []
    for s in driver_steps(task, kind):
        if min_priority is not None and s['priority'] < min_priority:
            continue
        info = s.get('argsinfo') or {}
        out.append({'interface': s['interface'], 'step': s['step'],
                    'priority': s['priority'],
                    'abortable': s.get('abortable', False),
                    'args': [{'name': n,
                              'description': i.get('description'),
                              'required': bool(i.get('required', False))}
                             for n, i in sorted(info.items())]})
    return out
