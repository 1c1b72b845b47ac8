"""Images the conductor itself needs (ramdisk kernels and initramfs for
boot ISOs): fetched once into ``$state_path/images`` and reused.

A source is an http(s) URL, a ``file://`` URL or an absolute path.  A
local file must be inside ``[conductor]file_url_allowed_paths``
(local_files.py): it is checked when a node is validated and again when
it is fetched, and the cache then holds a hard link to (or a copy of)
the very file checked, so what is built or published later is always
the conductor's own copy.  An http(s) image is fetched again only when
the server says it changed (ETag / Last-Modified); a local file when its
size or time changed.  An
optional checksum (``sha256:<hex>``, ``sha512:<hex>``, or the bare hex
digest of either) is verified on every fetch, and a mismatch is an
``ImageChecksumError`` naming both values; a download that does not
match is never kept.

A web server that is silent for ``[DEFAULT]webserver_connection_timeout``
seconds (before answering, or in the middle of the body), or a download
that lasts longer than ``[DEFAULT]image_download_timeout`` in all, fails
with an ``ImageDownloadFailed`` naming the URL and the option.

The cache holds at most ``[conductor]image_cache_size`` MiB: once a
``fetched`` block ends, least recently used files go (cache_eviction.py),
except those in use: fetched in a block still running here, or
published for an agent or a BMC.
"""

import collections.abc
import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
import urllib.parse

import requests
import urllib3

from baremetal.common import exception
from baremetal.common import storable
from baremetal.drivers.modules import cache_eviction
from baremetal.drivers.modules import local_files

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()
_CHUNK = 1 << 20
ALGORITHMS = ('sha256', 'sha512')


def _lock(key: str) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(key, threading.Lock())


def cache_dir(conf) -> str:
    path = os.path.join(os.path.expanduser(conf.state_path), 'images')
    os.makedirs(path, exist_ok=True)
    return path


def local_path(source: str) -> str | None:
    """The file a ``file://`` URL or absolute path names; None for a
    remote source; InvalidParameterValue for anything else."""
    if source.startswith('/'):
        return source
    parsed = urllib.parse.urlsplit(source)
    if parsed.scheme == 'file':
        if parsed.netloc not in ('', 'localhost'):
            raise exception.InvalidParameterValue(
                'Image source %r names host %r: a file:// URL names a '
                'file on the conductor host (file:///path)'
                % (source, parsed.netloc))
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme in ('http', 'https') and parsed.hostname:
        return None
    raise exception.InvalidParameterValue(
        'Image source %r is not an http(s):// or file:// URL or an '
        'absolute path' % source)


def is_local(source) -> bool:
    """Does ``source`` name a file on the conductor host?"""
    if not isinstance(source, str):
        return False
    try:
        return source.startswith('/') or \
            urllib.parse.urlsplit(source).scheme == 'file'
    except ValueError:
        return False


def check_source(conf, source, field: str = 'image source') -> None:
    """Raise InvalidParameterValue for a source that can never work, or
    a local file outside [conductor]file_url_allowed_paths; ``field``
    says where the source was given (e.g. ``driver_info deploy_kernel
    of node <uuid>``)."""
    if not isinstance(source, str) or not source:
        raise exception.InvalidParameterValue(
            'An image source must be a non-empty string, got %r' % source)
    path = local_path(source)
    if path is None:
        return
    local_files.check(conf, path, field)
    if not os.path.isfile(path):
        raise exception.InvalidParameterValue(
            '%s: image file %s does not exist on conductor host'
            % (field, path))


_HEX_LENGTHS = {64: 'sha256', 128: 'sha512'}


def parse_checksum(checksum) -> tuple[str, str] | None:
    """``sha256:<hex>``, ``sha512:<hex>`` or a bare digest of either ->
    (algorithm, lower-case hex); None for no checksum."""
    if not checksum:
        return None
    if not isinstance(checksum, str):
        raise exception.InvalidParameterValue(
            'Checksum %r must be a string' % (checksum,))
    algo, sep, value = checksum.strip().partition(':')
    if not sep:
        algo, value = _HEX_LENGTHS.get(len(algo), ''), algo
    if algo not in ALGORITHMS or not value or any(
            c not in '0123456789abcdefABCDEF' for c in value):
        raise exception.InvalidParameterValue(
            'Checksum %r must be <algorithm>:<hex digest> with algorithm '
            'one of %s, or the bare hex digest' % (checksum,
                                                   ', '.join(ALGORITHMS)))
    return algo, value.lower()


def limit(conf) -> int:
    """Bytes the image cache may hold ([conductor]image_cache_size)."""
    return conf.conductor.image_cache_size * (1 << 20)


