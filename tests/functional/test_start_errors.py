"""What keeps a process from starting is said in one line.

A configuration or an environment the process cannot start with (option
values that are not valid, a database it cannot use, a state directory
it cannot make, a user file it cannot read, an address it cannot listen
on) ends baremetal-server, baremetal-api, baremetal-conductor and
baremetal-dbsync with ``Cannot start: <why>`` and exit status 1 (a
database without the schema: 2 and the command that makes it), never a
traceback; every address involved is on loopback (or, for the address
that is not this host's, bound to and never sent to)."""

import socket
import sqlite3
import subprocess

import pytest

from tests.functional import cluster
from tests.functional import processes


def _fails(command: str, tmp_path, conf: dict, port: int | None = None,
           args: tuple = (), status: int = 1) -> str:
    """Run ``command`` with ``conf``: it must exit with ``status`` within
    a minute, with no traceback; its output."""
    svc = processes.Service(command, tmp_path, command, conf, port=port)
    if args:
        out = subprocess.run(
            [processes.os.path.join(processes.BIN, command),
             '--config-file', svc.conf_file, *args],
            capture_output=True, text=True, timeout=60)
        assert out.returncode == status, out.stdout + out.stderr
        log = out.stdout + out.stderr
    else:
        svc.start(wait=False)
        try:
            assert svc.proc.wait(60) == status, svc.log()
        finally:
            svc.stop()      # (by its PID) if it is still running
        log = svc.log()
    assert 'Traceback' not in log and 'CRITICAL' not in log, log
    return log


def _line(log: str) -> str:
    lines = [ln for ln in log.splitlines() if 'Cannot start: ' in ln]
    assert len(lines) == 1, log
    return lines[0].split('Cannot start: ', 1)[1]


def _conductor_offline(tmp_path) -> None:
    """baremetal-server's conductor, registered before the API started,
    is offline again."""
    db = sqlite3.connect(str(tmp_path / 'baremetal.sqlite'))
    try:
        assert [online for online, in db.execute(
            'SELECT online FROM conductors')] == [0]
    finally:
        db.close()


def test_option_values_that_are_not_valid(tmp_path):
    """Every option whose value is not valid is named, with its file,
    before anything starts (oslo.config would only say so when the
    option is first read, perhaps much later)."""
    conf = processes.base_conf(tmp_path, api={'max_limit': '-5'},
                               conductor={'workers_pool_size': 'many'})
    conf['DEFAULT']['auth_strategy'] = 'bogus'
    conf['DEFAULT']['use_stderr'] = 'maybe'       # oslo.log's
    svc_conf = '%s/baremetal-server/bm.conf' % tmp_path
    line = _line(_fails('baremetal-server', tmp_path, conf,
                        port=processes.free_port()))
    assert line.startswith('invalid configuration: '), line
    for part in (
            "[DEFAULT]auth_strategy in %s: Valid values are [noauth, "
            "http_basic, keystone], but found 'bogus'" % svc_conf,
            '[api]max_limit in %s: Should be greater than or equal to 1'
            % svc_conf,
            "[conductor]workers_pool_size in %s: invalid literal for "
            "int() with base 10: 'many'" % svc_conf,
            "[DEFAULT]use_stderr in %s: " % svc_conf):
        assert part in line, (part, line)


def test_a_database_that_cannot_be_reached(tmp_path):
    """Nothing listens on loopback's port 1: the server, the conductor
    and dbsync say which database (its password masked) and why."""
    url = 'postgresql+psycopg2://bm:secret-pw@127.0.0.1:1/baremetal'
    conf = processes.base_conf(tmp_path, database={'connection': url})
    for command, args in (('baremetal-server', ()),
                          ('baremetal-conductor', ()),
                          ('baremetal-dbsync', ('upgrade',))):
        line = _line(_fails(command, tmp_path / command, conf,
                            port=processes.free_port()
                            if command == 'baremetal-server' else None,
                            args=args))
        assert line.startswith(
            'the database at postgresql+psycopg2://bm:******@127.0.0.1:1/'
            'baremetal cannot be used: '), (command, line)
        assert 'Connection refused' in line, (command, line)
        assert 'secret-pw' not in line


def test_a_state_path_that_cannot_be_made(tmp_path):
    blocker = tmp_path / 'a-file'
    blocker.write_text('not a directory')
    conf = processes.base_conf(tmp_path)
    conf['DEFAULT']['state_path'] = str(blocker / 'state')
    line = _line(_fails('baremetal-server', tmp_path, conf,
                        port=processes.free_port()))
    assert line == ('cannot make [DEFAULT]state_path %s/state: Not a '
                    'directory' % blocker), line


def test_a_user_file_that_cannot_be_read(tmp_path):
    conf = processes.base_conf(tmp_path)
    conf['DEFAULT'].update(auth_strategy='http_basic',
                           http_basic_auth_user_file=str(tmp_path / 'no'))
    line = _line(_fails('baremetal-server', tmp_path, conf,
                        port=processes.free_port()))
    assert line == ('Invalid configuration: cannot read [DEFAULT]'
                    'http_basic_auth_user_file %s/no: No such file or '
                    'directory' % tmp_path), line
    _conductor_offline(tmp_path)


@pytest.mark.parametrize('command', ['baremetal-server', 'baremetal-api'])
def test_an_address_in_use(tmp_path, command):
    """A port another process holds."""
    conf = processes.base_conf(tmp_path)
    if command == 'baremetal-api':
        # its own database, with the schema; the broker is never reached
        conf['DEFAULT'].update(rpc_transport='oslo',
                               transport_url='rabbit://u:p@127.0.0.1:9/')
        conf['database']['connection'] = 'sqlite:///%s' % (
            tmp_path / 'baremetal.sqlite')
        cluster.dbsync(tmp_path, conf)
    held = socket.socket()
    held.bind(('127.0.0.1', 0))
    held.listen(1)
    port = held.getsockname()[1]
    try:
        line = _line(_fails(command, tmp_path, conf, port=port))
    finally:
        held.close()
    assert line == ("cannot listen on 127.0.0.1 port %d ([api]host_ip, "
                    "[api]port): (('127.0.0.1', %d): [Errno 98] Address "
                    "already in use)" % (port, port)), line
    if command == 'baremetal-server':
        _conductor_offline(tmp_path)


def test_an_address_not_of_this_host(tmp_path):
    """[api]host_ip that no interface here has (TEST-NET-1)."""
    conf = processes.base_conf(tmp_path, api={'host_ip': '192.0.2.1'})
    port = processes.free_port()
    line = _line(_fails('baremetal-server', tmp_path, conf, port=port))
    assert line.startswith('cannot listen on 192.0.2.1 port %d ([api]'
                           'host_ip, [api]port): ' % port), line
    assert 'Cannot assign requested address' in line, line


@pytest.mark.parametrize('command', ['baremetal-api', 'baremetal-conductor'])
def test_a_database_without_the_schema(tmp_path, command):
    """Exit status 2 and the command that creates the schema (only
    baremetal-server creates or upgrades its own)."""
    path = tmp_path / 'empty.sqlite'
    sqlite3.connect(str(path)).close()
    conf = processes.base_conf(
        tmp_path, database={'connection': 'sqlite:///%s' % path})
    conf['DEFAULT'].update(rpc_transport='oslo',
                           transport_url='rabbit://u:p@127.0.0.1:9/')
    log = _fails(command, tmp_path, conf, status=2,
                 port=processes.free_port()
                 if command == 'baremetal-api' else None)
    assert ('The database at sqlite:///%s has no schema: run '
            '"baremetal-dbsync --config-file ... upgrade" first' % path
            ) in log, log
