"""Glance images, over HTTP against a real baremetal-server, a real
Glance and a real Keystone: a node whose instance_info image_source is a
Glance image UUID (as Nova sets it, no checksum) is deployed with the
direct deploy and an agent double.

The conductor reads the image from Glance with the [glance] service
user's token (and a service token: [service_user]), downloads it once
into its image cache checked against Glance's hash, and tells the agent
to download it from its own file server ([deploy]http_url); a second
deploy of the image asks Glance for no data.  A private image of another
project is refused with 400 at the deploy request, the node untouched.
An image whose data in Glance's store no longer matches Glance's hash
fails the deploy and leaves nothing in the cache; a cached copy that was
changed is fetched again before it is served.  With
[conductor]image_cache_size = 1 (MiB) and images of 0.6 MiB, deploying a
second image evicts the first one.
"""

import hashlib
import os
import time
import urllib.request

import pytest

from tests import agent_double
from tests import glance_service
from tests import keystone_service
from tests.functional import bmc_server as bs
from tests.functional import processes

# one worker runs the module: its Keystone, Glance and server start once
# (about a minute on two busy cores), not once on each worker
pytestmark = pytest.mark.xdist_group('glance-images')

SIZE = 600 * 1024


def _data(tag: bytes) -> bytes:
    return (tag * SIZE)[:SIZE]


@pytest.fixture(scope='module')
def keystone(tmp_path_factory):
    ks = keystone_service.start_or_skip(tmp_path_factory.mktemp('ks'))
    yield ks
    assert ks.stop() == 0, ks.log()


@pytest.fixture(scope='module')
def glance(tmp_path_factory, keystone):
    g = glance_service.Glance(tmp_path_factory.mktemp('glance'),
                              keystone=keystone)
    g.start()
    g.register(keystone)
    yield g
    assert g.stop() == 0, g.log()


@pytest.fixture(scope='module')
def server(tmp_path_factory, keystone, glance):
    tmp = tmp_path_factory.mktemp('glanceimages')
    service = keystone.authtoken_conf()
    creds = {k: service[k] for k in (
        'auth_type', 'auth_url', 'username', 'password',
        'user_domain_name', 'project_name', 'project_domain_name')}
    conf = processes.agent_server_conf(
        tmp,
        conductor={'deploy_callback_timeout': 120, 'image_cache_size': 1},
        deploy={'http_server_port': 0},
        # the endpoint from Keystone's catalog: no endpoint_override
        glance=dict(creds, region_name='RegionOne',
                    valid_interfaces='internal'),
        service_user=dict(creds, send_service_user_token='true'))
    svc = processes.Service('baremetal-server', tmp, 'server', conf,
                            port=processes.free_port())
    svc.start()
    svc.tmp = tmp
    yield svc
    assert svc.stop() == 0, svc.log()


@pytest.fixture
def agent():
    double = agent_double.AgentDouble()
    double.polls_until_done = 10 ** 6      # the write runs until told
    yield double
    double.stop()


def _provision(server, node, target, status=202):
    got, body = bs.http(server, 'PUT', '/v1/nodes/%s/states/provision'
                        % node, {'target': target})
    assert got == status, body
    return body


def _ended(server, node, state, timeout=60):
    return bs.wait(server, node, lambda n: n['provision_state'] == state
                   and n['reservation'] is None, timeout,
                   'provision state %s' % state)


def _available(server, **instance_info) -> str:
    fields = {k: instance_info.pop(k) for k in ('lessee', 'owner')
              if k in instance_info}
    status, n = bs.http(server, 'POST', '/v1/nodes', dict(
        fields, driver='fake-hardware', deploy_interface='direct',
        boot_interface='fake', instance_info=instance_info),
        version='1.65')            # lessee
    assert status == 201, n
    _provision(server, n['uuid'], 'manage')
    _ended(server, n['uuid'], 'manageable')
    _provision(server, n['uuid'], 'provide')
    _ended(server, n['uuid'], 'available')
    return n['uuid']


