"""openstacksdk and python-ironicclient's ``baremetal`` command find the
service through a real Keystone's catalog (``OS_CLOUD`` and a
clouds.yaml naming only Keystone), log in with a password or an
application credential, and see what their scope allows: a project
member the nodes its project owns or leases, the system admin all."""

import json
import os
import subprocess
import sys

import openstack
import openstack.config
import openstack.connection
import pytest
import yaml

from tests import rbac_personas
from tests.functional.conftest import start_keystone_server

BAREMETAL = os.path.join(os.path.dirname(sys.executable), 'baremetal')
ALL = sorted(rbac_personas.NODES)
PROJECT_A = ['rbac-a', 'rbac-al']


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, keystone):
    tmp = tmp_path_factory.mktemp('clients')
    svc = start_keystone_server(tmp, keystone)
    try:
        rbac_personas.setup(svc.endpoint, keystone)
        clouds = {name: keystone.cloud(name)
                  for name in ('a-member', 'b-reader', 'system-admin')}
        clouds['a-member-appcred'] = keystone.application_credential(
            'a-member', 'clients-test')
        path = tmp / 'clouds.yaml'
        path.write_text(yaml.safe_dump({'clouds': clouds}))
        yield svc, str(path)
    finally:
        assert svc.stop() == 0, svc.log()


def _cli(clouds: str, cloud: str, *args) -> list:
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env.update(OS_CLIENT_CONFIG_FILE=clouds, OS_CLOUD=cloud,
               PYTHONWARNINGS='ignore')
    run = subprocess.run([BAREMETAL, *args, '-f', 'json'], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.mark.parametrize('cloud,expected', [
    ('system-admin', ALL),
    ('a-member', PROJECT_A),
    ('a-member-appcred', PROJECT_A),
    ('b-reader', ['rbac-al', 'rbac-b']),
])
def test_baremetal_node_list_through_the_catalog(deployment, cloud,
                                                 expected):
    _, clouds = deployment
    names = sorted(n['name'] for n in _cli(clouds, cloud, 'node', 'list'))
    assert names == expected


def test_baremetal_port_list_as_project_member(deployment):
    _, clouds = deployment
    ports = _cli(clouds, 'a-member', 'port', 'list')
    assert sorted(p['address'] for p in ports) == sorted(
        rbac_personas.MACS[n] for n in PROJECT_A)


@pytest.mark.parametrize('cloud,expected', [
    ('system-admin', ALL),
    ('a-member', PROJECT_A),
    ('a-member-appcred', PROJECT_A),
])
def test_openstacksdk_through_the_catalog(deployment, cloud, expected):
    _, clouds = deployment
    region = openstack.config.OpenStackConfig(
        config_files=[clouds], load_envvars=False).get_one(cloud)
    conn = openstack.connection.Connection(config=region)
    try:
        assert sorted(n.name for n in conn.baremetal.nodes()) == expected
        node = conn.baremetal.get_node('rbac-a')
        assert node.owner == conn.current_project_id or \
            cloud == 'system-admin'
        if cloud != 'system-admin':
            with pytest.raises(openstack.exceptions.NotFoundException):
                conn.baremetal.get_node('rbac-b')
    finally:
        conn.close()
