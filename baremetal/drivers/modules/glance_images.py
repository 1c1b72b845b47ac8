"""Glance images as instance images: ``instance_info image_source`` is a
Glance image UUID or ``glance://<UUID>``, as Nova sets it.

``describe`` reads the image's record from Glance and refuses what the
node cannot be deployed with: an unknown image, one not active, a disk
or container format the agent cannot write, no hash, or an image the
deploying project may not use.  ``cached`` downloads the image once
into the conductor's image cache ($state_path/images, bounded by
[conductor]image_cache_size), checked against Glance's hash (multihash,
else its md5 ``checksum``) before it is kept; a cached copy is checked
again (size and hash) each time it is handed out, and fetched anew when
it no longer matches.  The agent then downloads it from the conductor
over [deploy]http_url (Ironic's ``image_download_source = http``).

Who may use an image (checked at validation, so at the deploy request):
public and community images anyone; otherwise the image's owner must be
a deploying project, or (shared images) one of its members.  The
deploying projects are the node's lessee and owner, or, for a node with
neither, instance_info ``project_id`` (what Nova sets: only an admin can
write instance_info of a node no project owns), and always the project
of the conductor's own [glance] credentials (as Ironic 39 allows).
"""

import collections.abc
import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
import typing

from oslo_log import log
from oslo_utils import uuidutils

from baremetal.common import exception
from baremetal.drivers.modules import cache_eviction
from baremetal.drivers.modules import glance_client
from baremetal.drivers.modules import image_cache

LOG = log.getLogger(__name__)

PREFIX = 'glance://'
DISK_FORMATS = ('raw', 'qcow2')
HASHES = ('sha256', 'sha512', 'md5')
_CHUNK = 1 << 20
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def is_glance(source) -> bool:
    """Does ``source`` name a Glance image?"""
    if not isinstance(source, str):
        return False
    if source.startswith(PREFIX):
        return True
    return uuidutils.is_uuid_like(source)


def image_id(source: str) -> str:
    found = source[len(PREFIX):] if source.startswith(PREFIX) else source
    if not uuidutils.is_uuid_like(found):
        raise exception.InvalidParameterValue(
            'Image source %r: glance:// must be followed by an image '
            'UUID' % source)
    return found.lower()


def deploying_projects(node) -> set[str]:
    """The projects a deploy of ``node`` is made for."""
    projects = {p for p in (node.lessee, node.owner) if p}
    if not projects:
        project = (node.instance_info or {}).get('project_id')
        if isinstance(project, str) and project:
            projects.add(project)
    return projects


def describe(conf, node) -> dict:
    """Glance's record of the node's image, checked: it can be deployed
    on this node.  Raises GlanceImageUnusable or GlanceUnavailable."""
    source = (node.instance_info or {}).get('image_source')
    uuid = image_id(source)
    client = glance_client.get(conf)
    image = client.show(uuid)

    def refuse(reason: str) -> typing.NoReturn:
        raise exception.GlanceImageUnusable(
            image=uuid, reason='%s (node %s)' % (reason, node.uuid))

    if image.get('status') != 'active':
        refuse('its status is %r, not active' % image.get('status'))
    _check_access(client, node, image, refuse)
    if image.get('disk_format') not in DISK_FORMATS:
        refuse('its disk_format is %r; the agent writes %s images'
               % (image.get('disk_format'), ' or '.join(DISK_FORMATS)))
    if image.get('container_format') not in (None, 'bare'):
        refuse('its container_format is %r, not bare'
               % image.get('container_format'))
    if not isinstance(image.get('size'), int):
        refuse('Glance tells no size of it')
    algo, value = expected_hash(image)
    if not value:
        refuse('Glance holds no hash of it (os_hash_algo/os_hash_value '
               'or checksum)')
    if algo not in HASHES:
        refuse('its os_hash_algo %r is not one of %s'
               % (algo, ', '.join(HASHES)))
    return image


def _check_access(client, node, image: dict,
                  refuse: collections.abc.Callable[[str], typing.NoReturn]
                  ) -> None:
    visibility = image.get('visibility')
    if visibility in ('public', 'community'):
        return
    projects = deploying_projects(node)
    own = client.project_id()
    allowed = projects | ({own} if own else set())
    owner = image.get('owner')
    if owner and owner in allowed:
        return
    if visibility == 'shared':
        members = client.members(image['id'])
        if any(m.get('member_id') in allowed and
               m.get('status') != 'rejected' for m in members):
            return
    refuse('it is a %s image of project %s, and the node is deployed '
           'for %s: only public and community images, and images of '
           'the deploying project (the node\'s lessee or owner, else '
           'instance_info project_id) or shared with it, can be used'
           % (visibility, owner,
              ', '.join(sorted(projects)) or 'no project'))


