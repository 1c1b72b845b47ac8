"""Which local files a node may name as an image.

``file://`` URLs and absolute paths are accepted in ``instance_info``
(``image_source``, ``kernel``, ``ramdisk``, ``boot_iso``), in
``driver_info`` (``deploy_kernel``, ``deploy_ramdisk``, ``bootloader``)
and in ``[conductor]deploy_kernel``/``deploy_ramdisk``/``bootloader``.
The conductor serves such a file over HTTP without authentication,
builds it into boot ISOs and hands it to agents, so whoever may set
those fields would otherwise read any file the conductor can read (its
configuration holds the database password).  Only files inside a directory of
``[conductor]file_url_allowed_paths`` are accepted.

``check`` decides on the real path (``..`` and symbolic links
resolved); it runs when a node is validated.  When the file is used,
``copy`` opens it, checks again where the opened file really is, and
links or copies exactly that file: a symbolic link swapped in after
validation cannot redirect it.  System directories and the service's
own configuration and SQLite database are refused even inside a listed
directory.
"""

import contextlib
import os
import shutil
import stat
import threading
import urllib.parse
from collections.abc import Iterator
from typing import BinaryIO

from oslo_config import cfg
from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)

OPTION = '[conductor]file_url_allowed_paths'

# refused even when a listed directory covers them
SYSTEM_PATHS = ('/boot', '/dev', '/etc', '/proc', '/root', '/run', '/sys',
                '/var/lock', '/var/log', '/var/run')


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def _opt(conf, group: str | None, name: str):
    try:
        return getattr(getattr(conf, group) if group else conf, name)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        return None


def _sqlite_file(conf) -> str | None:
    url = _opt(conf, 'database', 'connection')
    if not url:
        state = _opt(conf, None, 'state_path')
        return (os.path.join(os.path.expanduser(state), 'baremetal.sqlite')
                if state else None)
    if url.startswith('sqlite:///'):
        return url[len('sqlite:///'):].split('?', 1)[0] or None
    return None


def _refusal(conf, real: str) -> str | None:
    """Why ``real`` is refused whatever the option lists, or None."""
    for top in SYSTEM_PATHS:
        if _inside(real, top) or _inside(real, os.path.realpath(top)):
            return 'it is in %s, a system directory' % top
    own = [*(_opt(conf, None, 'config_file') or ()),
           *(_opt(conf, None, 'config_dir') or ()),
           _opt(conf, None, 'http_basic_auth_user_file')]
    for path in own:
        if path and _inside(real, os.path.realpath(path)):
            return "it is part of this service's configuration"
    db = _sqlite_file(conf)
    if db:
        db = os.path.realpath(db)
        if real == db or real.startswith(db + '-'):
            return 'it is the database of this service'
    return None


def _check_real(conf, real: str, path: str, field: str) -> None:
    listed = conf.conductor.file_url_allowed_paths
    # relative items stop the conductor at start (check_config)
    allowed = [os.path.realpath(p) for p in listed if os.path.isabs(p)]
    why = _refusal(conf, real)
    if why:
        why += ', never allowed whatever %s lists' % OPTION
    elif not allowed:
        why = 'local files are turned off (%s is empty)' % OPTION
    elif not any(_inside(real, top) for top in allowed):
        why = ('it is not inside a directory of %s (%s) once ".." and '
               'symbolic links are resolved' % (OPTION, ', '.join(listed)))
    else:
        return
    raise exception.InvalidParameterValue(
        '%s %r is not allowed: %s' % (field, path, why))


def check(conf, path: str, field: str) -> str:
    """The real path of local file ``path``, which ``field`` names (e.g.
    ``driver_info deploy_kernel of node <uuid>``); InvalidParameterValue
    saying why, naming ``field`` and the option, unless it is inside a
    directory of [conductor]file_url_allowed_paths and not refused."""
    try:
        real = os.path.realpath(path)
    except (ValueError, OSError):       # an embedded NUL, a loop
        raise exception.InvalidParameterValue(
            '%s %r is not a usable path' % (field, path)) from None
    _check_real(conf, real, path, field)
    return real


def _opened_path(fd: int, real: str, st: os.stat_result) -> str | None:
    """Where the file open as ``fd`` is now: the kernel's view, or
    (without /proc) ``real`` if it still names that file."""
    try:
        where = os.readlink('/proc/self/fd/%d' % fd)
    except OSError:
        where = ''
    if where.startswith('/'):
        return where.removesuffix(' (deleted)')
    try:
        now = os.stat(real)
    except OSError:
        return None
    return real if (now.st_dev, now.st_ino) == (st.st_dev,
                                                st.st_ino) else None