def _prepare_image(agent, timeout=60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for got in agent.received:
            if got['name'] == 'standby.prepare_image':
                return got['params']['image_info']
        time.sleep(0.1)
    raise AssertionError('the agent was never told to write the image: %s'
                         % agent.received)


def _downloads(glance, image_id: str) -> int:
    return sum(1 for line in glance.requests()
               if line.startswith('GET ') and
               line.split()[1].endswith('/%s/file' % image_id))


def _cache(server) -> str:
    return os.path.join(str(server.tmp), 'images')


def _deploy(server, agent, node) -> tuple[dict, bytes]:
    """Deploy ``node``: what the agent was told to write and what it
    got from the URL it was given; the node ends active."""
    _provision(server, node, 'active')
    bs.wait(server, node, lambda n: n['provision_state'] == 'wait call-back')
    bs.agent_checks_in(server, node, agent)
    info = _prepare_image(agent)
    with urllib.request.urlopen(info['urls'][0], timeout=30) as r:
        served = r.read()
    agent.polls_until_done = 0         # the agent wrote it
    _ended(server, node, 'active')
    return info, served


def _undeploy(server, node, image_source=None):
    """Tear down; instance_info goes with the instance (as Ironic's), so
    ``image_source`` is set again for the next deploy."""
    _provision(server, node, 'deleted')
    _ended(server, node, 'available')
    if image_source:
        status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
            {'op': 'add', 'path': '/instance_info/image_source',
             'value': image_source}])
        assert status == 200, body


def test_a_glance_image_is_served_from_the_cache_and_fetched_once(
        server, glance, agent):
    data = _data(b'public image ')
    image = glance.create_image(data, visibility='public')
    uploaded = len(glance.requests())
    node = _available(server, image_source=image['id'])
    info, served = _deploy(server, agent, node)

    assert info['urls'][0].startswith('http://127.0.0.1:'), info
    assert '/images/' in info['urls'][0]
    assert (info['os_hash_algo'], info['os_hash_value']) == (
        image['os_hash_algo'], image['os_hash_value'])
    assert hashlib.sha512(served).hexdigest() == image['os_hash_value']
    assert served == data
    assert _downloads(glance, image['id']) == 1
    # every request of the conductor carried the [service_user] token
    # too (the fixture's own did not)
    mine = [r for r in glance.requests()[uploaded:] if image['id'] in r]
    assert mine and all(r.endswith(' service-token') for r in mine), mine
    # instance_info filled from Glance, as Ironic's
    ii = bs.node(server, node)['instance_info']
    assert ii['image_disk_format'] == 'raw'
    assert ii['image_container_format'] == 'bare'
    assert ii['image_os_hash_value'] == image['os_hash_value']
    assert ii['image_size'] == len(data)
    # the URL only the agent was told is withdrawn once written
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(info['urls'][0], timeout=10)

    # a second deploy: served from the cache, no data asked of Glance
    _undeploy(server, node, image['id'])
    agent.received.clear()
    agent.polls_until_done = 10 ** 6
    info2, served2 = _deploy(server, agent, node)
    assert served2 == data and info2['urls'][0] != info['urls'][0]
    assert _downloads(glance, image['id']) == 1
    _undeploy(server, node)


def test_a_private_image_of_another_project_is_refused(server, glance,
                                                       keystone):
    theirs = keystone.project_id('b')
    ours = keystone.project_id('a')
    image = glance.create_image(_data(b'private '), owner=theirs,
                                visibility='private')
    node = _available(server, image_source='glance://%s' % image['id'],
                      lessee=ours)
    before = bs.node(server, node)

    body = _provision(server, node, 'active', status=400)
    msg = body['error_message']
    assert image['id'] in msg and 'private image of project %s' % theirs \
        in msg and ours in msg, msg
    after = bs.node(server, node)
    for field in ('provision_state', 'target_provision_state',
                  'instance_info', 'last_error', 'reservation'):
        assert after[field] == before[field], field
    status, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
    assert v['deploy']['result'] is False and image['id'] in \
        v['deploy']['reason'], v
    assert _downloads(glance, image['id']) == 0

    # the same image, the node leased to its project: allowed
    status, body = bs.http(server, 'PATCH', '/v1/nodes/%s' % node, [
        {'op': 'replace', 'path': '/lessee', 'value': theirs}],
        version='1.65')
    assert status == 200, body
    status, v = bs.http(server, 'GET', '/v1/nodes/%s/validate' % node)
    assert v['deploy']['result'] is True, v


@pytest.mark.parametrize('source', ['9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
                                    'glance://not-a-uuid'])
def test_an_unknown_image_is_refused(server, source):
    node = _available(server, image_source=source)
    body = _provision(server, node, 'active', status=400)
    assert 'no such image' in body['error_message'] or \
        'UUID' in body['error_message'], body
    assert bs.node(server, node)['provision_state'] == 'available'


