"""GET /nodes/{node}/plan: what a node is doing, step by step.

Outside /v1 (this service's own, no Ironic microversion): the node's
state, the kind of work in progress (clean, deploy, service or none),
the steps planned for it with how far they got, what the running step
waits on (the agent, the BMC, the ramdisk's call-back, the conductor,
an operator), and the timing of the last run of each kind of work.
Read from the node's row only: the plan and position the step runner
keeps in ``driver_internal_info`` and the timings it records there
(``common/step_timings.py``).  Who may not see the node gets 404, as
for ``GET /v1/nodes/{node}``.
"""

import datetime
import time

from baremetal.api import policy
from baremetal.api.routing import route
from baremetal.common import step_timings as timings
from baremetal.db import nodes as db_nodes

_COLUMNS = ('id', 'uuid', 'name', 'owner', 'lessee', 'provision_state',
            'target_provision_state', 'provision_updated_at',
            'power_state', 'target_power_state', 'maintenance',
            'last_error', 'reservation', 'driver_internal_info')
_RESERVED_POWER = ('power_on', 'power_off', 'reboot')
# what each waiting_on value means, for the answer's readers
REASONS = {
    'callback': 'waiting for the ramdisk to boot and call back (lookup '
                'and first heartbeat)',
    'agent': 'waiting for the agent to finish the step\'s command',
    'bmc': 'waiting for the BMC (a power or boot operation, or an '
           'out-of-band step the conductor polls)',
    'conductor': 'the conductor is running the step',
    'operator': 'held until an operator sends "unhold"',
}


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.datetime.fromtimestamp(
        epoch, datetime.UTC).isoformat(timespec='milliseconds')


def _epoch(value: datetime.datetime | None) -> float | None:
    if value is None:
        return None
    return value.replace(tzinfo=datetime.UTC).timestamp()


def _seconds(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    return round(max(0.0, end - start), 3)


def _plan_kind(state: str | None) -> tuple[str, str | None]:
    """(work in progress, kind the shown steps belong to)."""
    kind = timings.WORKING.get(state)
    if kind is not None:
        return kind, kind
    return 'none', timings.FAILED.get(state)


def _waits_on(row: dict, info: dict, step: dict) -> str:
    """What the running step of a node at work waits on."""
    state = row['provision_state']
    if state in timings.HOLD_STATES:
        return 'operator'
    if row.get('target_power_state') or step.get('step') in _RESERVED_POWER:
        return 'bmc'
    if state not in timings.WAIT_STATES:
        return 'conductor'
    if info.get('agent_command'):
        return 'agent'
    if step.get('step') == 'wait':
        return 'agent'          # a wait step without seconds: a heartbeat
    if step.get('interface') == 'deploy':
        # the deploy interface waits on the agent once it has called back
        return 'agent' if info.get('agent_url') else 'callback'
    return 'bmc'


def _entries_by_index(record: dict | None) -> dict:
    out = {}
    for entry in (record or {}).get('steps') or ():
        out[entry.get('index')] = entry     # the latest run of each step
    return out


def _steps(row: dict, info: dict, kind: str, work: str, now: float
           ) -> tuple[list[dict], dict | None]:
    plan = info.get('%s_steps' % kind) or []
    index = info.get('%s_step_index' % kind)
    timed = _entries_by_index(timings.records(info).get(kind))
    since_state = _epoch(row.get('provision_updated_at'))
    waiting = None
    out = []
    for i, st in enumerate(plan if isinstance(plan, list) else []):
        entry = {'index': i, 'interface': st.get('interface'),
                 'step': st.get('step'), 'priority': st.get('priority'),
                 'args': st.get('args') or {}}
        t = timed.get(i) or {}
        if index is None or index < 0 or i > index:
            entry['state'] = 'pending'
        elif i < index:
            entry['state'] = 'done'
        elif work == 'none':
            entry['state'] = 'failed'
        else:
            entry['state'] = 'running'
        if entry['state'] != 'pending':
            entry['started_at'] = _iso(t.get('start'))
            entry['finished_at'] = _iso(t.get('end'))
            entry['seconds'] = _seconds(t.get('start'), t.get('end'))
        if entry['state'] == 'running':
            on = _waits_on(row, info, st)
            start = t.get('start') or since_state
            since = since_state if row['provision_state'] in \
                timings.WAIT_STATES and since_state else start
            entry.update(since=_iso(start), seconds=_seconds(start, now),
                         waiting_on=on)
            waiting = {'on': on, 'reason': REASONS[on], 'since': _iso(since),
                       'seconds': _seconds(since, now), 'step': i}
        out.append(entry)
    if work != 'none' and index == -1 and \
            row['provision_state'] in timings.WAIT_STATES:
        waiting = {'on': 'callback', 'reason': REASONS['callback'],
                   'since': _iso(since_state),
                   'seconds': _seconds(since_state, now), 'step': None}
    return out, waiting


def _timing(record: dict, now: float) -> dict:
    start = record.get('start')
    end = record.get('end')
    steps = []
    for e in record.get('steps') or ():
        steps.append({'index': e.get('index'),
                      'interface': e.get('interface'),
                      'step': e.get('step'), 'outcome': e.get('outcome'),
                      'started_at': _iso(e.get('start')),
                      'finished_at': _iso(e.get('end')),
                      'seconds': _seconds(e.get('start'),
                                          e.get('end') or now)})
    first = (record.get('steps') or [{}])[0].get('start')
    return {'outcome': record.get('outcome'), 'started_at': _iso(start),
            'finished_at': _iso(end),
            'seconds': _seconds(start, end or now),
            # from the start to the first step: preparing (for an agent:
            # booting its ramdisk and waiting for the call-back)
            'preparation_seconds': _seconds(start, first or end or now),
            'steps': steps}


def build(row: dict, now: float | None = None) -> dict:
    """The plan document of a node row (``_COLUMNS``)."""
    now = time.time() if now is None else now
    info = row.get('driver_internal_info') or {}
    work, kind = _plan_kind(row['provision_state'])
    steps, waiting = _steps(row, info, kind, work, now) if kind \
        else ([], None)
    return {
        'uuid': row['uuid'], 'name': row.get('name'),
        'provision_state': row['provision_state'],
        'target_provision_state': row.get('target_provision_state'),
        'provision_updated_at': _iso(_epoch(row.get(
            'provision_updated_at'))),
        'power_state': row.get('power_state'),
        'target_power_state': row.get('target_power_state'),
        'maintenance': bool(row.get('maintenance')),
        'last_error': row.get('last_error'),
        'work': work, 'steps_of': kind, 'steps': steps,
        'waiting': waiting,
        'timings': {k: _timing(r, now) for k, r in
                    timings.records(info).items()},
    }


@route('GET', '/nodes/{node}/plan')
def get_plan(req, node):
    """A node's steps in progress, what it waits on, and step timings
    (outside /v1, no microversion)."""
    # by UUID or name at any version: this path has no microversions
    row = db_nodes.get_node(node, _COLUMNS)
    policy.check_node(req, 'baremetal:node:get', row)
    out = build(row)
    out['links'] = [{'href': '%s/nodes/%s/plan' % (req.host_url,
                                                  row['uuid']),
                     'rel': 'self'},
                    {'href': '%s/v1/nodes/%s' % (req.host_url, row['uuid']),
                     'rel': 'node'}]
    return out

