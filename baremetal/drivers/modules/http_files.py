"""Files the conductor publishes over HTTP ([deploy]http_root at
[deploy]http_url): boot ISOs a BMC inserts as virtual media, later iPXE
scripts and images agents fetch.

With ``[deploy]http_server_enabled`` (the default) the conductor serves
http_root itself: a read-only cheroot server started when the first file
is published, answering GET and HEAD (with Range) for regular files
under http_root and nothing else.  Without it, an operator's own web
server serves http_root at http_url.
"""

import os
import shutil
import threading
import urllib.parse

from oslo_log import log

from baremetal.common import exception
from baremetal.drivers.modules import local_files

LOG = log.getLogger(__name__)

_LOCK = threading.Lock()
_SERVER: dict = {}


def root(conf) -> str:
    path = os.path.expanduser(conf.deploy.http_root.replace(
        '$state_path', conf.state_path))
    os.makedirs(path, exist_ok=True)
    return path


def base_url(conf, external: bool = False) -> str:
    """Where http_root is reached: by agents, or (``external``) by
    BMCs when [deploy]external_http_url says they reach it elsewhere."""
    if external and conf.deploy.external_http_url:
        if conf.deploy.http_server_enabled:
            _ensure_server(conf)
        return conf.deploy.external_http_url.rstrip('/')
    if conf.deploy.http_url:
        if conf.deploy.http_server_enabled:
            _ensure_server(conf)
        return conf.deploy.http_url.rstrip('/')
    if not conf.deploy.http_server_enabled:
        raise exception.InvalidParameterValue(
            'Set [deploy]http_url to where your web server serves '
            '[deploy]http_root (the conductor\'s own file server is off)')
    port = _ensure_server(conf)
    host = conf.deploy.http_server_host
    if ':' in host:
        host = '[%s]' % host
    return 'http://%s:%d' % (host, port)


def publish(conf, src: str, name: str, external: bool = False,
            field: str | None = None) -> str:
    """Make the local file ``src`` available as ``name`` (a relative
    path); its URL (for BMCs with ``external``).  A hard link where
    possible (same file system).  ``src`` is a file of the conductor's
    own (image cache, boot ISOs) unless ``field`` says which field of a
    node named it: such a file must be inside
    [conductor]file_url_allowed_paths, and is checked where it really
    is once opened (local_files.copy)."""
    dest = path_for(conf, name)
    if field is not None:
        local_files.copy(conf, src, field, dest)
        return url_for(conf, name, external)
    tmp = dest + '.tmp%d' % threading.get_ident()
    if os.path.lexists(tmp):
        os.unlink(tmp)      # left by a crash: never copy into a link
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)
    return url_for(conf, name, external)


def unpublish(conf, name: str) -> None:
    try:
        os.unlink(_safe_path(conf, name))
    except FileNotFoundError:
        pass


def path_for(conf, name: str) -> str:
    """Where ``name`` (a relative path) goes under http_root, for a file
    written there directly; its directory exists."""
    dest = _safe_path(conf, name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    return dest


def url_for(conf, name: str, external: bool = False) -> str:
    return '%s/%s' % (base_url(conf, external), urllib.parse.quote(name))


def unpublish_prefix(conf, directory: str, prefix: str) -> None:
    """Withdraw every file in ``directory`` whose name starts with
    ``prefix``."""
    where = _safe_path(conf, directory)
    try:
        names = os.listdir(where)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(prefix):
            unpublish(conf, os.path.join(directory, name))


def _safe_path(conf, name: str) -> str:
    top = root(conf)
    path = os.path.realpath(os.path.join(top, name))
    if not path.startswith(os.path.realpath(top) + os.sep):
        raise exception.InvalidParameterValue(
            'File name %r leaves [deploy]http_root' % name)
    return path


def _ensure_server(conf) -> int:
    with _LOCK:
        key = (conf.deploy.http_server_host, conf.deploy.http_server_port,
               root(conf))
        found = _SERVER.get(key)
        if found is not None:
            return found['port']
        from cheroot import wsgi
        server = wsgi.Server((key[0], key[1]), _app(key[2]),
                             numthreads=4, server_name='baremetal-files')
        server.prepare()
        port = server.bind_addr[1]
        thread = threading.Thread(target=server.serve, daemon=True,
                                  name='http-files')
        thread.start()
        _SERVER[key] = {'port': port, 'server': server}
        LOG.info('Serving %s over HTTP on %s:%d', key[2], key[0], port)
        return port


def stop_servers() -> None:
    with _LOCK:
        for found in _SERVER.values():
            found['server'].stop()
        _SERVER.clear()


def _app(top: str):
    top = os.path.realpath(top)

    def app(environ, start_response):
        method = environ['REQUEST_METHOD']
        if method not in ('GET', 'HEAD'):
            start_response('405 Method Not Allowed', [('Allow', 'GET, HEAD'),
                                                      ('Content-Length', '0')])
            return [b'']
        rel = urllib.parse.unquote(environ.get('PATH_INFO', '')).lstrip('/')
        path = os.path.realpath(os.path.join(top, rel))
        if not path.startswith(top + os.sep) or not os.path.isfile(path):
            start_response('404 Not Found', [('Content-Length', '0')])
            return [b'']
        size = os.path.getsize(path)
        start, end = 0, size - 1
        status = '200 OK'
        rng = environ.get('HTTP_RANGE', '')
        if rng.startswith('bytes=') and ',' not in rng:
            first, _, last = rng[6:].partition('-')
            try:
                if first:
                    start = int(first)
                    end = min(int(last), size - 1) if last else size - 1
                else:
                    start = max(size - int(last), 0)
                if start > end:
                    raise ValueError
                status = '206 Partial Content'
            except ValueError:
                start_response('416 Range Not Satisfiable',
                               [('Content-Range', 'bytes */%d' % size),
                                ('Content-Length', '0')])
                return [b'']
        headers = [('Content-Type', 'application/octet-stream'),
                   ('Content-Length', str(end - start + 1)),
                   ('Accept-Ranges', 'bytes')]
        if status.startswith('206'):
            headers.append(('Content-Range',
                            'bytes %d-%d/%d' % (start, end, size)))
        start_response(status, headers)
        if method == 'HEAD':
            return [b'']
        return _chunks(path, start, end - start + 1)

    return app


def _chunks(path: str, start: int, length: int):
    with open(path, 'rb') as f:
        f.seek(start)
        while length > 0:
            data = f.read(min(length, 1 << 20))
            if not data:
                return
            length -= len(data)
            yield data
