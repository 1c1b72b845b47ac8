"""Local files a node names as images: only inside
[conductor]file_url_allowed_paths, decided where the file really is, at
validation and again on the file opened when it is used."""

import os
import re

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import conductor as conductor_conf
from baremetal.conf import default as default_conf
from baremetal.conf import deploy as deploy_conf
from baremetal.drivers.modules import http_files
from baremetal.drivers.modules import image_cache
from baremetal.drivers.modules import local_files

FIELD = 'driver_info deploy_kernel of node n1'
OPTION = '[conductor]file_url_allowed_paths'
MATCH = re.escape(OPTION)


@pytest.fixture
def conf(tmp_path):
    c = cfg.ConfigOpts()
    default_conf.register_opts(c)
    conductor_conf.register_opts(c)
    deploy_conf.register_opts(c)
    c([])
    c.set_override('state_path', str(tmp_path / 'state'))
    c.set_override('http_server_enabled', False, group='deploy')
    c.set_override('http_url', 'http://192.0.2.1', group='deploy')
    c.set_override('file_url_allowed_paths', [str(tmp_path / 'allowed')],
                   group='conductor')
    return c


@pytest.fixture
def files(tmp_path):
    """allowed/good (allowed), secret (outside)."""
    (tmp_path / 'allowed').mkdir()
    (tmp_path / 'allowed' / 'good').write_bytes(b'kernel')
    (tmp_path / 'secret').write_bytes(b'password=hunter2')
    return tmp_path


def _refused(conf, path, *words):
    with pytest.raises(exception.InvalidParameterValue) as e:
        local_files.check(conf, str(path), FIELD)
    text = str(e.value)
    for word in (FIELD, OPTION) + words:
        assert word in text, text
    return text


def _http_root(conf) -> list[str]:
    root = http_files.root(conf)
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, names in os.walk(root) for f in names)


def test_a_file_inside_an_allowed_directory_is_accepted(conf, files):
    path = files / 'allowed' / 'good'
    assert local_files.check(conf, str(path), FIELD) == str(path)


def test_dot_dot_cannot_leave_the_allowed_directory(conf, files):
    _refused(conf, files / 'allowed' / '..' / 'secret', 'not inside')
    # nor through a file:// URL, its dots percent-encoded
    url = 'file://%s/allowed/%%2e%%2e/secret' % files
    with pytest.raises(exception.InvalidParameterValue, match=MATCH):
        image_cache.check_source(conf, url, FIELD)


def test_a_symlink_out_of_the_allowed_directory_is_refused(conf, files):
    os.symlink(files / 'secret', files / 'allowed' / 'escape')
    _refused(conf, files / 'allowed' / 'escape', 'not inside')
    # a link within the directory is fine
    os.symlink('good', files / 'allowed' / 'alias')
    assert local_files.check(conf, str(files / 'allowed' / 'alias'),
                             FIELD) == str(files / 'allowed' / 'good')


def test_a_hard_link_of_an_allowed_file_stays_allowed(conf, files):
    os.link(files / 'secret', files / 'allowed' / 'hard')
    path = str(files / 'allowed' / 'hard')
    assert local_files.check(conf, path, FIELD) == path


def test_system_paths_are_refused_even_when_listed(conf):
    conf.set_override('file_url_allowed_paths', ['/etc', '/'],
                      group='conductor')
    _refused(conf, '/etc/passwd', '/etc, a system directory')
    _refused(conf, '/proc/self/environ', 'system directory')
    _refused(conf, '/root/.ssh/id_rsa', 'system directory')


def test_the_services_configuration_is_refused_even_when_listed(
        conf, files):
    cfg_file = files / 'allowed' / 'baremetal.conf'
    cfg_file.write_text('[database]\nconnection = mysql://u:pw@db/bm\n')
    c = cfg.ConfigOpts()
    default_conf.register_opts(c)
    conductor_conf.register_opts(c)
    c(['--config-file', str(cfg_file)])
    c.set_override('file_url_allowed_paths', [str(files / 'allowed')],
                   group='conductor')
    _refused(c, cfg_file, "this service's configuration")
    # nor its SQLite database, under a listed state_path
    c.set_override('state_path', str(files / 'allowed'))
    _refused(c, files / 'allowed' / 'baremetal.sqlite-wal',
             'the database of this service')


def test_an_empty_list_allows_no_local_file(conf, files):
    conf.set_override('file_url_allowed_paths', [], group='conductor')
    _refused(conf, files / 'allowed' / 'good', 'turned off')
    with pytest.raises(exception.InvalidParameterValue, match='turned off'):
        with image_cache.fetched(conf, str(files / 'allowed' / 'good'),
                                 field=FIELD):
            pass
    # remote images are not concerned
    image_cache.check_source(conf, 'http://192.0.2.1/k', FIELD)


