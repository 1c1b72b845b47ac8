"""A BMC that answers writes 503 while it is busy (starting, or serving
another client): the write is asked again, ``[redfish]connection_attempts``
times in all, and the BMC acts once; one still busy after them fails
the operation naming the BMC and its answer.  Driven through the API (a
power action, the boot device set) against the fleet's Redfish double,
whose system's ``busy_writes`` are answered 503 and not taken."""

import pytest

from tests import fleet as test_fleet
from tests import harness

fleet_doubles = test_fleet.doubles()
RESET = 'POST /Systems/{}/Actions/ComputerSystem.Reset'
PATCH = 'PATCH /Systems/{}'


def redfish_service(tmp_path, **redfish) -> harness.Harness:
    """The service with the redfish hardware type (power, management)
    and these [redfish] options."""
    return harness.Harness(tmp_path, overrides={
        'enabled_hardware_types': ['redfish'],
        'enabled_power_interfaces': ['redfish'],
        'enabled_management_interfaces': ['redfish'],
        'enabled_boot_interfaces': ['ipxe'],
        'enabled_deploy_interfaces': ['direct'],
        **{'redfish.' + k: v for k, v in redfish.items()}})


@pytest.fixture
def api(tmp_path):
    h = redfish_service(tmp_path, connection_attempts=3,
                        connection_retry_interval=0)
    yield h
    h.close()


@pytest.fixture
def fleet():
    f = fleet_doubles.RedfishFleet(2)
    yield f
    f.stop()


def _node(api, fleet, sid: str) -> str:
    return api.create_node(driver='redfish', name=sid, driver_info={
        'redfish_address': fleet.address(sid),
        'redfish_system_id': '/redfish/v1/Systems/%s' % sid,
        'redfish_username': 'admin', 'redfish_password': 'password'})['uuid']


def _power_on(api, node: str) -> dict:
    status, body, _ = api.request('PUT', '/v1/nodes/%s/states/power' % node,
                                  {'target': 'power on'})
    assert status == 202, body
    api.conductor.workers.wait_idle(30)
    return api.node(node)


def test_writes_answered_503_are_asked_again_and_taken_once(api, fleet):
    busy, gone = _node(api, fleet, 'sys-00000'), _node(api, fleet,
                                                       'sys-00001')
    fleet.systems['sys-00000']['busy_writes'] = 2
    fleet.systems['sys-00001']['busy_writes'] = 5

    # two refusals, then the reset taken: the node is on
    node = _power_on(api, busy)
    assert (node['power_state'], node['last_error']) == ('power on', None)
    assert fleet.systems['sys-00000']['power'] == 'On'
    # (the double counts a route's requests it took, and those refused)
    assert (fleet.injected, fleet.by_route[RESET]) == (2, 1)
    # the boot device (a PATCH) at once
    status, body, _ = api.request(
        'PUT', '/v1/nodes/%s/management/boot_device' % busy,
        {'boot_device': 'pxe'})
    assert status == 204, body
    assert fleet.systems['sys-00000']['target'] == 'Pxe'
    assert fleet.by_route[PATCH] == 1

    # busy for more than the attempts: the power action fails naming the
    # BMC and its answer, the BMC was asked three times and acted never
    node = _power_on(api, gone)
    # (never verified: its power state still unknown)
    assert (node['power_state'], node['target_power_state']) == \
        (None, None)
    assert 'returned code 503' in node['last_error'], node['last_error']
    assert fleet.address('sys-00001') in node['last_error']
    assert fleet.systems['sys-00001']['power'] == 'Off'
    assert (fleet.injected, fleet.by_route[RESET]) == (2 + 3, 1)
    assert fleet.systems['sys-00001']['busy_writes'] == 5 - 3


def test_a_service_configured_afresh_connects_with_its_own_options(
        tmp_path, fleet):
    """The tests' services share a process: a BMC address an earlier one
    used (its port free again) must not bring back that service's
    connection, made with its [redfish] options (seen in CI: the test
    above sent one reset where it asks for three attempts)."""
    for d in ('a', 'b'):
        (tmp_path / d).mkdir()
    first = redfish_service(tmp_path / 'a', connection_attempts=1,
                            connection_retry_interval=0)
    try:
        node = _node(first, fleet, 'sys-00000')
        assert _power_on(first, node)['power_state'] == 'power on'
    finally:
        first.close()
    again = redfish_service(tmp_path / 'b', connection_attempts=3,
                            connection_retry_interval=0)
    try:
        node = _node(again, fleet, 'sys-00000')
        fleet.systems['sys-00000'].update(power='Off', busy_writes=2)
        node = _power_on(again, node)
        assert (node['power_state'], node['last_error']) == (
            'power on', None)
    finally:
        again.close()
