"""The conductor's image cache against image servers that misbehave
(tests/bmc/hostile.py): every failure names the URL and why, and
nothing that failed is kept."""

import hashlib
import os

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import conductor as conductor_conf
from baremetal.conf import default as default_conf
from baremetal.drivers.modules import image_cache
from tests.bmc import hostile

# fixed bytes: the parameter ids below hold their checksum, and every
# pytest-xdist worker must collect the same ids
CONTENT = bytes(range(256)) * 800
SHA256 = hashlib.sha256(CONTENT).hexdigest()
SHA512 = hashlib.sha512(CONTENT).hexdigest()


@pytest.fixture
def conf(tmp_path):
    c = cfg.ConfigOpts()
    default_conf.register_opts(c)
    conductor_conf.register_opts(c)
    c([])
    c.set_override('state_path', str(tmp_path))
    c.set_override('file_url_allowed_paths', [str(tmp_path)],
                   group='conductor')
    c.set_override('webserver_connection_timeout', 1)
    c.set_override('image_download_timeout', 2)
    return c


@pytest.fixture
def server():
    srv = hostile.ImageServer(CONTENT)
    yield srv
    srv.stop()


def _cache(conf):
    return sorted(os.listdir(image_cache.cache_dir(conf)))


def _fetch(conf, *args, **kwargs):
    with image_cache.fetched(conf, *args, **kwargs) as path:
        return path


@pytest.mark.parametrize('checksum', [
    'sha256:' + SHA256, 'sha512:' + SHA512.upper(), SHA256, SHA512, None],
    ids=['sha256', 'sha512-upper', 'bare-sha256', 'bare-sha512', 'none'])
def test_a_good_image_is_fetched_and_checked(conf, server, checksum):
    with image_cache.fetched(conf, server.url('k'), checksum) as path:
        with open(path, 'rb') as f:
            assert f.read() == CONTENT


@pytest.mark.parametrize('checksum', [
    'md5:' + 'a' * 32, 'sha256:', 'sha256:xyz', 'abc', 42])
def test_a_malformed_checksum_is_invalid(conf, server, checksum):
    with pytest.raises(exception.InvalidParameterValue):
        _fetch(conf, server.url('k'), checksum)
    assert server.requests == 0


@pytest.mark.parametrize('mode, error, words', [
    ('wrong', exception.ImageChecksumError,
     'does not match: expected sha256 ' + SHA256),
    ('truncate', exception.ImageDownloadFailed,
     'the connection broke before the whole image arrived'),
    ('stall', exception.ImageDownloadFailed,
     'sent nothing for 1 seconds ([DEFAULT]webserver_connection_timeout)'),
    ('hang', exception.ImageDownloadFailed,
     'sent nothing for 1 seconds ([DEFAULT]webserver_connection_timeout)'),
    ('trickle', exception.ImageDownloadFailed,
     'not complete after 2 seconds ([DEFAULT]image_download_timeout'),
], ids=['wrong', 'truncate', 'stall', 'hang', 'trickle'])
def test_a_bad_download_fails_naming_the_url_and_keeps_nothing(
        conf, server, mode, error, words):
    server.mode = mode
    with pytest.raises(error) as e:
        _fetch(conf, server.url('k'), 'sha256:' + SHA256)
    text = str(e.value)
    assert server.url('k') in text and words in text, text
    assert _cache(conf) == []


def test_a_cached_image_is_checked_again_on_every_fetch(conf, server,
                                                        tmp_path):
    path = _fetch(conf, server.url('k'))
    with open(path, 'r+b') as f:          # the cached copy goes bad
        f.write(b'\0' * 16)
    # the server has no ETag: it sends the image again, which is good
    assert _fetch(conf, server.url('k'), SHA256) == path
    local = tmp_path / 'local'
    local.write_bytes(b'other')
    with pytest.raises(exception.ImageChecksumError):
        _fetch(conf, str(local), SHA256)


def _old_entry(conf, name, size, age):
    """A file fetched ``age`` seconds ago, as the cache keeps it."""
    path = os.path.join(image_cache.cache_dir(conf), name)
    with open(path, 'wb') as f:
        f.write(b'x' * size)
    used = os.stat(path).st_mtime - age
    os.utime(path, (used, used))
    return path


def test_a_fetch_evicts_least_recently_used_past_the_cache_size(
        conf, server):
    conf.set_override('image_cache_size', 1, group='conductor')
    oldest = _old_entry(conf, 'oldest', 600 * 1024, 300)
    older = _old_entry(conf, 'older', 600 * 1024, 100)
    with image_cache.fetched(conf, server.url('k')) as path:
        # nothing goes while the image is being used
        assert os.path.exists(oldest) and os.path.exists(older)
    # 1.4 MiB > 1 MiB: the least recently used goes, the image stays
    assert not os.path.exists(oldest)
    assert os.path.exists(older) and os.path.exists(path)
    assert os.path.exists(path + '.json')


def test_images_in_use_are_never_evicted(conf, server, tmp_path):
    conf.set_override('image_cache_size', 0, group='conductor')
    with image_cache.fetched(conf, server.url('kernel')) as kernel:
        with image_cache.fetched(conf, server.url('ramdisk')) as ramdisk:
            pass
        # the ramdisk's block ended: the cache was cut back then, but
        # never by the image just fetched, nor by the kernel whose block
        # still runs
        assert os.path.exists(ramdisk)
        with image_cache.fetched(conf, server.url('iso')) as iso:
            pass
        assert not os.path.exists(ramdisk)
        assert open(kernel, 'rb').read() == CONTENT
        published = tmp_path / 'published'
        os.link(kernel, published)          # as http_files.publish does
    # published for an agent: kept while published
    with image_cache.fetched(conf, server.url('other')) as other:
        pass
    assert os.path.exists(kernel) and not os.path.exists(iso)
    published.unlink()                      # withdrawn: it goes next
    with image_cache.fetched(conf, server.url('other')):
        pass
    assert _cache(conf) == sorted([os.path.basename(other),
                                   os.path.basename(other) + '.json'])


def test_a_failed_fetch_still_bounds_the_cache(conf, server):
    conf.set_override('image_cache_size', 0, group='conductor')
    stale = _old_entry(conf, 'stale', 1024, 100)
    server.mode = 'wrong'
    with pytest.raises(exception.ImageChecksumError):
        _fetch(conf, server.url('k'), 'sha256:' + SHA256)
    assert not os.path.exists(stale)
