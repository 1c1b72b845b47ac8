"""The redfish vendor interface's subscription methods: what reaches the
BMC's EventService, what is shown back, what is refused before it."""

import contextlib
import types

import pytest

from baremetal.common import exception
from baremetal.drivers.modules.redfish import client
from baremetal.drivers.modules.redfish import vendor


class _Subscription:
    def __init__(self, json_):
        self.json = json_
        self.deleted = False

    def delete(self):
        self.deleted = True


class _Subscriptions:
    path = '/redfish/v1/EventService/Subscriptions'

    def __init__(self):
        self.created = []
        self.members = {}
        self.json = {'Members': []}

    def create(self, payload):
        self.created.append(payload)
        sub = _Subscription(dict(payload, Id='9', HttpHeaders=None))
        self.members[self.path + '/9'] = sub
        return sub

    def get_member(self, path):
        if path not in self.members:
            raise exception.RedfishError(error='404 on %s' % path)
        return self.members[path]


class _Events:
    def __init__(self):
        self.subscriptions = _Subscriptions()

    def get_event_types_for_subscription(self):
        # sushy gives enums
        return [types.SimpleNamespace(value='Alert'), 'StatusChange']


@pytest.fixture
def events(monkeypatch):
    ev = _Events()
    monkeypatch.setattr(client, 'get_event_service',
                        lambda node, conf: ev)
    monkeypatch.setattr(client, 'call',
                        lambda node, conf, what: contextlib.nullcontext())
    return ev


def _task():
    return types.SimpleNamespace(
        node=types.SimpleNamespace(uuid='n1'),
        conductor=types.SimpleNamespace(conf=None))


def test_create_sends_redfish_defaults_and_hides_headers(events):
    shown = vendor.RedfishVendor().create_subscription(
        _task(), Destination='https://rx.example:8443/e',
        HttpHeaders=[{'Authorization': 'Bearer t'}])
    assert events.subscriptions.created == [{
        'Destination': 'https://rx.example:8443/e', 'Protocol': 'Redfish',
        'Context': '', 'EventTypes': ['Alert'],
        'HttpHeaders': [{'Authorization': 'Bearer t'}]}]
    assert shown == {'Id': '9', 'Destination': 'https://rx.example:8443/e',
                     'Protocol': 'Redfish', 'Context': '',
                     'EventTypes': ['Alert']}


def test_event_types_must_be_offered_by_the_bmc(events):
    with pytest.raises(exception.InvalidParameterValue) as e:
        vendor.RedfishVendor().create_subscription(
            _task(), Destination='http://rx/e', EventTypes=['Alert', 'X'])
    assert str(e.value) == ("EventTypes ['Alert', 'X'] is not a valid "
                            "value, allowed values ['Alert', "
                            "'StatusChange']")
    assert events.subscriptions.created == []


@pytest.mark.parametrize('destination', [
    None, '', 'rx.example/e', '/events', 'http://', 7])
def test_destination_needs_scheme_and_host(events, destination):
    with pytest.raises(exception.InvalidParameterValue,
                       match='is not a valid URI'):
        vendor.RedfishVendor().create_subscription(
            _task(), Destination=destination)
    assert events.subscriptions.created == []


def test_headers_not_a_list_are_refused_without_echo(events):
    with pytest.raises(exception.InvalidParameterValue) as e:
        vendor.RedfishVendor().create_subscription(
            _task(), Destination='http://rx/e', HttpHeaders='secret')
    assert 'secret' not in str(e.value)


def test_get_and_delete_by_id(events):
    v = vendor.RedfishVendor()
    v.create_subscription(_task(), Destination='http://rx/e')
    assert v.get_subscription(_task(), id='9')['Id'] == '9'
    v.delete_subscription(_task(), id='9')
    assert events.subscriptions.members[
        events.subscriptions.path + '/9'].deleted


def test_delete_unknown_is_not_found(events):
    with pytest.raises(exception.RedfishSubscriptionNotFound) as e:
        vendor.RedfishVendor().delete_subscription(_task(), id='4')
    assert 'subscription 4 on node n1' in str(e.value)


@pytest.mark.parametrize('bad', [None, '', '../x'])
def test_id_is_required(events, bad):
    for method in ('get_subscription', 'delete_subscription'):
        with pytest.raises(exception.InvalidParameterValue):
            getattr(vendor.RedfishVendor(), method)(_task(), id=bad)
