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


@pytest.mark.parametrize('checksum', [
    'sha256:' + SHA256, 'sha512:' + SHA512.upper(), SHA256, SHA512, None],
    ids=['sha256', 'sha512-upper', 'bare-sha256', 'bare-sha512', 'none'])
def test_a_good_image_is_fetched_and_checked(conf, server, checksum):
    path = image_cache.fetch(conf, server.url('k'), checksum)
    with open(path, 'rb') as f:
        assert f.read() == CONTENT


@pytest.mark.parametrize('checksum', [
    'md5:' + 'a' * 32, 'sha256:', 'sha256:xyz', 'abc', 42])
def test_a_malformed_checksum_is_invalid(conf, server, checksum):
    with pytest.raises(exception.InvalidParameterValue):
        image_cache.fetch(conf, server.url('k'), checksum)
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
        image_cache.fetch(conf, server.url('k'), 'sha256:' + SHA256)
    text = str(e.value)
    assert server.url('k') in text and words in text, text
    assert _cache(conf) == []


def test_a_cached_image_is_checked_again_on_every_fetch(conf, server,
                                                        tmp_path):
    path = image_cache.fetch(conf, server.url('k'))
    with open(path, 'r+b') as f:          # the cached copy goes bad
        f.write(b'\0' * 16)
    # the server has no ETag: it sends the image again, which is good
    assert image_cache.fetch(conf, server.url('k'), SHA256) == path
    local = tmp_path / 'local'
    local.write_bytes(b'other')
    with pytest.raises(exception.ImageChecksumError):
        image_cache.fetch(conf, str(local), SHA256)
