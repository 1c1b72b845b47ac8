"""Adoption: which validation runs, what a failure leaves behind."""

from unittest import mock

from baremetal.drivers.modules.agent import deploy as agent_deploy


def _manageable(api, **fields):
    n = api.create_node(**fields)
    api.provision(n['uuid'], 'manage')
    api.wait_for(n['uuid'], 'manageable')
    return n['uuid']


def test_adopt_without_instance_info_validates_no_deploy(api):
    """Ironic validates no deploy interface on adoption: a host adopted
    with an empty instance_info becomes active."""
    node = _manageable(api, deploy_interface='direct')
    with mock.patch.object(agent_deploy.DirectDeploy, 'validate',
                           side_effect=AssertionError('validated')) as v:
        api.provision(node, 'adopt')
        got = api.wait_for(node, 'active')
    assert not v.called
    assert got['last_error'] is None


def test_ramdisk_adoption_failure_keeps_reason_and_retries(api):
    node = _manageable(api, deploy_interface='ramdisk')
    with mock.patch('baremetal.drivers.modules.fake.FakeBoot.validate',
                    side_effect=ValueError('no ISO')):
        api.provision(node, 'adopt')
        api.conductor.workers.wait_idle(10)
    got = api.node(node)
    assert got['provision_state'] == 'adopt failed'
    assert got['target_provision_state'] == 'active'
    assert got['power_state'] is None
    assert got['last_error'] == (
        'Error while attempting to adopt node %s: no ISO.' % node)
    api.provision(node, 'adopt')
    got = api.wait_for(node, 'active')
    assert got['last_error'] is None
