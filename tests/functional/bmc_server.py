"""A baremetal-server with the ipmi and redfish hardware types enabled,
tuned so that failing BMCs fail fast in tests, and small HTTP helpers."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import openstack

from tests.functional import processes

VERSION = '1.61'


def conf(tmp) -> dict:
    c = processes.base_conf(
        tmp,
        conductor={'check_provision_state_interval': 1,
                   'async_step_poll_interval': 1,
                   'sync_power_state_interval': 1,
                   'power_state_sync_max_retries': 2,
                   'power_state_change_timeout': 15},
        # 8 s: a virtual BMC (Python) on a loaded 2-core machine may take
        # seconds to answer; a dead one still fails well within the tests
        ipmi={'command_retry_timeout': 8, 'min_command_interval': 0.02},
        redfish={'connection_attempts': 1, 'connection_retry_interval': 0,
                 'connection_timeout': 10, 'power_poll_interval': 0})
    c['DEFAULT'].update({
        'enabled_hardware_types': ['fake-hardware', 'ipmi', 'redfish'],
        'enabled_power_interfaces': ['fake', 'ipmi', 'ipmitool',
                                     'redfish'],
        'enabled_management_interfaces': ['fake', 'noop', 'ipmi',
                                          'ipmitool', 'redfish'],
        'enabled_bios_interfaces': ['no-bios', 'fake', 'redfish'],
        'enabled_inspect_interfaces': ['no-inspect', 'fake', 'redfish'],
        'enabled_raid_interfaces': ['no-raid', 'fake', 'redfish',
                                    'agent'],
        'enabled_firmware_interfaces': ['no-firmware', 'fake', 'redfish'],
        # these tests exercise the BMC: the fake boot boots nothing; a
        # test that deploys keeps the agent deploy (the fake deploy runs
        # on fake-hardware only) and stands in for the agent
        # (tests/agent_double.py); tests/vm boots the real agent
        'default_boot_interface': 'fake',
    })
    return c


def start(tmp):
    svc = processes.Service('baremetal-server', tmp, 'server', conf(tmp),
                            port=processes.free_port())
    svc.start()
    return svc


def sdk(server):
    return openstack.connection.Connection(
        auth_type='none', baremetal_endpoint_override=server.endpoint,
        baremetal_api_version=VERSION)


def http(server, method, path, body=None, version=VERSION):
    """(status, decoded body) of one request; errors are returned."""
    req = urllib.request.Request(
        server.endpoint + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={'X-OpenStack-Ironic-API-Version': version,
                 'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def http_unlocked(server, method, path, body=None, version=VERSION,
                  timeout=30):
    """As http, sent again while the answer is 409 because the node is
    locked (a periodic task holds it for a moment: every client does
    this)."""
    deadline = time.monotonic() + timeout
    while True:
        status, answer = http(server, method, path, body, version)
        if status != 409 or 'locked' not in str(answer) or \
                time.monotonic() > deadline:
            return status, answer
        time.sleep(0.2)


def node(server, ident) -> dict:
    status, body = http(server, 'GET', '/v1/nodes/%s' % ident)
    assert status == 200, body
    return body


def wait(server, ident, check, timeout=30, what='condition'):
    deadline = time.monotonic() + timeout
    while True:
        n = node(server, ident)
        if check(n):
            return n
        assert time.monotonic() < deadline, 'no %s: %s' % (what, n)
        time.sleep(0.1)


def wait_provision(server, ident, state, timeout=30):
    return wait(server, ident,
                lambda n: n['provision_state'] == state
                and not n['target_provision_state'],
                timeout, 'provision state %s' % state)


def wait_power(server, ident, timeout=30):
    """Until no power change is in progress."""
    return wait(server, ident, lambda n: n['target_power_state'] is None,
                timeout, 'end of the power change')


def agent_checks_in(server, node: str, agent) -> None:
    """What a booted ramdisk does first: look its node up (the agent
    double ``agent`` keeps the token it is given) and heartbeat with
    ``agent``'s URL (again after a 409: the node was locked)."""
    status, found = http(server, 'GET', '/v1/lookup?node_uuid=%s' % node,
                         version='1.62')
    assert status == 200, found
    agent.token = found['config']['agent_token']
    for _ in range(50):
        status, body = http(server, 'POST', '/v1/heartbeat/%s' % node,
                            {'callback_url': agent.url,
                             'agent_token': agent.token,
                             'agent_version': '10.0.0'}, version='1.62')
        if status != 409:
            break
        time.sleep(0.1)
    assert status == 202, body


def steps_waited_in(server, node, state='wait call-back',
                    step_field='deploy_step', request=None) -> list:
    """The step (name; None for none) current at each of the node's
    moves to ``state``, from the change feed (read with ``request``,
    ``http`` unless given: (status, body, ...) of a request)."""
    request = request or http
    events, url = [], '/events?limit=100&node=%s' % node
    while True:
        status, page = request(server, 'GET', url)[:2]
        assert status == 200, page
        if not page['events']:
            break
        events.extend(page['events'])
        nxt = urllib.parse.urlsplit(page['next'])
        url = '%s?%s' % (nxt.path, nxt.query)
    step, waited = None, []
    for e in events:
        if e['field'] == step_field:
            step = (e['new'] or {}).get('step')
        elif e['field'] == 'provision_state' and e['new'] == state:
            waited.append(step)
    return waited


def create(server, **fields) -> dict:
    status, body = http(server, 'POST', '/v1/nodes', fields)
    assert status == 201, body
    return body
