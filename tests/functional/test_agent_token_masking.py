"""An agent's failure never shows its token.

The conductor sends the agent token in the query string of every command
(``?agent_token=``, the only place IPA reads it), and its connection
errors quote that URL (as requests/urllib3 do in their errors and debug
lines, which carry it where an environment's proxy is used).  A real
baremetal-server (debug logging on, urllib3's connection pool at DEBUG)
cleans one node
per way an agent can fail - connection refused, connection reset, TLS
to a plain HTTP agent, TLS to an agent with a self-signed certificate,
no answer within ``[agent]command_timeout``, an answer that is not JSON
and an HTTP 500 whose body echoes the request URL - and each cleaning
fails with the reason.  No node field (``last_error``,
``maintenance_reason``, ``driver_internal_info`` as the API shows it),
no API response the test received (except the lookup that hands the
agent its token) and no line of the service's log holds a token, nor
``agent_token=`` with anything but the mask after it.
"""

import re
import socket
import ssl
import struct
import threading
import time

from tests import agent_double
from tests import tls
from tests.functional import processes
from tests.functional import test_secrets

COMMAND_TIMEOUT = 1
ATTEMPTS = 2
ERASE = [{'interface': 'deploy', 'step': 'erase_devices_metadata'}]
# agent_token= followed by anything but the mask
UNMASKED = re.compile(r'agent_token(=|%3D)(?!\*{6})', re.IGNORECASE)


class _Listener:
    """A loopback TCP server that does ``serve(conn)`` with every
    connection, in a thread."""

    def __init__(self, serve) -> None:
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._serve = serve
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return      # closed
            try:
                self._serve(conn)
            except OSError:
                pass
            finally:
                conn.close()

    def close(self) -> None:
        self.sock.close()


def _reset(conn) -> None:
    """Read the request, then close with RST (SO_LINGER 0)."""
    conn.settimeout(5)
    conn.recv(65536)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                    struct.pack('ii', 1, 0))


def _self_signed(tmp) -> ssl.SSLContext:
    return tls.server_context(tmp, 'agent')[0]


def _tls(ctx):
    def serve(conn) -> None:
        conn.settimeout(5)
        # the conductor refuses the certificate: the handshake fails
        with ctx.wrap_socket(conn, server_side=True):
            pass
    return serve


