"""The agent client against an agent that misbehaves
(tests/agent_double.py): every failure is an AgentError naming the node
and the command, never the token."""

import http.client
import http.server
import socket
import threading
import types
import urllib.parse

import pytest
from oslo_config import cfg

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.conf import agent as agent_conf
from baremetal.conf import api as api_conf
from baremetal.drivers.modules.agent import client
from tests import agent_double

TOKEN = 't0ken' * 8


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    agent_conf.register_opts(c)
    api_conf.register_opts(c)
    c([])
    c.set_override('command_timeout', 1, group='agent')
    c.set_override('max_command_attempts', 2, group='agent')
    return c


@pytest.fixture
def agent():
    double = agent_double.AgentDouble(token=TOKEN)
    yield double
    double.stop()


def _client(agent, conf):
    node = types.SimpleNamespace(uuid='n-1', driver_internal_info={
        'agent_url': agent.url, agent_tokens.TOKEN_KEY: TOKEN})
    return client.Client(node, conf)


@pytest.mark.parametrize('answer, words, command', [
    ((500, b'{"faultstring": "boom"}'), 'HTTP 500: boom', None),
    ((502, b'<html>bad gateway</html>'), 'HTTP 502: <html>bad gateway',
     None),
    ((200, b'<html>'), 'not a JSON object', None),
    ((200, b'[1, 2]'), 'not a JSON object', None),
    ((200, b'{"commands": []}'), 'without a command id or with a status',
     None),
    ((200, b'{"id": 7, "command_status": "RUNNING"}'),
     'without a command id or with a status', None),
    # the list of the agent's commands (Client.last_command)
    ((200, b'{"commands": {}}'), 'without a "commands" list',
     'standby.prepare_image'),
    ((200, b'{"commands": [7]}'), 'a command that is not an object',
     'standby.prepare_image'),
    ((200, b'{"commands": [{"id": "1", "command_status": "DONE"}]}'),
     'without a command id or with a status', 'standby.prepare_image'),
])
def test_a_bad_answer_is_an_agent_error(agent, conf, answer, words,
                                        command):
    agent.answer = answer
    with pytest.raises(exception.AgentError) as e:
        if command is None:
            command = 'clean.get_clean_steps'
            _client(agent, conf).run(command, {}, wait=True)
        else:
            _client(agent, conf).last_command(command)
    text = str(e.value)
    assert words in text and command in text, text
    assert 'n-1' in text and TOKEN not in text


def test_the_last_command_is_the_one_the_agent_ran_last(agent, conf):
    c = _client(agent, conf)
    assert c.last_command('standby.sync') is None
    c.run_sync('standby.sync', {})
    record = c.run('standby.prepare_image', {}, wait=False)
    assert c.last_command('standby.sync') == record
    with pytest.raises(exception.AgentError) as e:
        c.run('standby.sync', {}, wait=False)
    assert ('HTTP 409: Agent is busy: executing command '
            'standby.prepare_image') in str(e.value), e.value


def test_an_agent_that_never_answers_is_given_up_on(agent, conf):
    agent.hang = True
    with pytest.raises(exception.AgentConnectionFailed) as e:
        _client(agent, conf).status('1', 'clean.execute_clean_step')
    text = str(e.value)
    assert 'no answer within 1 seconds ([agent]command_timeout), ' \
        '2 attempt(s)' in text, text
    assert agent.url in text and TOKEN not in text
    assert len(agent.requests) == 2


def test_the_agents_ca_is_kept_per_node_under_certificates_path(
        conf, tmp_path):
    """An agent that sent its CA (agent_verify_ca) is verified against
    it: the CA is written under [agent]certificates_path, rewritten when
    the agent sends another, and nowhere else."""
    conf.register_opt(cfg.StrOpt('state_path'))
    conf.set_override('state_path', str(tmp_path))
    node = types.SimpleNamespace(uuid='n-ca', driver_internal_info={
        'agent_url': 'https://127.0.0.1:9', 'agent_verify_ca': 'PEM-1'})
    path = client.Client(node, conf)._verify()
    assert path == str(tmp_path / 'certificates' / 'n-ca.crt')
    assert open(path).read() == 'PEM-1'
    node.driver_internal_info['agent_verify_ca'] = 'PEM-2'
    assert client.Client(node, conf)._verify() == path
    assert open(path).read() == 'PEM-2'
    del node.driver_internal_info['agent_verify_ca']
    assert client.Client(node, conf)._verify() is True   # [agent]verify_ca


