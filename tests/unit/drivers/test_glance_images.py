"""Glance images, conductor side, against a stand-in for the Glance
client: which images a deploy may use, the download checked against
Glance's hash, the cached copy re-checked before it is served."""

import hashlib
import os
import types

import pytest

from baremetal.common import exception
from baremetal.drivers.modules import glance_client
from baremetal.drivers.modules import glance_images

UUID = '4a9bd2b7-8a4e-4c0f-9f27-0e8c2f1d3b11'
DATA = b'disk image ' * 5000


def _image(**fields):
    image = {'id': UUID, 'status': 'active', 'disk_format': 'raw',
             'container_format': 'bare', 'visibility': 'public',
             'owner': 'glance-admins', 'size': len(DATA),
             'checksum': hashlib.md5(DATA).hexdigest(),  # noqa: S324
             'os_hash_algo': 'sha512',
             'os_hash_value': hashlib.sha512(DATA).hexdigest()}
    image.update(fields)
    return image


class _Response:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def iter_content(self, size):
        for i in range(0, len(self.data), size):
            yield self.data[i:i + size]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class FakeGlance:
    def __init__(self, image: dict, data: bytes = DATA,
                 members=(), project=None) -> None:
        self.image = image
        self.stored = data
        self._members = list(members)
        self.project = project
        self.downloads = 0

    def show(self, image_id):
        assert image_id == UUID
        return dict(self.image)

    def members(self, image_id):
        return self._members

    def project_id(self):
        return self.project

    def data(self, image_id):
        self.downloads += 1
        return _Response(self.stored)


@pytest.fixture
def conf(tmp_path):
    return types.SimpleNamespace(
        state_path=str(tmp_path), image_download_timeout=60,
        conductor=types.SimpleNamespace(image_cache_size=1))


def _use(monkeypatch, fake):
    monkeypatch.setattr(glance_client, 'get', lambda conf: fake)


def _node(source=UUID, lessee=None, owner=None, **ii):
    return types.SimpleNamespace(
        uuid='node-1', lessee=lessee, owner=owner,
        instance_info=dict(ii, image_source=source))


@pytest.mark.parametrize('source', [UUID, 'glance://' + UUID,
                                    UUID.upper()])
def test_sources_naming_glance_images(source):
    assert glance_images.is_glance(source)
    assert glance_images.image_id(source) == UUID


@pytest.mark.parametrize('source', ['http://x/disk.img', '/srv/disk.img',
                                    None, 'file:///srv/d.img'])
def test_other_sources_are_not_glance(source):
    assert not glance_images.is_glance(source)


def test_glance_url_without_a_uuid_is_refused():
    with pytest.raises(exception.InvalidParameterValue, match='UUID'):
        glance_images.image_id('glance://not-a-uuid')


@pytest.mark.parametrize('visibility', ['public', 'community'])
def test_public_and_community_images_anyone_may_use(
        monkeypatch, conf, visibility):
    _use(monkeypatch, FakeGlance(_image(visibility=visibility,
                                        owner='other')))
    assert glance_images.describe(conf, _node(lessee='p1'))['id'] == UUID


@pytest.mark.parametrize('node, allowed', [
    (dict(lessee='p1'), True),
    (dict(owner='p1'), True),
    (dict(project_id='p1'), True),           # Nova's, no owner/lessee
    (dict(owner='p2', project_id='p1'), False),   # owners cannot lie
    (dict(lessee='p2'), False),
    ({}, False),
])
def test_a_private_image_only_its_project_may_use(monkeypatch, conf, node,
                                                   allowed):
    _use(monkeypatch, FakeGlance(_image(visibility='private',
                                        owner='p1')))
    n = _node(**node)
    if allowed:
        assert glance_images.describe(conf, n)['id'] == UUID
        return
    with pytest.raises(exception.GlanceImageUnusable) as e:
        glance_images.describe(conf, n)
    assert 'private image of project p1' in str(e.value)
    assert e.value.code == 400


def test_a_private_image_of_the_conductors_project_may_be_used(
        monkeypatch, conf):
    _use(monkeypatch, FakeGlance(_image(visibility='private',
                                        owner='svc'), project='svc'))
    assert glance_images.describe(conf, _node(lessee='p9'))


@pytest.mark.parametrize('status, allowed', [
    ('accepted', True), ('pending', True), ('rejected', False)])
def test_a_shared_image_its_members_may_use(monkeypatch, conf, status,
                                            allowed):
    _use(monkeypatch, FakeGlance(
        _image(visibility='shared', owner='p1'),
        members=[{'member_id': 'p2', 'status': status}]))
    if allowed:
        assert glance_images.describe(conf, _node(lessee='p2'))
    else:
        with pytest.raises(exception.GlanceImageUnusable):
            glance_images.describe(conf, _node(lessee='p2'))


