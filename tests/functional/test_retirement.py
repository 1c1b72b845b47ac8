"""Node retirement, driven with python-ironicclient's CLI against a real
baremetal-server."""

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
import uuid

import pytest

from tests.functional import processes

BIN = os.path.dirname(sys.executable)


def cli(server, *args, version='1.61', ok=True):
    env = dict(os.environ, OS_ENDPOINT=server.endpoint, OS_AUTH_TYPE='none',
               OS_BAREMETAL_API_VERSION=version, PYTHONWARNINGS='ignore')
    # no client-side retries of 409s: the tests want the first answer
    out = subprocess.run([os.path.join(BIN, 'baremetal'), '--max-retries',
                          '0', *args],
                         capture_output=True, text=True, env=env,
                         timeout=120)
    if ok:
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout) if '-f' in args else out.stdout
    assert out.returncode != 0, out.stdout
    return out.stderr


def get(server, node, version='1.61'):
    req = urllib.request.Request(
        '%s/v1/nodes/%s' % (server.endpoint, node),
        headers={'X-OpenStack-Ironic-API-Version': version})
    return json.load(urllib.request.urlopen(req))


def wait_for(server, node, state, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        n = get(server, node)
        if n['provision_state'] == state and \
                not n['target_provision_state']:
            return n
        assert time.monotonic() < deadline, n
        time.sleep(0.05)


def http(server, method, path, body=None):
    req = urllib.request.Request(
        server.endpoint + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={'X-OpenStack-Ironic-API-Version': '1.61',
                 'Content-Type': 'application/json'})
    with urllib.request.urlopen(req) as r:
        return r.status


def new_node(server, name, state):
    """A node in ``state``, set up over plain HTTP (fast)."""
    assert http(server, 'POST', '/v1/nodes',
                {'driver': 'fake-hardware', 'name': name}) == 201
    for verb, want in (('manage', 'manageable'), ('provide', 'available'),
                       ('active', 'active')):
        if state == 'enroll':
            break
        assert http(server, 'PUT', '/v1/nodes/%s/states/provision' % name,
                    {'target': verb}) == 202
        wait_for(server, name, want)
        if want == state:
            break
    return name


def test_retire_manageable_node_and_provide_refused(server):
    n = new_node(server, 'ret-1', 'manageable')
    cli(server, 'node', 'set', n, '--retired', '--retired-reason',
        'end of warranty')
    shown = cli(server, 'node', 'show', n, '-f', 'json')
    assert shown['retired'] is True
    assert shown['retired_reason'] == 'end of warranty'
    err = cli(server, 'node', 'provide', n, ok=False)
    assert 'retired' in err and '409' in err
    assert get(server, n)['provision_state'] == 'manageable'
    # still cleanable by hand
    cli(server, 'node', 'clean', n, '--clean-steps',
        '[{"interface": "deploy", "step": "erase_devices"}]')
    wait_for(server, n, 'manageable')
    cli(server, 'node', 'unset', n, '--retired')
    shown = cli(server, 'node', 'show', n, '-f', 'json')
    assert shown['retired'] is False
    assert shown['retired_reason'] is None
    cli(server, 'node', 'provide', n)
    wait_for(server, n, 'available')


def test_available_node_cannot_be_retired(server):
    n = new_node(server, 'ret-2', 'available')
    err = cli(server, 'node', 'set', n, '--retired', ok=False)
    assert 'manage' in err and '409' in err
    assert get(server, n)['retired'] is False


def test_retired_active_node_goes_to_manageable_after_teardown(server):
    n = new_node(server, 'ret-3', 'active')
    cli(server, 'node', 'set', n, '--retired', '--retired-reason', 'old')
    # every other operation still works on a retired node
    cli(server, 'node', 'power', 'off', n)
    cli(server, 'node', 'power', 'on', n)
    cli(server, 'node', 'rebuild', n)
    wait_for(server, n, 'active')
    cli(server, 'node', 'undeploy', n)
    node = wait_for(server, n, 'manageable')
    assert node['retired'] is True
    assert node['last_error'] is None


def test_list_filters_by_retired(server):
    a = new_node(server, 'ret-4', 'enroll')
    b = new_node(server, 'ret-5', 'enroll')
    cli(server, 'node', 'set', a, '--retired')
    retired = {x.get('Name', x.get('name')) for x in cli(
        server, 'node', 'list', '--retired', '-f', 'json')}
    assert a in retired and b not in retired
    everything = {x.get('Name', x.get('name')) for x in cli(
        server, 'node', 'list', '-f', 'json')}
    assert {a, b} <= everything
    req = urllib.request.Request(
        server.endpoint + '/v1/nodes/detail?retired=false',
        headers={'X-OpenStack-Ironic-API-Version': '1.61'})
    names = {x['name'] for x in json.load(urllib.request.urlopen(req))[
        'nodes']}
    assert b in names and a not in names


def test_retired_is_version_gated(server):
    n = new_node(server, 'ret-6', 'enroll')
    assert 'retired' not in get(server, n, version='1.60')
    err = cli(server, 'node', 'set', n, '--retired', version='1.60',
              ok=False)
    assert '406' in err or 'version' in err.lower()
    assert get(server, n)['retired'] is False


@pytest.fixture
def old_database(tmp_path):
    """A database at revision 0001 holding nodes from before retirement."""
    conf = processes.base_conf(tmp_path)
    cfile = processes.write_conf(tmp_path / 'old.conf', conf)
    subprocess.run([os.path.join(BIN, 'baremetal-dbsync'), '--config-file',
                    cfile, 'upgrade', '--revision', '0001'], check=True,
                   capture_output=True, timeout=120)
    db = sqlite3.connect(tmp_path / 'baremetal.sqlite')
    uuids = [str(uuid.uuid4()) for _ in range(3)]
    for i, u in enumerate(uuids):
        db.execute("INSERT INTO nodes (uuid, name, driver, provision_state, "
                   "maintenance, console_enabled, protected, "
                   "conductor_group) VALUES (?, ?, 'fake-hardware', "
                   "'manageable', 0, 0, 0, '')", (u, 'old-%d' % i))
    db.commit()
    db.close()
    return tmp_path, uuids


def test_migration_keeps_nodes_from_before_retirement(old_database):
    tmp, uuids = old_database
    conf = processes.base_conf(tmp)
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    try:
        for u in uuids:
            node = get(svc, u)
            assert node['retired'] is False
            assert node['retired_reason'] is None
        cli(svc, 'node', 'set', uuids[0], '--retired')
        assert get(svc, uuids[0])['retired'] is True
    finally:
        svc.stop()