def test_no_agent_failure_shows_the_token(tmp_path):
    conf = processes.base_conf(
        tmp_path,
        DEFAULT={'debug': 'true',
                 'enabled_deploy_interfaces': ['fake', 'direct'],
                 'enabled_boot_interfaces': ['fake'],
                 # urllib3 logs every request line at DEBUG (oslo.log
                 # keeps it at WARNING by default)
                 'default_log_levels': [
                     'urllib3.connectionpool=DEBUG', 'cheroot=WARNING',
                     'stevedore=WARNING', 'alembic=WARNING',
                     'sqlalchemy=WARNING', 'futurist=INFO']},
        conductor={'check_provision_state_interval': 1,
                   'async_step_poll_interval': 1,
                   'automated_clean': 'false'},
        agent={'command_timeout': COMMAND_TIMEOUT,
               'max_command_attempts': ATTEMPTS,
               'command_poll_max_interval': 0.5})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    agent = agent_double.AgentDouble()
    refusing = socket.socket()      # bound, never listening: refused
    refusing.bind(('127.0.0.1', 0))
    resetting = _Listener(_reset)
    self_signed = _Listener(_tls(_self_signed(str(tmp_path))))
    plain = agent.url.replace('http://', 'https://')
    # kind: (callback_url, agent double's answer, words in last_error)
    kinds = {
        'refused': ('http://127.0.0.1:%d' % refusing.getsockname()[1],
                    None, 'Connection refused'),
        'reset': ('http://127.0.0.1:%d' % resetting.port, None,
                  'Connection reset by peer'),
        'tls-to-plain-http': (plain, None, 'SSL'),
        'tls-self-signed': ('https://127.0.0.1:%d' % self_signed.port,
                            None, 'CERTIFICATE_VERIFY_FAILED'),
        'timeout': (agent.url, 'hang',
                    'no answer within %d seconds' % COMMAND_TIMEOUT),
        'garbage': (agent.url, (200, b'<html>proxy error: %(url)s</html>'),
                    'not a JSON object'),
        '500': (agent.url, (500, b'{"faultstring": "cannot serve '
                                 b'%(url)s for %(token)s"}'),
                'HTTP 500: cannot serve /v1/commands/'),
    }
    svc.start()
    api = test_secrets.Client(svc.endpoint)
    tokens, nodes = {}, {}
    started = time.monotonic()
    try:
        for kind, (url, answer, _) in kinds.items():
            nodes[kind], tokens[kind] = _clean_fails(api, agent, url,
                                                     answer)
        # everything an operator reads about the nodes
        shown = {kind: api.ok('GET', '/v1/nodes/%s' % node)
                 for kind, node in nodes.items()}
        for node in nodes.values():
            api.ok('GET', '/v1/nodes/%s/history' % node)
        api.ok('GET', '/v1/nodes/detail')
        api.ok('GET', '/v1/nodes?fields=uuid,last_error,'
                      'maintenance_reason,driver_internal_info')
    finally:
        agent.stop()
        refusing.close()
        resetting.close()
        self_signed.close()
        rc = svc.stop()
    assert rc == 0, svc.log()
    took = time.monotonic() - started
    assert len(set(tokens.values())) == len(kinds)
    failures = []
    for kind, (_, _, words) in kinds.items():
        n = shown[kind]
        fields = '%s\n%s\n%s' % (n['last_error'], n['maintenance_reason'],
                                 n['driver_internal_info'])
        if words not in (n['last_error'] or ''):
            failures.append('%s: last_error %r lacks %r'
                            % (kind, n['last_error'], words))
        if n['maintenance_reason'] != n['last_error']:
            failures.append('%s: maintenance_reason %r'
                            % (kind, n['maintenance_reason']))
        if tokens[kind] in fields or UNMASKED.search(fields):
            failures.append('%s: node shows %s' % (kind, fields))
    for seen in api.seen:
        if UNMASKED.search(seen) or any(t in seen for t in tokens.values()):
            failures.append('response: %s' % seen[:2000])
    log = svc.log(tail=None)
    for line in log.splitlines():
        if UNMASKED.search(line) or any(t in line for t in tokens.values()):
            failures.append('log: %s' % line[:2000])
    assert not failures, '\n'.join(failures)
    # the leaks looked for were there to leak: the retries were logged,
    # and the connection errors quote the URL, masked
    assert 'not reachable for clean.get_clean_steps (attempt 1 of' in log, \
        log[-3000:]
    assert 'agent_token=******' in shown['refused']['last_error'], shown
    assert took < 40, 'took %.1f s' % took


def _clean_fails(api, agent, callback_url, answer):
    """A node whose cleaning waits on its agent; the agent looks it up,
    heartbeats with ``callback_url`` and fails the first command as
    ``answer`` says; the node ends in clean failed.  (node, token)"""
    node = api.ok('POST', '/v1/nodes', {
        'driver': 'fake-hardware', 'deploy_interface': 'direct',
        'boot_interface': 'fake'})['uuid']
    api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
           {'target': 'manage'})
    api.wait(node, 'manageable')
    api.ok('PUT', '/v1/nodes/%s/states/provision' % node,
           {'target': 'clean', 'clean_steps': ERASE})
    api.wait(node, 'clean wait')
    found = api.ok('GET', '/v1/lookup?node_uuid=%s' % node, record=False)
    token = agent.token = found['config']['agent_token']
    agent.hang, agent.answer = answer == 'hang', None
    if isinstance(answer, tuple):
        echo = {b'url': ('/v1/commands/?wait=true&agent_token=%s'
                         % token).encode(), b'token': token.encode()}
        agent.answer = (answer[0], answer[1] % echo)
    api.ok('POST', '/v1/heartbeat/%s' % node,
           {'callback_url': callback_url, 'agent_token': token,
            'agent_version': '13.0.0'})
    try:
        api.wait(node, 'clean failed',
                 timeout=COMMAND_TIMEOUT * ATTEMPTS + 20)
    finally:
        if agent.hang:
            agent.unhang()
    return node, token