@contextlib.contextmanager
def fetched(conf, source: str, checksum: str | None = None,
            field: str = 'image source') -> collections.abc.Iterator[str]:
    """A path in the cache holding the image at ``source``, fetched if
    needed (``field``: where the source was given, for errors about a
    local file); not evicted while the block runs (build from it or
    publish it inside).  When the block ends the cache is cut back to
    [conductor]image_cache_size.  Concurrent fetches of one source wait
    for each other."""
    key = hashlib.sha256(source.encode()).hexdigest()
    target = os.path.join(cache_dir(conf), key)
    with cache_eviction.pinned(target):
        try:
            _fetch(conf, source, parse_checksum(checksum), field, key,
                   target)
            yield target
        finally:
            cache_eviction.evict(cache_dir(conf), limit(conf))


def _fetch(conf, source: str, expected: tuple[str, str] | None,
           field: str, key: str, target: str) -> None:
    path = local_path(source)
    if path is not None:
        check_source(conf, source, field)
        with _lock(key):
            local_files.copy(conf, path, field, target)
            if expected:
                try:
                    _verify(source, target, expected)
                except exception.ImageChecksumError:
                    os.unlink(target)
                    raise
            cache_eviction.touch(target)
        return
    with _lock(key):
        meta = read_meta(target)
        headers = {}
        if meta and os.path.exists(target):
            if meta.get('etag'):
                headers['If-None-Match'] = meta['etag']
            if meta.get('last_modified'):
                headers['If-Modified-Since'] = meta['last_modified']
        try:
            resp = requests.get(source, stream=True, headers=headers,
                                timeout=conf.webserver_connection_timeout)
        except requests.RequestException as e:
            raise exception.ImageDownloadFailed(
                url=source, reason=_reason(conf, e)) from None
        with resp:
            if resp.status_code == 304:
                if expected:
                    _verify(source, target, expected)
            elif resp.status_code != 200:
                raise exception.ImageDownloadFailed(
                    url=source, reason='HTTP %d' % resp.status_code)
            else:
                _download(conf, resp, source, target, expected)
                _write_meta(target, {
                    'source': source, 'etag': resp.headers.get('ETag'),
                    'last_modified': resp.headers.get('Last-Modified')})
        cache_eviction.touch(target)    # recently used: evicted last


def _reason(conf, e: Exception) -> str:
    if isinstance(e, (requests.Timeout, urllib3.exceptions.TimeoutError,
                      TimeoutError)):
        return ('the server sent nothing for %d seconds ([DEFAULT]'
                'webserver_connection_timeout)'
                % conf.webserver_connection_timeout)
    text = str(e) or type(e).__name__
    text = storable.bounded(text, 300)
    if isinstance(e, (urllib3.exceptions.ProtocolError,
                      requests.exceptions.ChunkedEncodingError)):
        return ('the connection broke before the whole image arrived (%s)'
                % text)
    return text


def _download(conf, resp, source: str, target: str,
              expected: tuple[str, str] | None) -> None:
    """The body into ``target`` (atomically), checked against
    ``expected`` before it replaces anything."""
    limit = conf.image_download_timeout
    deadline = time.monotonic() + limit
    hasher = hashlib.new(expected[0]) if expected else None
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target))
    size = 0
    try:
        with os.fdopen(fd, 'wb') as f:
            # read1: at most one read of the socket, so that a server
            # trickling bytes cannot keep one call going past the deadline
            while chunk := resp.raw.read1(_CHUNK, decode_content=True):
                f.write(chunk)
                size += len(chunk)
                if hasher is not None:
                    hasher.update(chunk)
                if time.monotonic() > deadline:
                    raise exception.ImageDownloadFailed(
                        url=source, reason='not complete after %d seconds '
                        '([DEFAULT]image_download_timeout; %d bytes '
                        'arrived)' % (limit, size))
        if hasher is not None and hasher.hexdigest() != expected[1]:
            raise exception.ImageChecksumError(
                url=source, algo=expected[0], expected=expected[1],
                actual=hasher.hexdigest())
        os.replace(tmp, target)
    except (OSError, requests.RequestException,
            urllib3.exceptions.HTTPError) as e:
        os.unlink(tmp)
        raise exception.ImageDownloadFailed(
            url=source, reason=_reason(conf, e)) from None
    except exception.ImageDownloadFailed:
        os.unlink(tmp)
        raise


def digest(path: str, algo: str = 'sha256') -> str:
    h = hashlib.new(algo)
    with open(path, 'rb') as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _verify(source: str, path: str, expected: tuple[str, str]) -> None:
    algo, value = expected
    actual = digest(path, algo)
    if actual != value:
        raise exception.ImageChecksumError(url=source, algo=algo,
                                           expected=value, actual=actual)


def read_meta(target: str) -> dict | None:
    """What was recorded beside a cached file (its ``.json``), or None."""
    try:
        with open(target + '.json') as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_meta(target: str, meta: dict) -> None:
    with open(target + '.json', 'w') as f:
        json.dump(meta, f)


def content_key(path: str) -> str:
    """A cheap identity of a local file's content (size and mtime)."""
    st = os.stat(path)
    return '%s:%d:%d' % (os.path.realpath(path), st.st_size,
                         st.st_mtime_ns)
