"""The openstacksdk calls Nova's ironic driver makes, in Nova's order,
against a real baremetal-server: list with Nova's fields and paging, get,
lookup by instance, PATCH instance_uuid/instance_info, validate, VIFs,
ports and portgroups by node and address, deploy with a config drive,
power, inject NMI, rebuild, rescue/unrescue, tear down."""

import uuid

import openstack
import pytest

# nova/virt/ironic/driver.py _NODE_FIELDS
NOVA_FIELDS = ('uuid', 'power_state', 'target_power_state',
               'provision_state', 'target_provision_state', 'last_error',
               'maintenance', 'properties', 'instance_uuid', 'traits',
               'resource_class')


@pytest.fixture(scope='module')
def conn(server):
    c = openstack.connection.Connection(
        auth_type='none', baremetal_endpoint_override=server.endpoint,
        baremetal_api_version='1.61')
    yield c
    c.close()


def _available(conn, name, **kw):
    node = conn.baremetal.create_node(driver='fake-hardware', name=name,
                                      resource_class='baremetal', **kw)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'provide', wait=True,
                                            timeout=30)
    return conn.baremetal.get_node(node.id)


def test_nova_driver_calls(conn):
    nodes = [_available(conn, 'nova-%d' % i,
                        properties={'cpus': 4, 'memory_mb': 8192,
                                    'local_gb': 40})
             for i in range(3)]
    node = nodes[0]

    # the resource tracker: every node, Nova's fields, paged
    listed = list(conn.baremetal.nodes(fields=NOVA_FIELDS, limit=2,
                                       paginated=True))
    ids = {n.id for n in listed}
    assert {n.id for n in nodes} <= ids
    one = next(n for n in listed if n.id == node.id)
    assert one.provision_state == 'available'
    assert one.properties['cpus'] == 4
    assert one.driver is None  # not asked for
    assert list(conn.baremetal.nodes(associated=True,
                                     fields=NOVA_FIELDS)) == []

    # spawn: associate, validate, VIFs, deploy with a config drive
    instance = str(uuid.uuid4())
    conn.baremetal.patch_node(node, [
        {'op': 'add', 'path': '/instance_uuid', 'value': instance},
        {'op': 'add', 'path': '/instance_info/image_source',
         'value': 'http://images.example/img.qcow2'},
        {'op': 'add', 'path': '/instance_info/root_gb', 'value': '10'}])
    found = list(conn.baremetal.nodes(instance_id=instance,
                                      fields=NOVA_FIELDS))
    assert [n.id for n in found] == [node.id]
    other = nodes[1]
    with pytest.raises(openstack.exceptions.ConflictException):
        conn.baremetal.patch_node(other, [
            {'op': 'add', 'path': '/instance_uuid', 'value': instance}])

    result = conn.baremetal.validate_node(node, required=('deploy',
                                                          'power'))
    assert result['power'].result and result['deploy'].result

    port = conn.baremetal.create_port(node_id=node.id,
                                      address='52:54:00:00:00:01')
    group = conn.baremetal.create_port_group(node_id=node.id,
                                             address='52:54:00:00:00:02')
    assert [p.id for p in conn.baremetal.ports(details=True,
                                                node=node.id)] == [port.id]
    assert [p.id for p in conn.baremetal.ports(
        details=True, address='52:54:00:00:00:01')] == [port.id]
    assert [g.id for g in conn.baremetal.port_groups(
        details=True, node=node.id)] == [group.id]
    assert [g.id for g in conn.baremetal.port_groups(
        details=True, address='52:54:00:00:00:02')] == [group.id]

    vif = str(uuid.uuid4())
    conn.baremetal.attach_vif_to_node(node, vif, retry_on_conflict=False)
    assert conn.baremetal.list_node_vifs(node) == [vif]

    conn.baremetal.set_node_provision_state(
        node, 'active', config_drive={'meta_data': {'uuid': instance},
                                      'vendor_data': {'x': 1}},
        wait=True, timeout=30)
    got = conn.baremetal.get_node(node.id)
    assert got.provision_state == 'active'
    assert got.power_state == 'power on'
    assert got.instance_info['configdrive'] == '******'

    # power, NMI, reboot
    conn.baremetal.set_node_power_state(node, 'power off', wait=True,
                                        timeout=30)
    conn.baremetal.set_node_power_state(node, 'power on', wait=True,
                                        timeout=30)
    conn.baremetal.set_node_power_state(node, 'soft rebooting', wait=True,
                                        timeout=30)
    conn.baremetal.inject_nmi_to_node(node)
    assert conn.baremetal.get_node(node.id).target_power_state is None

    # rebuild, rescue, unrescue
    conn.baremetal.set_node_provision_state(node, 'rebuild',
                                            config_drive='aGVsbG8=',
                                            wait=True, timeout=30)
    conn.baremetal.set_node_provision_state(node, 'rescue',
                                            rescue_password='pw', wait=True,
                                            timeout=30)
    assert conn.baremetal.get_node(node.id).provision_state == 'rescue'
    conn.baremetal.set_node_provision_state(node, 'unrescue')
    conn.baremetal.wait_for_nodes_provision_state([node], 'active',
                                                  timeout=30)

    # destroy: tear down, VIFs detached, instance cleared by tear-down
    conn.baremetal.detach_vif_from_node(node, vif)
    assert conn.baremetal.list_node_vifs(node) == []
    conn.baremetal.set_node_provision_state(node, 'deleted', wait=True,
                                            timeout=30)
    got = conn.baremetal.get_node(node.id)
    assert got.provision_state == 'available'
    assert got.instance_id is None and got.instance_info == {}


def test_tear_down_clears_what_nova_left(conn):
    node = _available(conn, 'nova-teardown')
    vif = str(uuid.uuid4())
    conn.baremetal.patch_node(node, [
        {'op': 'add', 'path': '/instance_uuid', 'value': str(uuid.uuid4())}])
    conn.baremetal.attach_vif_to_node(node, vif, retry_on_conflict=False)
    conn.baremetal.set_node_provision_state(node, 'active', wait=True,
                                            timeout=30)
    conn.baremetal.set_node_provision_state(node, 'deleted', wait=True,
                                            timeout=30)
    got = conn.baremetal.get_node(node.id)
    assert got.instance_id is None
    assert conn.baremetal.list_node_vifs(node) == []


def test_protected_node_refuses_undeploy(conn):
    node = _available(conn, 'nova-protected')
    conn.baremetal.set_node_provision_state(node, 'active', wait=True,
                                            timeout=30)
    conn.baremetal.patch_node(node, [
        {'op': 'replace', 'path': '/protected', 'value': True}])
    with pytest.raises(openstack.exceptions.ForbiddenException):
        conn.baremetal.set_node_provision_state(node, 'deleted')
