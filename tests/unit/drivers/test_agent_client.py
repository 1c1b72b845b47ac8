"""The agent client against an agent that misbehaves
(tests/agent_double.py): every failure is an AgentError naming the node
and the command, never the token."""

import socket
import types

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


@pytest.mark.parametrize('answer, words', [
    ((500, b'{"faultstring": "boom"}'), 'HTTP 500: boom'),
    ((502, b'<html>bad gateway</html>'), 'HTTP 502: <html>bad gateway'),
    ((200, b'<html>'), 'not a JSON object'),
    ((200, b'[1, 2]'), 'not a JSON object'),
    ((200, b'{"commands": []}'), 'without a command id or status'),
    ((200, b'{"id": 7, "command_status": "RUNNING"}'),
     'without a command id or status'),
])
def test_a_bad_answer_is_an_agent_error(agent, conf, answer, words):
    agent.answer = answer
    with pytest.raises(exception.AgentError) as e:
        _client(agent, conf).run('clean.get_clean_steps', {}, wait=True)
    text = str(e.value)
    assert words in text and 'clean.get_clean_steps' in text, text
    assert 'n-1' in text and TOKEN not in text


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
    """requests quotes the URL, query and all, in its errors: refused
    (a port bound but not listening) and TLS to a plain HTTP agent."""
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
    assert 'Max retries exceeded' in text, text
    assert 'agent_token=******' in text, text
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