def test_an_image_whose_data_does_not_match_glance_fails_the_deploy(
        server, glance, agent):
    data = _data(b'tampered in the store ')
    image = glance.create_image(data, visibility='public')
    with open(glance.stored_file(image['id']), 'r+b') as f:
        f.write(b'EVIL')                 # same size, other bytes
    node = _available(server, image_source=image['id'])
    _provision(server, node, 'active')
    bs.wait(server, node, lambda n: n['provision_state'] == 'wait call-back')
    bs.agent_checks_in(server, node, agent)
    got = _ended(server, node, 'deploy failed')
    assert 'checksum' in got['last_error'] and image['id'] in \
        got['last_error'], got['last_error']
    assert image['os_hash_value'] in got['last_error']
    assert not [r for r in agent.received
                if r['name'] == 'standby.prepare_image']
    assert not [n for n in os.listdir(_cache(server)) if image['id'] in n]
    _undeploy(server, node)


def test_a_changed_cached_copy_is_fetched_again(server, glance, agent):
    data = _data(b'cached then changed ')
    image = glance.create_image(data, visibility='public')
    node = _available(server, image_source=image['id'])
    _deploy(server, agent, node)
    _undeploy(server, node, image['id'])
    cached = os.path.join(_cache(server), 'glance-%s' % image['id'])
    st = os.stat(cached)
    with open(cached, 'r+b') as f:
        f.write(b'EVIL')
    os.utime(cached, ns=(st.st_atime_ns, st.st_mtime_ns))
    agent.received.clear()
    agent.polls_until_done = 10 ** 6
    _, served = _deploy(server, agent, node)
    assert served == data
    assert _downloads(glance, image['id']) == 2
    _undeploy(server, node)


def test_the_cache_evicts_the_least_recently_used_image(server, glance,
                                                        agent):
    first = glance.create_image(_data(b'first '), visibility='public')
    second = glance.create_image(_data(b'second '), visibility='public')
    node = _available(server, image_source=first['id'])
    _deploy(server, agent, node)
    _undeploy(server, node, second['id'])
    cache = _cache(server)
    assert os.path.exists(os.path.join(cache, 'glance-' + first['id']))
    agent.received.clear()
    agent.polls_until_done = 10 ** 6
    _deploy(server, agent, node)
    # 1 MiB of cache, 0.6 MiB images: the older one is gone
    names = os.listdir(cache)
    assert 'glance-' + second['id'] in names
    assert not [n for n in names if first['id'] in n], names
    _undeploy(server, node)


def _refused_by(tmp_path, glance_conf: dict, words: list[str]):
    """A server with ``glance_conf`` as [glance] refuses a deploy of a
    Glance image with 400 naming ``words``; the node stays available."""
    conf = processes.base_conf(
        tmp_path, conductor={'automated_clean': 'false'},
        glance=glance_conf)
    conf['DEFAULT'].update({'enabled_deploy_interfaces': ['fake', 'direct'],
                            'enabled_boot_interfaces': ['fake']})
    svc = processes.Service('baremetal-server', tmp_path, 'server', conf,
                            port=processes.free_port())
    svc.start()
    try:
        node = _available(svc, image_source=glance_service.UNUSED_UUID)
        body = _provision(svc, node, 'active', status=400)
        msg = body['error_message']
        assert 'Image service (Glance) could not be asked' in msg, msg
        for word in words:
            assert word in msg, msg
        assert bs.node(svc, node)['provision_state'] == 'available'
    finally:
        assert svc.stop() == 0, svc.log()


def test_glance_unreachable_refuses_the_deploy_with_400(tmp_path):
    """[glance] pointing at a port nobody listens on (auth_type none,
    endpoint_override): refused, naming where Glance was looked for."""
    dead = 'http://127.0.0.1:%d' % processes.free_port()
    _refused_by(tmp_path, {'auth_type': 'none', 'endpoint_override': dead},
                [dead])


def test_credentials_keystone_refuses_refuse_the_deploy_with_400(
        tmp_path, keystone, glance):
    creds = {k: v for k, v in keystone.authtoken_conf().items() if k in (
        'auth_type', 'auth_url', 'username', 'user_domain_name',
        'project_name', 'project_domain_name')}
    _refused_by(tmp_path, dict(creds, password='wrong'), ['401'])
