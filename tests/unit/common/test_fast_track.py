"""When fast track uses a running agent (common/fast_track.py), without
a server: the node's own setting against [deploy]fast_track, the age of
the last heartbeat against fast_track_timeout, the power state."""

import datetime
import types

import pytest

from baremetal.common import agent_tokens
from baremetal.common import exception
from baremetal.common import fast_track
from baremetal.common import states


def _conf(enabled=False, timeout=300):
    return types.SimpleNamespace(deploy=types.SimpleNamespace(
        fast_track=enabled, fast_track_timeout=timeout))


def _ago(seconds):
    return (datetime.datetime.now(datetime.UTC).replace(tzinfo=None) -
            datetime.timedelta(seconds=seconds)).isoformat()


def _task(driver_info=None, heartbeat_ago=1.0, power=states.POWER_ON,
          enabled=False, timeout=300, has_token=True,
          url='http://a:9999'):
    info = {}
    if has_token:
        info['agent_secret_token'] = 'the-token'
    if url:
        info['agent_url'] = url
    if heartbeat_ago is not None:
        info['agent_last_heartbeat'] = _ago(heartbeat_ago)
    node = types.SimpleNamespace(uuid='n1', driver_info=driver_info or {},
                                 driver_internal_info=info)

    def get_power_state(task):
        if isinstance(power, Exception):
            raise power
        return power

    driver = types.SimpleNamespace(power=types.SimpleNamespace(
        get_power_state=get_power_state))
    return types.SimpleNamespace(
        node=node, driver=driver,
        conductor=types.SimpleNamespace(conf=_conf(enabled, timeout)))


@pytest.mark.parametrize('own, default, expected', [
    (None, False, False), (None, True, True),
    (True, False, True), ('true', False, True), ('yes', False, True),
    (False, True, False), ('false', True, False), ('0', True, False),
])
def test_the_nodes_setting_overrides_the_option(own, default, expected):
    info = {} if own is None else {'fast_track': own}
    assert fast_track.enabled_for(info, _conf(default)) is expected


@pytest.mark.parametrize('value', ['sometimes', '', 2, [True]])
def test_a_setting_that_is_not_a_boolean_is_refused(value):
    with pytest.raises(exception.InvalidParameterValue,
                       match='Invalid value of fast_track: '
                             'Unrecognized value'):
        fast_track.check({'fast_track': value})
    with pytest.raises(exception.InvalidParameterValue):
        fast_track.enabled_for({'fast_track': value}, _conf(True),
                               strict=True)
    # elsewhere (the conductor) it counts as false
    assert fast_track.enabled_for({'fast_track': value}, _conf(True)) \
        is False
    fast_track.check({'fast_track': 'True'})
    fast_track.check({})


def test_a_recent_heartbeat_of_a_powered_node_is_used():
    assert fast_track.agent_running(_task({'fast_track': True}))
    assert fast_track.agent_running(_task(enabled=True))


@pytest.mark.parametrize('kw', [
    {'driver_info': {}},                                # fast track off
    {'heartbeat_ago': 301},                             # too old
    {'heartbeat_ago': 11, 'timeout': 10},
    {'heartbeat_ago': None},                            # never
    {'has_token': False},                                    # no lookup
    {'url': None},                                      # no heartbeat
    {'power': states.POWER_OFF},
    {'power': RuntimeError('the BMC does not answer')},
])
def test_otherwise_the_agent_boots(kw):
    kw.setdefault('driver_info', {'fast_track': True})
    assert not fast_track.agent_running(_task(**kw))


def test_the_timeout_is_the_options():
    assert fast_track.agent_running(_task({'fast_track': True},
                                          heartbeat_ago=9, timeout=10))
    assert agent_tokens.heartbeat_age({}) is None
    assert agent_tokens.heartbeat_age({'agent_last_heartbeat': 'x'}) is None
