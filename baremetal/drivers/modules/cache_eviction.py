"""Bounded file caches (the image cache, the ISO cache): least recently
used files go first once a cache holds more than its size.

A file's last use is its access time, set explicitly by ``touch`` each
time the cache hands the file out (the modification time, which
content keys read, stays as it is).  A file is never removed while it
is in use:

* ``pinned``: this process is fetching, checking or publishing it;
* it has another hard link: it is published under [deploy]http_root
  for an agent or a BMC (http_files.publish links it there), until the
  deploy or boot that published it withdraws it.

Files beside an entry whose names start with the entry's name and a dot
(``<entry>.json``) are its metadata and go with it.  Temporary files of
a download or build in progress (``tmp*``) are not counted; one left
unchanged for a day (by a conductor that died while writing it) is
removed.
"""

import collections.abc
import contextlib
import os
import threading
import time

from oslo_log import log

LOG = log.getLogger(__name__)

_LOCK = threading.Lock()
_PINS: dict[str, int] = {}


@contextlib.contextmanager
def pinned(path: str) -> collections.abc.Iterator[str]:
    """``path`` is not evicted while the block runs."""
    path = os.path.realpath(path)
    with _LOCK:
        _PINS[path] = _PINS.get(path, 0) + 1
    try:
        yield path
    finally:
        with _LOCK:
            _PINS[path] -= 1
            if not _PINS[path]:
                del _PINS[path]


def is_pinned(path: str) -> bool:
    with _LOCK:
        return os.path.realpath(path) in _PINS


def touch(path: str) -> None:
    """Mark ``path`` used now (its access time)."""
    st = os.stat(path)
    os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))


STALE_TMP = 24 * 3600


def _entries(directory: str) -> list[tuple[float, int, str]]:
    """(last use, size, path) of each cache entry; stale temporary files
    removed on the way."""
    out: list[tuple[float, int, str]] = []
    try:
        names = set(os.listdir(directory))
    except FileNotFoundError:
        return out
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith('tmp'):
            _remove_if_stale(path)
            continue
        if '.' in name and name.rsplit('.', 1)[0] in names:
            continue            # an entry's metadata
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        if os.path.isfile(path):
            out.append((st.st_atime, st.st_size, path))
    return out


def _remove_if_stale(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        if time.time() - os.stat(path).st_mtime > STALE_TMP:
            LOG.info('Removing %s, left by a download or build that '
                     'never ended', path)
            os.unlink(path)


def in_use(path: str) -> bool:
    try:
        return is_pinned(path) or os.stat(path).st_nlink > 1
    except FileNotFoundError:
        return False


def evict(directory: str, limit_bytes: int) -> list[str]:
    """Remove least recently used entries of ``directory`` not in use
    until it holds at most ``limit_bytes``; the paths removed."""
    entries = sorted(_entries(directory))
    total = sum(size for _, size, _ in entries)
    removed: list[str] = []
    for _, size, path in entries:
        if total <= limit_bytes:
            break
        if in_use(path):
            continue
        _remove(path)
        removed.append(path)
        total -= size
    if removed:
        LOG.info('Cache %s: removed %d least recently used file(s) '
                 '(%s); it now holds %d MiB', directory, len(removed),
                 ', '.join(os.path.basename(p) for p in removed),
                 total // (1 << 20))
    if total > limit_bytes:
        LOG.info('Cache %s holds %d MiB, above its %d MiB, in files in '
                 'use; they go once unused', directory,
                 total // (1 << 20), limit_bytes // (1 << 20))
    return removed


def _remove(path: str) -> None:
    directory, name = os.path.split(path)
    for other in os.listdir(directory):
        if other == name or other.startswith(name + '.'):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(directory, other))
