"""The Redfish client against BMCs that misbehave on the wire
(tests/bmc/hostile.py): every failure is a baremetal error naming the
BMC, and a request is tried [redfish]connection_attempts times, not
that number squared."""

import types

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import redfish as redfish_conf
from baremetal.drivers.modules.redfish import client
from tests.bmc import hostile


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    redfish_conf.register_opts(c)
    c([])
    c.set_override('connection_attempts', 2, group='redfish')
    c.set_override('connection_retry_interval', 0, group='redfish')
    c.set_override('connection_timeout', 5, group='redfish')
    return c


@pytest.fixture
def bmc():
    fault = hostile.TCPFault('close')
    yield fault
    fault.stop()


def _node(url):
    return types.SimpleNamespace(uuid='n-1', driver_info={
        'redfish_address': url, 'redfish_system_id': '1',
        'redfish_username': 'u', 'redfish_password': 'hunter2',
        'redfish_auth_type': 'basic'})


@pytest.mark.parametrize('mode, error, words', [
    ('close', exception.RedfishConnectionError, 'cannot reach'),
    ('malformed', exception.RedfishConnectionError, 'cannot reach'),
    ('garbage', exception.RedfishError, 'something that is not JSON'),
    ('wrongjson', exception.RedfishError, 'not a Redfish resource'),
])
def test_a_misbehaving_bmc_is_an_error_naming_it(conf, bmc, mode, error,
                                                  words):
    bmc.mode = mode
    with pytest.raises(error) as e:
        client.get_system(_node(bmc.url), conf)
    text = str(e.value)
    assert words in text and bmc.url in text, text
    assert 'hunter2' not in text


@pytest.mark.parametrize('attempts', [1, 3])
def test_an_unreachable_bmc_is_tried_connection_attempts_times(
        conf, bmc, attempts):
    conf.set_override('connection_attempts', attempts, group='redfish')
    with pytest.raises(exception.RedfishConnectionError):
        client.get_system(_node(bmc.url), conf)
    assert bmc.accepted == attempts


def test_a_failed_connection_is_counted_for_metrics(conf, bmc):
    from baremetal.common import metrics

    def count(name):
        return metrics.REGISTRY.get_sample_value(name, {
            'protocol': 'redfish', 'operation': 'connect'}) or 0
    before = (count('baremetal_bmc_request_duration_seconds_count'),
              count('baremetal_bmc_request_errors_total'))
    with pytest.raises(exception.RedfishConnectionError):
        client.get_system(_node(bmc.url), conf)
    assert (count('baremetal_bmc_request_duration_seconds_count'),
            count('baremetal_bmc_request_errors_total')) == \
        (before[0] + 1, before[1] + 1)