@contextlib.contextmanager
def opened(conf, path: str, field: str
           ) -> Iterator[tuple[BinaryIO, str, os.stat_result]]:
    """(file, real path, stat) of local file ``path`` open for reading:
    checked before it is opened and again on the file it opened."""
    real = check(conf, path, field)
    try:
        # non-blocking: a FIFO put there must not hang the conductor
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise exception.InvalidParameterValue(
            '%s %r cannot be read on the conductor host: %s'
            % (field, path, e.strerror)) from None
    with os.fdopen(fd, 'rb') as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise exception.InvalidParameterValue(
                '%s %r is not a regular file' % (field, path))
        where = _opened_path(fd, real, st)
        if where is None:
            raise exception.InvalidParameterValue(
                '%s %r changed while it was opened; try again'
                % (field, path))
        try:
            _check_real(conf, where, path, field)
        except exception.InvalidParameterValue:
            LOG.warning('%s %r led to %s when opened, outside %s: '
                        'refused', field, path, where, OPTION)
            raise
        yield f, where, st


def _same(dest: str, st: os.stat_result) -> bool:
    """Is ``dest`` already this file (a link), or a copy of it with the
    same size and time?"""
    try:
        d = os.lstat(dest)
    except OSError:
        return False
    return (d.st_dev, d.st_ino) == (st.st_dev, st.st_ino) or (
        stat.S_ISREG(d.st_mode) and d.st_size == st.st_size and
        d.st_mtime_ns == st.st_mtime_ns)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def copy(conf, path: str, field: str, dest: str) -> None:
    """Make ``dest`` the local file ``path`` (see ``opened``): a hard
    link of the very file checked where possible, else a copy of its
    content read from the open file (same modification time).  Nothing
    is done when ``dest`` already is that file."""
    with opened(conf, path, field) as (f, where, st):
        if _same(dest, st):
            return
        tmp = '%s.tmp%d' % (dest, threading.get_ident())
        _remove(tmp)
        try:
            try:
                os.link(where, tmp, follow_symlinks=False)
            except OSError:
                pass        # another file system, or not ours to link
            else:
                linked = os.lstat(tmp)
                if (linked.st_dev, linked.st_ino) == (st.st_dev,
                                                      st.st_ino):
                    os.replace(tmp, dest)
                    return
                os.unlink(tmp)      # the path changed since it was open
            with open(tmp, 'xb') as out:
                shutil.copyfileobj(f, out, 1 << 20)
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.replace(tmp, dest)
        except BaseException:
            _remove(tmp)
            raise


def check_config(conf) -> None:
    """At conductor start: every listed directory is an absolute path
    (ConfigInvalid otherwise); a warning for one that covers the
    service's own state."""
    listed = conf.conductor.file_url_allowed_paths
    relative = [p for p in listed if not os.path.isabs(p)]
    if relative:
        raise exception.ConfigInvalid(
            error_msg='%s must list absolute paths, got %s'
            % (OPTION, ', '.join(repr(p) for p in relative)))
    state = _opt(conf, None, 'state_path')
    state = os.path.realpath(os.path.expanduser(state)) if state else None
    for item in listed:
        real = os.path.realpath(item)
        if state and _inside(state, real):
            LOG.warning('%s lists %s, which holds [DEFAULT]state_path %s: '
                        'whoever may set a node\'s driver_info or '
                        'instance_info can have the conductor publish '
                        'the files there (image cache, boot ISOs, '
                        'certificates); list a directory of images '
                        'instead', OPTION, item, state)
        why = _refusal(conf, real)
        if why:
            LOG.warning('%s lists %s, but %s: files there are refused '
                        'all the same', OPTION, item, why)
    for name in ('deploy_kernel', 'deploy_ramdisk'):
        value = _opt(conf, 'conductor', name) or ''
        url = urllib.parse.urlsplit(value)
        path = (value if value.startswith('/') else
                urllib.parse.unquote(url.path) if url.scheme == 'file'
                else None)
        try:
            if path:
                check(conf, path, '[conductor]%s' % name)
        except exception.InvalidParameterValue as e:
            LOG.warning('%s: nodes without a driver_info %s of their own '
                        'cannot boot the agent', e, name)