@pytest.mark.parametrize('fields, words', [
    (dict(status='queued'), "status is 'queued'"),
    (dict(disk_format='vmdk'), "disk_format is 'vmdk'"),
    (dict(container_format='ova'), "container_format is 'ova'"),
    (dict(os_hash_algo=None, os_hash_value=None, checksum=None),
     'no hash'),
    (dict(size=None), 'no size'),
])
def test_images_the_agent_cannot_write_are_refused(monkeypatch, conf,
                                                   fields, words):
    _use(monkeypatch, FakeGlance(_image(**fields)))
    with pytest.raises(exception.GlanceImageUnusable, match=words):
        glance_images.describe(conf, _node())


def test_the_image_is_downloaded_once_and_checked(monkeypatch, conf):
    fake = FakeGlance(_image())
    _use(monkeypatch, fake)
    with glance_images.cached(conf, _image()) as path:
        with open(path, 'rb') as f:
            assert f.read() == DATA
    with glance_images.cached(conf, _image()) as again:
        assert again == path
    assert fake.downloads == 1


def test_md5_is_the_fallback_hash(monkeypatch, conf):
    image = _image(os_hash_algo=None, os_hash_value=None)
    fake = FakeGlance(image, data=DATA[:-1] + b'!')
    _use(monkeypatch, fake)
    with pytest.raises(exception.ImageChecksumError, match='md5'):
        with glance_images.cached(conf, image):
            pass


def test_a_download_not_matching_glance_is_never_kept(monkeypatch, conf):
    fake = FakeGlance(_image(), data=DATA[:-1] + b'!')
    _use(monkeypatch, fake)
    with pytest.raises(exception.ImageChecksumError, match='sha512'):
        with glance_images.cached(conf, _image()):
            pass
    assert os.listdir(os.path.join(conf.state_path, 'images')) == []


def test_a_short_download_is_never_kept(monkeypatch, conf):
    fake = FakeGlance(_image(), data=DATA[:100])
    _use(monkeypatch, fake)
    with pytest.raises(exception.ImageDownloadFailed, match='100 bytes'):
        with glance_images.cached(conf, _image()):
            pass
    assert os.listdir(os.path.join(conf.state_path, 'images')) == []


def test_a_tampered_cached_copy_is_fetched_again(monkeypatch, conf):
    fake = FakeGlance(_image())
    _use(monkeypatch, fake)
    with glance_images.cached(conf, _image()) as path:
        pass
    st = os.stat(path)
    with open(path, 'r+b') as f:        # same size, same times
        f.write(b'X')
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with glance_images.cached(conf, _image()) as path:
        with open(path, 'rb') as f:
            assert f.read() == DATA
    assert fake.downloads == 2


def _two_images():
    big = b'a' * (600 * 1024)
    other = '0d7f1c4e-5b6a-4b8e-9a51-3c2d1e0f9a88'
    first = _image(size=len(big),
                   os_hash_value=hashlib.sha512(big).hexdigest())
    return big, first, dict(first, id=other)


def test_the_least_recently_used_image_goes_past_the_cache_size(
        monkeypatch, conf):
    """1 MiB of cache, images of 0.6 MiB: the older one goes."""
    big, first, second = _two_images()
    fake = FakeGlance(first, data=big)
    _use(monkeypatch, fake)
    with glance_images.cached(conf, first) as one:
        pass
    with glance_images.cached(conf, second) as two:
        pass
    assert not os.path.exists(one) and not os.path.exists(one + '.json')
    assert os.path.exists(two)
    with glance_images.cached(conf, first):
        pass
    assert not os.path.exists(two)
    assert fake.downloads == 3


def test_an_image_in_use_is_not_evicted(monkeypatch, conf):
    """The older image is being served: the newer one goes instead."""
    big, first, second = _two_images()
    _use(monkeypatch, FakeGlance(first, data=big))
    with glance_images.cached(conf, first) as one:
        with glance_images.cached(conf, second) as two:
            assert os.path.exists(one) and os.path.exists(two)
        assert os.path.exists(one)
    assert os.path.exists(one) and not os.path.exists(two)


def test_an_image_published_by_a_deploy_is_not_evicted(monkeypatch, conf,
                                                       tmp_path):
    big, first, second = _two_images()
    _use(monkeypatch, FakeGlance(first, data=big))
    served = tmp_path / 'served.img'
    with glance_images.cached(conf, first) as one:
        os.link(one, served)          # http_files.publish
    with glance_images.cached(conf, second) as two:
        pass
    # both in use while the second was fetched: both kept, over the size
    assert os.path.exists(one) and os.path.exists(two)
    os.unlink(served)                 # the deploy withdrew it
    with glance_images.cached(conf, second):
        pass
    assert not os.path.exists(one)
