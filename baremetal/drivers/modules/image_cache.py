"""Images the conductor itself needs (ramdisk kernels and initramfs for
boot ISOs): fetched once into ``$state_path/images`` and reused.

A source is an http(s) URL, a ``file://`` URL or an absolute path.  An
http(s) image is fetched again only when the server says it changed
(ETag / Last-Modified); a local file when its size or time changed.  An
optional checksum (``sha256:<hex>``, ``sha512:<hex>``) is verified on
every fetch, and a mismatch is an ``ImageChecksumError`` naming both
values.
"""

import hashlib
import json
import os
import tempfile
import threading
import urllib.parse

import requests

from baremetal.common import exception

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
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme in ('http', 'https') and parsed.hostname:
        return None
    raise exception.InvalidParameterValue(
        'Image source %r is not an http(s):// or file:// URL or an '
        'absolute path' % source)


def check_source(source) -> None:
    """Raise InvalidParameterValue for a source that can never work."""
    if not isinstance(source, str) or not source:
        raise exception.InvalidParameterValue(
            'An image source must be a non-empty string, got %r' % source)
    path = local_path(source)
    if path is not None and not os.path.isfile(path):
        raise exception.InvalidParameterValue(
            'Image file %s does not exist on conductor host' % path)


def _parse_checksum(checksum: str | None) -> tuple[str, str] | None:
    if not checksum:
        return None
    algo, _, value = checksum.partition(':')
    if algo not in ALGORITHMS or not value:
        raise exception.InvalidParameterValue(
            'Checksum %r must be <algorithm>:<hex digest> with algorithm '
            'one of %s' % (checksum, ', '.join(ALGORITHMS)))
    return algo, value.lower()


def fetch(conf, source: str, checksum: str | None = None) -> str:
    """A local path holding the image at ``source``, fetched if needed.
    Concurrent fetches of one source wait for each other."""
    expected = _parse_checksum(checksum)
    path = local_path(source)
    if path is not None:
        check_source(source)
        if expected:
            _verify(source, path, expected)
        return path
    key = hashlib.sha256(source.encode()).hexdigest()
    target = os.path.join(cache_dir(conf), key)
    with _lock(key):
        meta = _read_meta(target)
        headers = {}
        if meta and os.path.exists(target):
            if meta.get('etag'):
                headers['If-None-Match'] = meta['etag']
            if meta.get('last_modified'):
                headers['If-Modified-Since'] = meta['last_modified']
        try:
            resp = requests.get(source, stream=True, headers=headers,
                                timeout=conf.agent.command_timeout)
        except requests.RequestException as e:
            raise exception.ImageDownloadFailed(url=source,
                                                reason=str(e)) from None
        with resp:
            if resp.status_code == 304:
                pass
            elif resp.status_code != 200:
                raise exception.ImageDownloadFailed(
                    url=source, reason='HTTP %d' % resp.status_code)
            else:
                _download(resp, source, target)
                _write_meta(target, {
                    'source': source, 'etag': resp.headers.get('ETag'),
                    'last_modified': resp.headers.get('Last-Modified')})
        if expected:
            _verify(source, target, expected)
    return target


def _download(resp, source: str, target: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, 'wb') as f:
            for chunk in resp.iter_content(_CHUNK):
                f.write(chunk)
        os.replace(tmp, target)
    except (OSError, requests.RequestException) as e:
        os.unlink(tmp)
        raise exception.ImageDownloadFailed(url=source,
                                            reason=str(e)) from None


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


def _read_meta(target: str) -> dict | None:
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
