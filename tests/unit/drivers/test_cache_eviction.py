"""Bounded caches: least recently used entries go first, entries in use
(pinned, or published as a hard link) stay, metadata goes with its
entry, downloads in progress are left alone."""

import os
import time

from baremetal.drivers.modules import cache_eviction

MiB = 1 << 20


def _entry(directory, name, size, used_at):
    path = os.path.join(directory, name)
    with open(path, 'wb') as f:
        f.write(b'x' * size)
    with open(path + '.json', 'w') as f:
        f.write('{}')
    os.utime(path, (used_at, used_at))
    return path


def test_least_recently_used_entries_go_first(tmp_path):
    now = time.time()
    a = _entry(tmp_path, 'a', MiB, now - 300)
    _entry(tmp_path, 'b', MiB, now - 100)
    c = _entry(tmp_path, 'c', MiB, now - 200)
    removed = cache_eviction.evict(str(tmp_path), 2 * MiB)
    assert removed == [a]
    removed = cache_eviction.evict(str(tmp_path), MiB)
    assert removed == [c]
    assert sorted(os.listdir(tmp_path)) == ['b', 'b.json']


def test_touch_makes_an_entry_the_most_recently_used(tmp_path):
    now = time.time()
    a = _entry(tmp_path, 'a', MiB, now - 300)
    b = _entry(tmp_path, 'b', MiB, now - 100)
    mtime = os.stat(a).st_mtime_ns
    cache_eviction.touch(a)
    assert os.stat(a).st_mtime_ns == mtime     # content keys unchanged
    assert cache_eviction.evict(str(tmp_path), MiB) == [b]


def test_nothing_goes_under_the_limit(tmp_path):
    _entry(tmp_path, 'a', MiB, time.time())
    assert cache_eviction.evict(str(tmp_path), MiB) == []
    assert cache_eviction.evict(str(tmp_path), 2 * MiB) == []


def test_a_pinned_entry_stays_and_the_next_one_goes(tmp_path):
    now = time.time()
    a = _entry(tmp_path, 'a', MiB, now - 300)
    b = _entry(tmp_path, 'b', MiB, now - 200)
    c = _entry(tmp_path, 'c', MiB, now - 100)
    with cache_eviction.pinned(a):
        assert cache_eviction.evict(str(tmp_path), 2 * MiB) == [b]
        # over the limit with only a pinned entry and the newest left:
        # the newest goes, the pinned one stays
        assert cache_eviction.evict(str(tmp_path), 0) == [c]
    assert os.path.exists(a)
    assert cache_eviction.evict(str(tmp_path), 0) == [a]


def test_pins_nest(tmp_path):
    a = _entry(tmp_path, 'a', MiB, time.time())
    with cache_eviction.pinned(a):
        with cache_eviction.pinned(a):
            pass
        assert cache_eviction.is_pinned(a)
        assert cache_eviction.evict(str(tmp_path), 0) == []
    assert not cache_eviction.is_pinned(a)
    assert cache_eviction.evict(str(tmp_path), 0) == [a]


def test_a_published_entry_stays_until_withdrawn(tmp_path):
    cache = tmp_path / 'cache'
    cache.mkdir()
    a = _entry(cache, 'a', MiB, time.time() - 100)
    published = tmp_path / 'published.img'
    os.link(a, published)           # what http_files.publish does
    assert cache_eviction.in_use(a)
    assert cache_eviction.evict(str(cache), 0) == []
    os.unlink(published)            # the deploy withdrew it
    assert cache_eviction.evict(str(cache), 0) == [a]
    assert os.listdir(cache) == []


def test_downloads_in_progress_are_neither_counted_nor_removed(tmp_path):
    a = _entry(tmp_path, 'a', MiB, time.time())
    tmp = tmp_path / 'tmpk2j3h4'
    tmp.write_bytes(b'y' * (5 * MiB))
    assert cache_eviction.evict(str(tmp_path), MiB) == []
    assert tmp.exists() and os.path.exists(a)


def test_a_temporary_file_left_for_a_day_is_removed(tmp_path):
    old = tmp_path / 'tmpold'
    old.write_bytes(b'y')
    day_ago = time.time() - cache_eviction.STALE_TMP - 60
    os.utime(old, (day_ago, day_ago))
    fresh = tmp_path / 'tmpfresh'
    fresh.write_bytes(b'y')
    cache_eviction.evict(str(tmp_path), 0)
    assert not old.exists() and fresh.exists()


def test_a_missing_directory_is_an_empty_cache(tmp_path):
    assert cache_eviction.evict(str(tmp_path / 'none'), 0) == []
