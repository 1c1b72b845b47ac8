"""A heartbeat without this boot's agent token is refused by the API
from the node's row, before any call to the conductor (which checks the
token again under the node's lock)."""

import pytest

from baremetal.db import nodes as db_nodes
from tests import harness


@pytest.fixture
def calls(api, monkeypatch):
    """The heartbeats that reached the conductor."""
    seen = []
    manager = api.conductor.manager
    real = manager.heartbeat

    def counted(context, node_id, **kw):
        seen.append(kw.get('agent_token'))
        return real(context, node_id, **kw)
    monkeypatch.setattr(manager, 'heartbeat', counted)
    return seen


def _set(node: dict, **fields) -> None:
    db_nodes.ROWS.update(db_nodes.get_node(node['uuid'])['id'], fields)


def _beat(api, node: dict, token: str):
    return api.request('POST', '/v1/heartbeat/%s' % node['uuid'],
                       {'callback_url': 'http://127.0.0.1:9999',
                        'agent_token': token}, version='1.62')


def test_no_token_issued_is_401_without_a_call(api, calls, caplog):
    n = api.create_node()
    status, out, _ = _beat(api, n, 'a-guess')
    assert status == 401, out
    assert 'no token was issued for this boot' in harness.error_message(
        out)
    assert calls == []
    assert 'heartbeat refused: no agent token' in caplog.text
    assert 'a-guess' not in caplog.text


def test_a_wrong_token_is_401_without_a_call_even_while_locked(
        api, calls, caplog):
    n = api.create_node()
    _set(n, driver_internal_info={'agent_secret_token': 'the-token'},
         reservation='another-conductor')
    for wrong in ('not-the-token', '******', 'the-token-'):
        status, out, _ = _beat(api, n, wrong)
        assert status == 401, out
        assert 'does not match the token issued' in harness.error_message(
            out)
    assert calls == []
    assert caplog.text.count('heartbeat refused: a wrong agent token') == 3
    assert 'the-token' not in caplog.text
    row = db_nodes.get_node(n['uuid'])
    assert row['driver_internal_info'] == {
        'agent_secret_token': 'the-token'}
    assert row['reservation'] == 'another-conductor'


def test_this_boots_token_reaches_the_conductor(api, calls):
    n = api.create_node()
    _set(n, driver_internal_info={'agent_secret_token': 'the-token'},
         reservation='another-conductor')
    # past the API: the conductor's lock is the next answer
    status, out, _ = _beat(api, n, 'the-token')
    assert status == 409, out
    assert calls == ['the-token']
    _set(n, reservation=None)
    status, out, _ = _beat(api, n, 'the-token')
    assert status == 202, out
    assert calls == ['the-token', 'the-token']
    info = db_nodes.get_node(n['uuid'])['driver_internal_info']
    assert info['agent_url'] == 'http://127.0.0.1:9999'
