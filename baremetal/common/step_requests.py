"""The shape of user-given steps: a clean, deploy or service step list
in a provisioning request, or the steps of a deploy template or runbook.

The API checks it before any RPC and the conductor checks it again on
what it receives, so it lives here, below both.  Whether the node's
driver offers a step, and with which arguments, only the conductor can
say (``conductor/steps.py:resolve_requested``).
"""

from typing import Any

from baremetal.common import exception

# Every interface type, in the order that breaks a tie between two steps
# of one priority (earlier runs first).  Documented in the driver guide;
# drivers/base.py holds the interface class of each.
INTERFACE_ORDER = ('power', 'management', 'deploy', 'bios', 'firmware',
                   'raid', 'boot', 'console', 'inspect', 'network', 'rescue',
                   'storage', 'vendor')


# a step's priority or order: kept in a 32-bit column of a deploy
# template's or runbook's steps in PostgreSQL and MySQL
NUMBER_MAX = 2 ** 31 - 1


def _check_number(kind: str, i: int, name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise exception.InvalidParameterValue(
            err='%s_steps[%d]: "%s" must be an integer >= 0'
            % (kind, i, name))
    if value > NUMBER_MAX:
        raise exception.InvalidParameterValue(
            err='%s_steps[%d]: "%s" must be at most %d'
            % (kind, i, name, NUMBER_MAX))


def check_request_shape(requested: Any, kind: str,
                        require_priority: bool = False,
                        ordered: bool = False) -> list[dict]:
    """Validate the shape of user-given steps: a list of objects with a
    known interface and a step name (``ordered``: a runbook's, each with
    an ``order``)."""
    if not isinstance(requested, list) or not requested and \
            kind in ('clean', 'service'):
        raise exception.InvalidParameterValue(
            err='%s_steps must be a non-empty list of objects with '
                '"interface" and "step"' % kind)
    out = []
    for i, st in enumerate(requested):
        if not isinstance(st, dict):
            raise exception.InvalidParameterValue(
                err='%s_steps[%d] must be an object, got %r'
                % (kind, i, st))
        allowed = {'interface', 'step', 'args'} | (
            {'priority'} if kind == 'deploy' else set()) | (
            {'order'} if ordered else set())
        extra = set(st) - allowed
        if extra:
            raise exception.InvalidParameterValue(
                err='%s_steps[%d] has unknown keys: %s'
                % (kind, i, ', '.join(sorted(extra))))
        iface = st.get('interface')
        if iface not in INTERFACE_ORDER:
            raise exception.InvalidParameterValue(
                err='%s_steps[%d]: "interface" must be one of %s, got %r'
                % (kind, i, ', '.join(INTERFACE_ORDER), iface))
        if not isinstance(st.get('step'), str) or not st['step']:
            raise exception.InvalidParameterValue(
                err='%s_steps[%d]: "step" must be a non-empty string'
                % (kind, i))
        if not isinstance(st.get('args', {}), dict):
            raise exception.InvalidParameterValue(
                err='%s_steps[%d]: "args" must be an object' % (kind, i))
        prio = st.get('priority')
        if require_priority or prio is not None:
            _check_number(kind, i, 'priority', prio)
        order = st.get('order')
        if ordered:
            _check_number(kind, i, 'order', order)
        out.append({'interface': iface, 'step': st['step'],
                    'args': dict(st.get('args') or {}),
                    **({'priority': prio} if prio is not None else {}),
                    **({'order': order} if ordered else {})})
    return out