def _unreachable_node(url):
    return types.SimpleNamespace(uuid='n-1', driver_internal_info={
        'agent_url': url, agent_tokens.TOKEN_KEY: TOKEN})


@pytest.mark.parametrize('scheme', ['http', 'https'])
def test_a_connection_error_quoting_the_url_is_masked(agent, conf,
                                                      scheme):
    """The error names the request, its URL with the query, masked, and
    what went wrong: refused (a port bound but not listening) and TLS to
    a plain HTTP agent."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1] if scheme == 'http' else \
            int(agent.url.rsplit(':', 1)[1])
        node = _unreachable_node('%s://ipa:pa55word@127.0.0.1:%d'
                                 % (scheme, port))
        with pytest.raises(exception.AgentConnectionFailed) as e:
            client.Client(node, conf).run('clean.get_clean_steps', {},
                                          wait=True)
    text = str(e.value)
    assert ('Connection refused' if scheme == 'http' else 'SSL') in text, \
        text
    assert text.endswith(
        '(2 attempt(s) of POST %s://ipa:******@127.0.0.1:%d/v1/commands/'
        '?wait=true&agent_token=******)' % (scheme, port)), text
    assert TOKEN not in text and 'pa55word' not in text, text
    assert '%s://ipa:******@127.0.0.1:%d' % (scheme, port) in text, text


def test_an_agents_fault_echoing_the_token_is_masked(agent, conf):
    agent.answer = (500, b'{"faultstring": "no route for /v1/commands/'
                         b'?agent_token=%s (token %s)"}'
                    % (TOKEN.encode(), TOKEN.encode()))
    with pytest.raises(exception.AgentError) as e:
        _client(agent, conf).run('clean.get_clean_steps', {}, wait=True)
    assert str(e.value).endswith(
        'HTTP 500: no route for /v1/commands/?agent_token=****** '
        '(token ******)'), str(e.value)


def test_a_failed_commands_error_is_masked():
    record = {'command_error': {
        'message': 'download of https://u:S3cr3t@img/x failed',
        'details': 'token %s refused' % TOKEN}}
    assert client.error_of(record, TOKEN) == (
        'download of https://u:******@img/x failed (token ****** refused)')


def test_commands_and_their_failures_are_counted_for_metrics(agent, conf):
    from baremetal.common import metrics

    def count(name):
        return metrics.REGISTRY.get_sample_value(name, {
            'command': 'clean.get_clean_steps', 'method': 'POST'}) or 0
    before = (count('baremetal_agent_command_duration_seconds_count'),
              count('baremetal_agent_command_errors_total'))
    agent.answer = (200, b'{"id": "1", "command_status": "SUCCEEDED"}')
    _client(agent, conf).run('clean.get_clean_steps', {}, wait=True)
    agent.answer = (500, b'{"faultstring": "boom"}')
    with pytest.raises(exception.AgentError):
        _client(agent, conf).run('clean.get_clean_steps', {}, wait=True)
    assert (count('baremetal_agent_command_duration_seconds_count'),
            count('baremetal_agent_command_errors_total')) == \
        (before[0] + 2, before[1] + 1)


def test_an_agent_over_tls_is_verified_against_the_ca_it_sent(
        conf, tmp_path):
    """HTTPS to an agent: verified against the CA the agent sent
    (agent_verify_ca), refused against another, and [agent]verify_ca
    applies when the agent sent none."""
    from tests import tls
    ctx, cert = tls.server_context(tmp_path, 'agent')
    other = tls.self_signed(tmp_path, 'other')[0]
    conf.register_opt(cfg.StrOpt('state_path'))
    conf.set_override('state_path', str(tmp_path))
    double = agent_double.AgentDouble(token=TOKEN, tls=ctx)
    try:
        def node(ca):
            info = {'agent_url': double.url, agent_tokens.TOKEN_KEY: TOKEN}
            if ca:
                info['agent_verify_ca'] = open(ca).read()
            return types.SimpleNamespace(uuid='n-tls',
                                         driver_internal_info=info)
        steps = client.Client(node(cert), conf).run_sync(
            'clean.get_clean_steps', {})
        assert steps['clean_steps']
        with pytest.raises(exception.AgentConnectionFailed) as e:
            client.Client(node(other), conf).run_sync(
                'clean.get_clean_steps', {})
        assert 'CERTIFICATE_VERIFY_FAILED' in str(e.value), str(e.value)
        with pytest.raises(exception.AgentConnectionFailed):
            client.Client(node(None), conf).run_sync(
                'clean.get_clean_steps', {})
        conf.set_override('verify_ca', 'False', group='agent')
        with pytest.warns(Warning, match='Unverified HTTPS request'):
            client.Client(node(None), conf).run_sync(
                'clean.get_clean_steps', {})
        conf.set_override('verify_ca', cert, group='agent')
        client.Client(node(None), conf).run_sync('clean.get_clean_steps',
                                                 {})
    finally:
        double.stop()


def test_a_redirect_from_the_agent_is_not_followed(agent, conf):
    """An agent that answers with a redirect fails the command; the
    conductor sends nothing (and no token) where it points."""
    elsewhere = agent_double.AgentDouble(token=TOKEN)
    try:
        agent.answer = (302, b'{"faultstring": "moved"}',
                        {'Location': elsewhere.url + '/v1/commands/'})
        with pytest.raises(exception.AgentError) as e:
            _client(agent, conf).run('clean.get_clean_steps', {},
                                     wait=True)
        assert 'HTTP 302: moved' in str(e.value), str(e.value)
        assert len(agent.requests) == 1 and elsewhere.requests == []
    finally:
        elsewhere.stop()


def test_a_command_id_is_sent_as_one_path_segment(agent, conf):
    """The agent's command id goes into the status URL quoted: an id
    with slashes, spaces or a question mark cannot change the path or
    the query the token travels in."""
    agent.answer = (200, b'{"id": "a/../b c?d", "command_status": '
                         b'"RUNNING"}')
    c = _client(agent, conf)
    record = c.run('clean.execute_clean_step', {}, wait=False)
    c.status(record['id'], 'clean.execute_clean_step')
    assert agent.requests[-1] == (
        '/v1/commands/a%2F..%2Fb%20c%3Fd?agent_token=' + TOKEN)


class _Proxy:
    """A forward proxy double: takes absolute-form HTTP requests and
    sends them on; ``seen`` lists them."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _relay(self):
                proxy.seen.append('%s %s' % (self.command, self.path))
                u = urllib.parse.urlsplit(self.path)
                n = int(self.headers.get('Content-Length') or 0)
                conn = http.client.HTTPConnection(u.hostname, u.port,
                                                  timeout=10)
                conn.request(self.command, u.path + '?' + u.query,
                             self.rfile.read(n) if n else None,
                             {'Content-Type': 'application/json'})
                r = conn.getresponse()
                data = r.read()
                conn.close()
                self.send_response(r.status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _relay

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,),
                         daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_proxy_the_environment_names_is_used_unless_no_proxy_says(
        agent, conf, monkeypatch):
    proxy = _Proxy()
    try:
        for name in ('no_proxy', 'NO_PROXY', 'all_proxy', 'ALL_PROXY',
                     'https_proxy', 'HTTPS_PROXY', 'HTTP_PROXY'):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv('http_proxy', proxy.url)
        _client(agent, conf).run_sync('clean.get_clean_steps', {})
        assert len(proxy.seen) == 1 and proxy.seen[0].startswith(
            'POST %s/v1/commands/?wait=true&agent_token=' % agent.url)
        assert len(agent.requests) == 1
        monkeypatch.setenv('no_proxy', '127.0.0.1')
        _client(agent, conf).run_sync('clean.get_clean_steps', {})
        assert len(proxy.seen) == 1 and len(agent.requests) == 2
    finally:
        proxy.stop()
