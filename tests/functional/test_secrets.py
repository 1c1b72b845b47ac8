"""Secrets never leave through the API or the logs.

A real baremetal-server (debug logging on) takes a node with known
secrets through its whole life with an agent (the agent double on
loopback): a BMC password in driver_info, the agent token it issues at
lookup, a config drive with a marker, a rescue password.  Every API
response the test receives (except the lookup that hands the agent its
token) and every line the server logged must hold none of them.
"""

import json
import os
import time
import urllib.error
import urllib.request

from oslo_utils import secretutils

from tests import agent_double
from tests.functional import processes

MAC = '52:54:00:5e:c0:01'
BMC_PASSWORD = 'Bmc-Pa55-7f3a9c'
RESCUE_PASSWORD = 'Rescue-Pa55-41d2e8'
CONFIGDRIVE_MARKER = 'cfgdrive-marker-9b1c77'
VERSION = '1.95'


class Client:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.seen: list[str] = []       # every response body, as text

    def __call__(self, method, path, body=None, record=True,
                 version=VERSION):
        req = urllib.request.Request(
            self.endpoint + path, method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={'X-OpenStack-Ironic-API-Version': version,
                     'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, raw, headers = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, raw, headers = e.code, e.read(), e.headers
        if record:
            self.seen.append('%s %s -> %d %s\n%s' % (
                method, path, status, dict(headers), raw.decode()))
        return status, json.loads(raw) if raw else None

    def ok(self, method, path, body=None, **kw):
        status, data = self(method, path, body, **kw)
        assert status < 300, (method, path, status, data)
        return data

    def wait(self, node, state, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            n = self.ok('GET', '/v1/nodes/%s' % node)
            if n['provision_state'] == state and not n['reservation']:
                return n
            assert time.monotonic() < deadline, n
            time.sleep(0.05)


def _agent_boots(api, agent, node):
    """What IPA does when its ramdisk is up: lookup, then heartbeat."""
    found = api.ok('GET', '/v1/lookup?addresses=%s' % MAC, record=False)
    agent.token = found['config']['agent_token']
    api.ok('POST', '/v1/heartbeat/%s' % node,
           {'callback_url': agent.url, 'agent_token': agent.token,
            'agent_version': '13.0.0'})
    return agent.token


def test_no_secret_in_any_response_or_log_line(tmp_path):
    conf = processes.base_conf(tmp_path, DEFAULT={'debug': 'true'},
                               conductor={'async_step_poll_interval': 1})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    agent = agent_double.AgentDouble()
    svc.start()
    tokens = []
    try:
        api = Client(svc.endpoint)
        n = api.ok('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'deploy_interface': 'ramdisk',
            'rescue_interface': 'agent',
            'driver_info': {'fake_password': BMC_PASSWORD,
                            'deploy_kernel': 'http://127.0.0.1:9/k',
                            'deploy_ramdisk': 'http://127.0.0.1:9/r'}})
        node = n['uuid']
        api.ok('POST', '/v1/ports', {'address': MAC, 'node_uuid': node})
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'manage'})
        api.wait(node, 'manageable')
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'provide'})
        api.wait(node, 'clean wait')
        tokens.append(_agent_boots(api, agent, node))
        api.wait(node, 'available')
        configdrive = {'meta_data': {'uuid': CONFIGDRIVE_MARKER},
                       'user_data': '#cloud-config\n# %s\n'
                                    % CONFIGDRIVE_MARKER}
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'active', 'configdrive': configdrive})
        api.wait(node, 'wait call-back')
        tokens.append(_agent_boots(api, agent, node))
        api.wait(node, 'active')
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'rescue', 'rescue_password': RESCUE_PASSWORD})
        api.wait(node, 'rescue wait')
        tokens.append(_agent_boots(api, agent, node))
        api.wait(node, 'rescue')
        # everything an operator reads about the node, now and after
        for path in ('/v1/nodes/%s' % node, '/v1/nodes/detail',
                     '/v1/nodes/%s/states' % node,
                     '/v1/nodes/%s/history' % node,
                     '/v1/nodes?fields=uuid,driver_info,instance_info,'
                     'driver_internal_info',
                     '/v1/ports/detail'):
            api.ok('GET', path)
        # the rescue password really went to the agent
        finalize = [c for c in agent.received
                    if c['name'] == 'rescue.finalize_rescue']
        sent = finalize[0]['params']
        assert sent['hashed'] is True and RESCUE_PASSWORD not in repr(sent)
        assert secretutils.crypt_password(
            RESCUE_PASSWORD, sent['rescue_password']) == \
            sent['rescue_password']
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'unrescue'})
        api.wait(node, 'active')
        api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
               {'target': 'deleted'})
        api.wait(node, 'clean wait')
        tokens.append(_agent_boots(api, agent, node))
        api.wait(node, 'available')
        api.ok('GET', '/v1/nodes/%s' % node)
    finally:
        agent.stop()
        rc = svc.stop()
    assert rc == 0, svc.log()
    secrets = [BMC_PASSWORD, RESCUE_PASSWORD, CONFIGDRIVE_MARKER] + tokens
    assert len(set(tokens)) == 4        # one per boot
    logs = {}
    for root, _, files in os.walk(str(tmp_path)):
        for name in files:
            if name == 'log' or name.endswith('.log'):
                with open(os.path.join(root, name), errors='replace') as f:
                    logs[os.path.join(root, name)] = f.read()
    text = '\n'.join(logs.values())
    # the log covers the whole scenario, at debug level
    assert text.count('agent token issued at lookup') == 4, text[-3000:]
    assert 'rescue system ready' in text and ' DEBUG ' in text
    leaks = []
    for secret in secrets:
        leaks += ['response: %s' % r[:300] for r in api.seen
                  if secret in r]
        leaks += ['log %s: %s' % (path, line[:300])
                  for path, text in logs.items()
                  for line in text.splitlines() if secret in line]
    assert not leaks, '\n'.join(leaks)
