"""Cleaning a real (virtual) machine through ironic-python-agent 13.0.0,
booted by Redfish virtual media from sushy-tools' libvirt driver."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import time

import pytest

from tests.vm import api
from tests.vm import bed

pytestmark = bed.MARKS
EXT4_MAGIC = (1080, b'\x53\xef')


def _put_filesystem(machine) -> None:
    """An ext4 file system on the whole disk: metadata the agent's
    erase_devices_metadata must remove."""
    subprocess.run(['mkfs.ext4', '-q', '-F', machine.disk], check=True)
    assert _read(machine.disk, *EXT4_MAGIC)


def _read(path, offset, expected) -> bool:
    with open(path, 'rb') as f:
        f.seek(offset)
        return f.read(len(expected)) == expected


def test_automated_cleaning_erases_metadata_in_band(redfish_bed):
    b = redfish_bed
    _put_filesystem(b.machine)
    uuid = api.enroll_redfish(b)
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    started = time.monotonic()
    api.provision(b.server, uuid, 'provide')
    # the BMC inserted the agent's ISO and powered the machine on
    n = api.wait_state(b.server, uuid, 'clean wait', 60)
    assert api.vmedia(b.bmc)['Inserted'] is True
    assert b.machine.is_on()
    # the agent's own steps, merged with the out-of-band ones
    n = api.wait_state(b.server, uuid, 'available', 300)
    took = time.monotonic() - started
    print('automated cleaning through the agent: %.0f s' % took)
    assert n['last_error'] is None
    assert not _read(b.machine.disk, *EXT4_MAGIC), \
        'the file system is still on the disk'
    # powered off and the media ejected at the end
    assert n['power_state'] == 'power off'
    assert not b.machine.is_on()
    assert api.vmedia(b.bmc)['Inserted'] is False
    log = b.server.log(tail=None)
    assert 'erase_devices_metadata' in log
    # the agent really ran it: its log on the serial console says so
    console = b.machine.serial_log()
    assert 'erase_devices_metadata' in console
    # every module the ramdisk's kernel loaded had its dependencies
    assert_no_module_errors(console)


def assert_no_module_errors(console: str) -> None:
    """The ramdisk's kernel loaded its modules without errors (a module
    kept without one it depends on says "Unknown symbol")."""
    bad = [line for line in console.splitlines()
           if 'Unknown symbol' in line or 'disagrees about version' in line]
    assert not bad, '\n'.join(bad[:20])


def _db_token(b, uuid) -> str | None:
    """The agent token as the service stored it (read from its SQLite
    file: the API never shows it)."""
    path = os.path.join(os.path.dirname(b.server.dir), 'baremetal.sqlite')
    with sqlite3.connect(path) as db:
        row = db.execute('SELECT driver_internal_info FROM nodes '
                         'WHERE uuid = ?', (uuid,)).fetchone()
    return json.loads(row[0] or '{}').get('agent_secret_token')


def test_manual_cleaning_with_the_agent_and_its_token(redfish_bed):
    b = redfish_bed
    _put_filesystem(b.machine)
    uuid = api.enroll_redfish(b)
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    api.provision(b.server, uuid, 'clean', clean_steps=[
        {'interface': 'deploy', 'step': 'erase_devices_metadata'}])
    api.wait_state(b.server, uuid, 'clean wait', 60)
    # the token is on the ISO before the machine boots (under a name
    # nobody can guess): another host that knows the machine's MAC and
    # looks it up, over and over, never gets it, and the node's own
    # agent still works with the one from its kernel command line
    token = _db_token(b, uuid)
    assert token
    iso = api.vmedia(b.bmc)['Image']
    assert re.search(r'/vmedia/%s-[A-Za-z0-9_-]{32}\.iso$' % uuid, iso), iso
    answers = api.lookups(b.server, b.machine.mac, 200)
    assert answers == {(200, '******')}, answers
    # wait for the agent: its first heartbeat records its URL
    deadline = time.monotonic() + 240 * bed.timeout_factor()
    while 'agent_url' not in (api.node(b.server, uuid)
                              .get('driver_internal_info') or {}):
        assert time.monotonic() < deadline, 'the agent never heartbeated'
        answers = api.lookups(b.server, b.machine.mac, 8)
        assert answers == {(200, '******')}, answers
        time.sleep(0.5)
    assert _db_token(b, uuid) == token
    # withdrawn once the agent it booted reported in
    status, _, _ = api.http_get(iso)
    assert status == 404
    before = api.node(b.server, uuid)
    # a heartbeat without the token, or with another, changes nothing
    for extra in ({}, {'agent_token': 'x' * 43}):
        status, body, _ = api.http(
            b.server, 'POST', '/v1/heartbeat/%s' % uuid,
            dict({'callback_url': 'http://127.0.0.1:1',
                  'agent_version': '13.0.0'}, **extra))
        assert status == 401, (status, body)
    after = api.node(b.server, uuid)
    assert after['driver_internal_info']['agent_url'] == \
        before['driver_internal_info']['agent_url']
    n = api.wait_state(b.server, uuid, 'manageable', 300)
    assert n['last_error'] is None
    assert not _read(b.machine.disk, *EXT4_MAGIC)
    assert not b.machine.is_on()
    # the token: never in a response nor in the service's log
    assert token
    if token:
        assert token not in json.dumps(api.node(b.server, uuid))
        assert token not in b.server.log(tail=None)


@pytest.mark.server_conf(**{'conductor.clean_callback_timeout': 20})
def test_abort_and_a_dead_machine_end_in_clean_failed(redfish_bed):
    """No agent needed: abort while waiting for it; then a machine that
    dies before its agent calls back fails at clean_callback_timeout."""
    b = redfish_bed
    uuid = api.enroll_redfish(b)
    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    steps = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]
    api.provision(b.server, uuid, 'clean', clean_steps=steps)
    api.wait_state(b.server, uuid, 'clean wait', 60)
    api.provision(b.server, uuid, 'abort')
    n = api.wait_state(b.server, uuid, 'clean failed', 60, bad=())
    assert 'aborted' in n['last_error']
    deadline = time.monotonic() + 60
    while b.machine.is_on() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not b.machine.is_on(), 'abort left the machine on'
    _wait_unlocked(b, uuid)

    api.provision(b.server, uuid, 'manage')
    api.wait_state(b.server, uuid, 'manageable', 60)
    api.provision(b.server, uuid, 'clean', clean_steps=steps)
    api.wait_state(b.server, uuid, 'clean wait', 60)
    started = time.monotonic()
    pid = b.machine.qemu_pid()
    assert pid, 'the machine is not running'
    os.kill(pid, signal.SIGKILL)
    n = api.wait_state(b.server, uuid, 'clean failed', 120, bad=())
    took = time.monotonic() - started
    assert 'Timeout reached while waiting in "clean wait"' in \
        n['last_error'], n['last_error']
    assert took < 20 + 30, took       # clean_callback_timeout + slack
    _wait_unlocked(b, uuid)


def _wait_unlocked(b, uuid) -> None:
    """The tear-down after a failure ends and leaves no lock behind."""
    deadline = time.monotonic() + 60
    while api.node(b.server, uuid)['reservation'] is not None:
        assert time.monotonic() < deadline, 'the node stayed locked'
        time.sleep(0.5)