def test_a_relative_item_refuses_start_naming_it(conf):
    conf.set_override('file_url_allowed_paths', ['/srv/images', 'images'],
                      group='conductor')
    with pytest.raises(exception.ConfigInvalid) as e:
        local_files.check_config(conf)
    assert OPTION in str(e.value) and "'images'" in str(e.value)
    conf.set_override('file_url_allowed_paths', ['/srv/images'],
                      group='conductor')
    local_files.check_config(conf)


def test_a_conductor_ramdisk_outside_the_list_is_reported_at_start(
        conf, files, caplog):
    conf.set_override('deploy_kernel', str(files / 'secret'),
                      group='conductor')
    conf.set_override('deploy_ramdisk', 'file://%s' % (
        files / 'allowed' / 'good'), group='conductor')
    local_files.check_config(conf)
    warned = [r.getMessage() for r in caplog.records
              if r.levelname == 'WARNING']
    assert len(warned) == 1, warned
    assert '[conductor]deploy_kernel' in warned[0] and OPTION in warned[0]


def test_a_file_url_naming_another_host_is_refused(conf, files):
    with pytest.raises(exception.InvalidParameterValue, match='host'):
        image_cache.check_source(conf, 'file://etc/passwd', FIELD)


def test_a_symlink_swapped_in_after_validation_is_not_published(
        conf, files):
    good = files / 'allowed' / 'good'
    image_cache.check_source(conf, str(good), FIELD)    # validation
    good.unlink()
    os.symlink(files / 'secret', good)                  # then the swap
    with pytest.raises(exception.InvalidParameterValue, match=MATCH):
        http_files.publish(conf, str(good), 'ipxe/n1/kernel', field=FIELD)
    with pytest.raises(exception.InvalidParameterValue, match=MATCH):
        with image_cache.fetched(conf, str(good), field=FIELD):
            pass
    assert _http_root(conf) == []
    assert os.listdir(image_cache.cache_dir(conf)) == []


def test_a_swap_between_the_check_and_the_open_is_caught(
        conf, files, monkeypatch):
    """The file opened is checked where it really is: a symlink put in
    place after the path was checked does not redirect the copy."""
    good = files / 'allowed' / 'good'
    check = local_files.check

    def check_then_swap(conf, path, field):
        real = check(conf, path, field)
        good.unlink()
        os.symlink(files / 'secret', good)
        return real
    monkeypatch.setattr(local_files, 'check', check_then_swap)
    with pytest.raises(exception.InvalidParameterValue, match=MATCH):
        http_files.publish(conf, str(good), 'ipxe/n1/kernel', field=FIELD)
    assert _http_root(conf) == []


def test_publishing_links_the_checked_file_or_copies_it(
        conf, files, monkeypatch):
    good = files / 'allowed' / 'good'
    http_files.publish(conf, str(good), 'ipxe/n1/kernel', field=FIELD)
    dest = os.path.join(http_files.root(conf), 'ipxe', 'n1', 'kernel')
    assert os.stat(dest).st_ino == os.stat(good).st_ino
    # across file systems: a copy, read from the file opened, same time
    os.utime(good, ns=(1, 10**18))

    def no_link(*args, **kwargs):
        raise OSError(18, 'Invalid cross-device link')
    monkeypatch.setattr(local_files.os, 'link', no_link)
    http_files.publish(conf, str(good), 'ipxe/n1/initrd', field=FIELD)
    copied = os.path.join(http_files.root(conf), 'ipxe', 'n1', 'initrd')
    assert open(copied, 'rb').read() == b'kernel'
    assert os.stat(copied).st_mtime_ns == 10**18
    assert os.stat(copied).st_ino != os.stat(good).st_ino
    assert _http_root(conf) == ['ipxe/n1/initrd', 'ipxe/n1/kernel']


def test_fetch_keeps_its_own_copy_of_what_it_checked(conf, files):
    good = files / 'allowed' / 'good'
    with image_cache.fetched(conf, 'file://%s' % good,
                             field=FIELD) as path:
        pass
    assert os.path.dirname(path) == image_cache.cache_dir(conf)
    assert open(path, 'rb').read() == b'kernel'
    # what is built or published later reads the cache, not the
    # node's path: a swap after the fetch changes nothing there
    good.unlink()
    os.symlink(files / 'secret', good)
    assert open(path, 'rb').read() == b'kernel'


def test_a_fifo_is_refused_without_blocking(conf, files):
    """(Opening it for reading would wait for a writer for ever.)"""
    fifo = files / 'allowed' / 'fifo'
    os.mkfifo(fifo)
    with pytest.raises(exception.InvalidParameterValue,
                       match='not a regular file'):
        http_files.publish(conf, str(fifo), 'ipxe/n1/kernel', field=FIELD)
    assert _http_root(conf) == []
