"""Nova's service user behind a real Keystone: with
``[DEFAULT]rbac_service_role_elevated_access = true`` the ``service``
role in project ``service`` lists every node with Nova's fields and
paging, finds a node by its instance and reads any node, through the
catalog's internal endpoint, as nova-compute's resource tracker and
ironic driver do (without the option that user sees only its own
project's nodes: test_keystone_rbac's ``service`` persona)."""

import uuid

import openstack
import pytest

from tests import rbac_personas
from tests.functional.conftest import start_keystone_server
from tests.functional.test_nova_path import NOVA_FIELDS


@pytest.fixture(scope='module')
def nova(tmp_path_factory, keystone):
    """openstacksdk as the service user, the service elevated."""
    tmp = tmp_path_factory.mktemp('nova')
    svc = start_keystone_server(
        tmp, keystone, rbac_service_role_elevated_access='true')
    conn = None
    try:
        ids = rbac_personas.setup(svc.endpoint, keystone)
        conn = openstack.connection.Connection(
            **dict(keystone.cloud('service'), interface='internal'),
            baremetal_api_version='1.61')
        yield conn, ids
    finally:
        if conn is not None:
            conn.close()
        assert svc.stop() == 0, svc.log()


def test_the_resource_tracker_lists_every_node_in_pages(nova):
    conn, ids = nova
    listed = list(conn.baremetal.nodes(fields=NOVA_FIELDS, limit=2,
                                       paginated=True))
    assert sorted(n.id for n in listed) == sorted(
        ids[name] for name in rbac_personas.NODES)
    assert all(n.driver is None for n in listed)   # not asked for
    assert list(conn.baremetal.nodes(associated=True,
                                     fields=NOVA_FIELDS)) == []


def test_a_node_of_any_project_is_found_by_its_instance(nova):
    conn, ids = nova
    instance = str(uuid.uuid4())
    node = conn.baremetal.get_node(ids['rbac-b'])
    assert node.owner is not None
    conn.baremetal.patch_node(node, [
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}])
    found = list(conn.baremetal.nodes(instance_id=instance,
                                      fields=NOVA_FIELDS))
    assert [n.id for n in found] == [ids['rbac-b']]
    conn.baremetal.patch_node(node, [
        {'op': 'remove', 'path': '/instance_uuid'}])
