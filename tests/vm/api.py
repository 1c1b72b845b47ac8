"""Driving the test bed's baremetal-server over its REST API, as a
client would."""

import base64
import concurrent.futures
import json
import time
import urllib.error
import urllib.request

from tests.vm import bed

VERSION = '1.62'
STABLE = ('enroll', 'manageable', 'available', 'active', 'rescue')


def http(server, method, path, body=None, version=VERSION, headers=None):
    """(status, decoded body, headers) of one request; with the token of
    ``server.token()`` when the bed sets one (keystone_redfish_bed), the
    credentials of ``server.basic_auth`` when it sets those."""
    token = getattr(server, 'token', None)
    basic = getattr(server, 'basic_auth', None)
    if basic:
        headers = dict(headers or {}, Authorization='Basic %s' % (
            base64.b64encode(('%s:%s' % basic).encode()).decode()))
    req = urllib.request.Request(
        server.endpoint + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers=dict({'X-OpenStack-Ironic-API-Version': version,
                      'Content-Type': 'application/json'},
                     **({'X-Auth-Token': token()} if token else {}),
                     **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None, r.headers
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw) if raw else None, e.headers
        except ValueError:
            return e.code, raw.decode(errors='replace'), e.headers


def http_get(url):
    """(status, body, headers) of a GET of any URL."""
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def lookups(server, mac: str, count: int) -> set:
    """``count`` agent lookups by MAC address, 8 at a time, as any host
    on the provisioning network may send them: the set of (status,
    agent_token handed out)."""
    def one(_):
        status, body, _ = http(server, 'GET',
                               '/v1/lookup?addresses=%s' % mac)
        return status, (body or {}).get('config', {}).get('agent_token')
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return set(pool.map(one, range(count)))


def ok(server, method, path, body=None, expect=(200, 201, 202, 204)):
    status, data, _ = http(server, method, path, body)
    assert status in expect, (method, path, status, data)
    return data


def node(server, ident) -> dict:
    return ok(server, 'GET', '/v1/nodes/%s' % ident)


def enroll_redfish(b, **driver_info) -> str:
    """A redfish node for the bed's machine, with its one port; returns
    its UUID (the node stays in enroll)."""
    info = {
        'redfish_address': b.bmc.address,
        'redfish_system_id': b.bmc.system_id,
        'redfish_username': 'admin', 'redfish_password': 'bmc-secret',
        'deploy_kernel': b.kernel, 'deploy_ramdisk': b.initramfs,
        'kernel_append_params': agent_params(b.machine),
    }
    info.update(driver_info)
    n = ok(b.server, 'POST', '/v1/nodes', {
        'name': 'vm-%s' % b.machine.uuid[:8], 'driver': 'redfish',
        'driver_info': info})
    ok(b.server, 'POST', '/v1/ports', {'node_uuid': n['uuid'],
                                       'address': b.machine.mac})
    return n['uuid']


def enroll_ipmi(b, **driver_info) -> str:
    """An ipmi node (boot interface ipxe) for the bed's machine."""
    info = {
        'ipmi_address': '127.0.0.1', 'ipmi_port': b.bmc.port,
        'ipmi_username': b.bmc.user, 'ipmi_password': b.bmc.password,
        'deploy_kernel': b.kernel, 'deploy_ramdisk': b.initramfs,
        'kernel_append_params': agent_params(b.machine),
    }
    info.update(driver_info)
    n = ok(b.server, 'POST', '/v1/nodes', {
        'name': 'vm-%s' % b.machine.uuid[:8], 'driver': 'ipmi',
        'boot_interface': 'ipxe', 'driver_info': info})
    ok(b.server, 'POST', '/v1/ports', {'node_uuid': n['uuid'],
                                       'address': b.machine.mac})
    return n['uuid']


def agent_params(machine) -> str:
    """The agent's options for the bed's network, and its log on the
    serial console."""
    return ('console=ttyS0,115200 ipa-advertise-host=127.0.0.1 '
            'ipa-advertise-port=%d systemd.journald.forward_to_console=1 '
            'systemd.show_status=0' % machine.agent_port)


def provision(server, ident, target, **body) -> None:
    body['target'] = target
    ok(server, 'PUT', '/v1/nodes/%s/states/provision' % ident, body)


def wait_state(server, ident, states, timeout: float,
               bad=('clean failed', 'deploy failed', 'rescue failed',
                    'inspect failed', 'error'),
               phases: dict | None = None) -> dict:
    """Wait until the node's provision_state is one of ``states`` (a
    stable one once no target is pending); fail at once in a ``bad``
    state.  ``phases``: filled with the time each (state, deploy step)
    was first seen."""
    if isinstance(states, str):
        states = (states,)
    deadline = time.monotonic() + timeout * bed.timeout_factor()
    n = {}
    while time.monotonic() < deadline:
        n = node(server, ident)
        st = n['provision_state']
        if phases is not None:
            key = (st, (n.get('deploy_step') or {}).get('step'))
            phases.setdefault(key, time.monotonic())
        if st in states and (st not in STABLE or
                             not n.get('target_provision_state')):
            return n
        if st in bad and st not in states:
            raise AssertionError('node went to %s: %s' % (
                st, n.get('last_error')))
        time.sleep(0.5)
    raise AssertionError('node not in %s after %ss: %s (target %s, '
                         'last_error %s)' % (
                             states, timeout, n.get('provision_state'),
                             n.get('target_provision_state'),
                             n.get('last_error')))


def wait_for(server, ident, check, timeout: float, what: str) -> dict:
    """The node once ``check(node)`` holds (polled twice a second)."""
    deadline = time.monotonic() + timeout * bed.timeout_factor()
    while True:
        n = node(server, ident)
        if check(n):
            return n
        if time.monotonic() > deadline:
            raise AssertionError('no %s after %ss: node %s' % (
                what, timeout, {k: n.get(k) for k in (
                    'provision_state', 'power_state', 'last_error')}))
        time.sleep(0.5)


def vmedia(bmc) -> dict:
    """The BMC's virtual CD as sushy-tools reports it."""
    with urllib.request.urlopen('%s%s/VirtualMedia/Cd' % (
            bmc.address, bmc.system_id), timeout=10) as r:
        return json.loads(r.read())