def expected_hash(image: dict) -> tuple[str | None, str | None]:
    """(algorithm, hex digest) Glance vouches for: its multihash, else
    its md5 ``checksum``."""
    algo, value = image.get('os_hash_algo'), image.get('os_hash_value')
    if algo and value:
        return str(algo).lower(), str(value).lower()
    if image.get('checksum'):
        return 'md5', str(image['checksum']).lower()
    return None, None


def instance_info_fields(image: dict) -> dict:
    """What Ironic records in instance_info of a Glance image."""
    algo, value = expected_hash(image)
    return {'image_disk_format': image.get('disk_format'),
            'image_container_format': image.get('container_format'),
            'image_os_hash_algo': algo, 'image_os_hash_value': value,
            'image_checksum': image.get('checksum'),
            'image_size': image.get('size')}


def _lock(key: str) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(key, threading.Lock())


@contextlib.contextmanager
def cached(conf, image: dict) -> collections.abc.Iterator[str]:
    """The path of a checked copy of ``image`` in the image cache,
    downloaded from Glance unless a copy matching Glance's hash is
    there; not evicted while the block runs (publish it inside)."""
    uuid = image['id']
    directory = image_cache.cache_dir(conf)
    target = os.path.join(directory, 'glance-%s' % uuid)
    with cache_eviction.pinned(target):
        with _lock(target):
            if not _cached_copy_matches(target, image):
                _download(conf, image, target)
            cache_eviction.touch(target)
        try:
            yield target
        finally:
            cache_eviction.evict(directory, image_cache.limit(conf))


def _cached_copy_matches(target: str, image: dict) -> bool:
    """Is there a copy of ``image`` at ``target`` whose size and hash
    are Glance's?  A copy that is not is removed."""
    if not os.path.exists(target):
        return False
    meta = image_cache.read_meta(target)
    algo, value = expected_hash(image)
    size = os.path.getsize(target)
    if meta == _meta(image) and size == image['size'] and \
            image_cache.digest(target, algo) == value:
        return True
    LOG.warning('Cached copy of Glance image %s no longer matches '
                'Glance (size %d, expected %d, or its %s hash): fetched '
                'again', image['id'], size, image['size'], algo)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    return False


def _meta(image: dict) -> dict:
    algo, value = expected_hash(image)
    return {'id': image['id'], 'size': image['size'], 'algo': algo,
            'hash': value}


def _download(conf, image: dict, target: str) -> None:
    """Glance's data into ``target``, replaced only once its size and
    hash match."""
    uuid = image['id']
    algo, value = expected_hash(image)
    hasher = hashlib.new(algo)
    limit = conf.image_download_timeout
    deadline = time.monotonic() + limit
    started = time.monotonic()
    resp = glance_client.get(conf).data(uuid)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target))
    size = 0
    try:
        with resp, os.fdopen(fd, 'wb') as f:
            for chunk in resp.iter_content(_CHUNK):
                f.write(chunk)
                hasher.update(chunk)
                size += len(chunk)
                if time.monotonic() > deadline:
                    raise exception.ImageDownloadFailed(
                        url='Glance image %s' % uuid,
                        reason='not complete after %d seconds ([DEFAULT]'
                        'image_download_timeout; %d bytes arrived)'
                        % (limit, size))
        if size != image['size']:
            raise exception.ImageDownloadFailed(
                url='Glance image %s' % uuid, reason='%d bytes arrived, '
                'Glance says it has %d' % (size, image['size']))
        if hasher.hexdigest() != value:
            raise exception.ImageChecksumError(
                url='Glance image %s' % uuid, algo=algo, expected=value,
                actual=hasher.hexdigest())
        os.replace(tmp, target)
        with open(target + '.json', 'w') as f:
            json.dump(_meta(image), f)
    except exception.ImageDownloadFailed:
        os.unlink(tmp)
        raise
    except Exception as e:
        os.unlink(tmp)
        raise exception.ImageDownloadFailed(
            url='Glance image %s' % uuid,
            reason=str(e)[:300] or type(e).__name__) from None
    LOG.info('Fetched Glance image %s (%d bytes, %s checked) in %.1f s',
             uuid, size, algo, time.monotonic() - started)
