"""The embedded server drives nodes through their lifecycle, seen through
python-ironicclient's CLI and openstacksdk, as users drive it."""

import json
import os
import subprocess
import sys
import time
import urllib.request

import openstack

BIN = os.path.dirname(sys.executable)


def cli(server, *args):
    env = dict(os.environ, OS_ENDPOINT=server.endpoint, OS_AUTH_TYPE='none',
               OS_BAREMETAL_API_VERSION='1.61', PYTHONWARNINGS='ignore')
    # no client-side retries of 409s: the tests want the first answer
    out = subprocess.run([os.path.join(BIN, 'baremetal'), '--max-retries',
                          '0', *args],
                         capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if '-f' in args else out.stdout


def wait_for(server, node, state, timeout=30):
    """Poll the REST API (faster than the CLI's 2 s --wait)."""
    deadline = time.monotonic() + timeout
    url = '%s/v1/nodes/%s' % (server.endpoint, node)
    while True:
        req = urllib.request.Request(url, headers={
            'X-OpenStack-Ironic-API-Version': '1.61'})
        body = json.load(urllib.request.urlopen(req))
        if body['provision_state'] == state and \
                not body['target_provision_state']:
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.05)


def sdk(server):
    return openstack.connection.Connection(
        auth_type='none', baremetal_endpoint_override=server.endpoint,
        baremetal_api_version='1.61')


def test_lifecycle_with_the_baremetal_cli(server):
    node = cli(server, 'node', 'create', '--driver', 'fake-hardware',
               '--name', 'cli-node', '-f', 'json')
    assert node['provision_state'] == 'enroll'
    cli(server, 'node', 'manage', 'cli-node')
    wait_for(server, 'cli-node', 'manageable')
    cli(server, 'node', 'provide', 'cli-node')
    wait_for(server, 'cli-node', 'available')
    cli(server, 'node', 'deploy', 'cli-node')
    wait_for(server, 'cli-node', 'active')
    shown = cli(server, 'node', 'show', 'cli-node', '-f', 'json')
    assert shown['provision_state'] == 'active'
    assert shown['power_state'] == 'power on'
    cli(server, 'node', 'undeploy', 'cli-node')
    wait_for(server, 'cli-node', 'available')
    shown = cli(server, 'node', 'show', 'cli-node', '-f', 'json')
    assert shown['provision_state'] == 'available'
    cli(server, 'node', 'delete', 'cli-node')
    listed = cli(server, 'node', 'list', '-f', 'json')
    assert 'cli-node' not in [n['Name'] for n in listed]


def test_lifecycle_with_openstacksdk(server):
    conn = sdk(server)
    node = conn.baremetal.create_node(driver='fake-hardware',
                                      name='sdk-node')
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'provide', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'active', wait=True,
                                            timeout=30,
                                            config_drive='aGVsbG8=')
    got = conn.baremetal.get_node('sdk-node')
    assert got.provision_state == 'active'
    assert got.instance_info['configdrive'] == '******'
    conn.baremetal.set_node_provision_state(node, 'deleted', wait=True,
                                            timeout=30)
    got = conn.baremetal.get_node('sdk-node')
    assert got.provision_state == 'available'
    assert got.instance_info == {}
    conn.baremetal.delete_node(node)
