"""driver_info of the ipmi and redfish interfaces: every missing or
malformed key is a 400-class error naming it; good values parse."""

import types

import pytest
from oslo_config import cfg
from oslo_utils import strutils

from baremetal.api.controllers.v1 import node_view
from baremetal.common import exception
from baremetal.conf import ipmi as ipmi_conf
from baremetal.conf import redfish as redfish_conf
from baremetal.drivers.modules.ipmi import client as ipmi
from baremetal.drivers.modules.redfish import client as redfish


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    ipmi_conf.register_opts(c)
    redfish_conf.register_opts(c)
    c([])
    return c


def node(**info):
    return types.SimpleNamespace(uuid='n-1', driver_info=info)


@pytest.mark.parametrize('info,error,words', [
    ({}, exception.MissingParameterValue, ['ipmi_address']),
    ({'ipmi_address': ''}, exception.MissingParameterValue,
     ['ipmi_address']),
    ({'ipmi_address': 'h', 'ipmi_port': 'x'},
     exception.InvalidParameterValue, ['ipmi_port']),
    ({'ipmi_address': 'h', 'ipmi_port': 70000},
     exception.InvalidParameterValue, ['ipmi_port']),
    ({'ipmi_address': 'h', 'ipmi_priv_level': 'ROOT'},
     exception.InvalidParameterValue, ['ipmi_priv_level', 'OPERATOR']),
    ({'ipmi_address': 'h', 'ipmi_username': 'u' * 17},
     exception.InvalidParameterValue, ['ipmi_username', '16']),
    ({'ipmi_address': 'h', 'ipmi_password': ['x']},
     exception.InvalidParameterValue, ['ipmi_password']),
    ({'ipmi_address': 7}, exception.InvalidParameterValue,
     ['ipmi_address']),
])
def test_ipmi_bad_driver_info(conf, info, error, words):
    with pytest.raises(error) as e:
        ipmi.parse(node(**info), conf)
    for w in words:
        assert w in str(e.value)


def test_ipmi_driver_info_parses_with_bytes_credentials(conf):
    got = ipmi.parse(node(ipmi_address='10.0.0.1', ipmi_port='6230',
                          ipmi_username='admin', ipmi_password='pw',
                          ipmi_priv_level='OPERATOR'), conf)
    assert got == ipmi.Info(address='10.0.0.1', port=6230,
                            username=b'admin', password=b'pw',
                            priv_level='OPERATOR', kg=None)
    assert ipmi.parse(node(ipmi_address='h'), conf).port == 623


@pytest.mark.parametrize('info,error,words', [
    ({}, exception.MissingParameterValue, ['redfish_address']),
    ({'redfish_address': 'ftp://host'}, exception.InvalidParameterValue,
     ['redfish_address']),
    ({'redfish_address': 'http://[bad'}, exception.InvalidParameterValue,
     ['redfish_address']),
    ({'redfish_address': 'http://h:port'}, exception.InvalidParameterValue,
     ['redfish_address']),
    # a host name the resolver cannot be asked for (was a UnicodeError,
    # a 500, at every call to the BMC)
    ({'redfish_address': 'a' * 64}, exception.InvalidParameterValue,
     ['redfish_address']),
    ({'redfish_address': 'http://bmc..example'},
     exception.InvalidParameterValue, ['redfish_address']),
    ({'redfish_address': 'h', 'redfish_auth_type': 'kerberos'},
     exception.InvalidParameterValue, ['redfish_auth_type', 'session']),
    ({'redfish_address': 'h', 'redfish_verify_ca': 3},
     exception.InvalidParameterValue, ['redfish_verify_ca']),
])
def test_redfish_bad_driver_info(conf, info, error, words):
    with pytest.raises(error) as e:
        redfish.parse(node(**info), conf)
    for w in words:
        assert w in str(e.value)


def test_redfish_driver_info_parses(conf):
    got = redfish.parse(node(redfish_address='bmc.example:8443/',
                             redfish_system_id='1',
                             redfish_verify_ca='False'), conf)
    assert got.address == 'https://bmc.example:8443'
    assert got.system_id == '/redfish/v1/Systems/1'
    assert got.verify is False
    assert got.auth_type == 'auto'
    assert redfish.parse(node(redfish_address='h',
                              redfish_verify_ca='/etc/ca.pem'),
                         conf).verify == '/etc/ca.pem'


def test_bmc_secrets_are_masked_in_api_responses():
    shown = node_view.mask_secrets({
        'ipmi_address': '10.0.0.1', 'ipmi_username': 'admin',
        'ipmi_password': 'pw', 'ipmi_kg_key': 'k' * 20,
        'redfish_password': 'pw', 'redfish_username': 'admin'})
    assert shown == {
        'ipmi_address': '10.0.0.1', 'ipmi_username': 'admin',
        'ipmi_password': '******', 'ipmi_kg_key': '******',
        'redfish_password': '******', 'redfish_username': 'admin'}


@pytest.mark.parametrize('info', [
    {'ipmi_password': 'x', 'ipmi_address': '1.2.3.4', 'AuthToken': 'z'},
    {'cmd': '--password hunter2 --user a', 'plain': 'password=foo'},
    {'nested': {'secret': 1, 'list': ['--password x', 2, None]},
     'tokens': ['token: abc'], 'n': 3, 'none': None, 'b': True},
])
def test_masking_matches_oslo_utils(info):
    """The remembered decisions give what oslo.utils gives, repeatedly."""
    want = strutils.mask_dict_password(info, node_view.MASK)
    for _ in range(3):
        assert node_view.mask_secrets(info) == want


@pytest.mark.parametrize('info, key', [
    ({'ipmi_address': '10.0.0.5'}, ('ipmi', '10.0.0.5', 623)),
    ({'ipmi_address': 'BMC-1', 'ipmi_port': '6230'},
     ('ipmi', 'bmc-1', 6230)),
    ({'ipmi_address': ''}, None), ({}, None),
    ({'ipmi_address': 'h', 'ipmi_port': 'x'}, None),
])
def test_the_ipmi_bmc_endpoint_of_a_node(info, key):
    from baremetal.drivers.modules.ipmi import client as ipmi_client
    assert ipmi_client.endpoint(info) == key
