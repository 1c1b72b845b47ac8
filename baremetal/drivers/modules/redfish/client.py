"""Talking to a Redfish BMC with sushy.

One ``sushy.Sushy`` connection per (address, credentials, verify, auth
type) is kept and reused (sessions included), in a small LRU of
``[redfish] connection_cache_size``.  A BMC gets one HTTP request at a
time from this process, whoever asks (a task, the power sync, sensor
data): every connection to one endpoint shares a gate.  Every sushy
error becomes a ``RedfishError``/``RedfishConnectionError`` whose
message says what was asked of which BMC, so it reads well in
``last_error``.
"""

import collections
import contextlib
import dataclasses
import json
import os
import threading
import time
import urllib.parse

from oslo_log import log

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.common import storable
from baremetal.drivers.modules import bmc_gates
from baremetal.drivers.modules import direct_http
from baremetal.drivers.modules import driver_info

LOG = log.getLogger(__name__)

AUTH_TYPES = ('basic', 'session', 'auto')

PROPERTIES = {
    'redfish_address': 'URL of the Redfish service (https:// is assumed '
                       'without a scheme). Required.',
    'redfish_system_id': 'Identity of the ComputerSystem, e.g. '
                         '/redfish/v1/Systems/1. Optional when the '
                         'service manages exactly one system.',
    'redfish_username': 'User name. Optional.',
    'redfish_password': 'Password. Optional; never shown by the API.',
    'redfish_verify_ca': 'true, false or the path of a CA bundle. '
                         'Optional, default true.',
    'redfish_auth_type': 'basic, session or auto. Optional, default '
                         '[redfish]auth_type.',
}


@dataclasses.dataclass(frozen=True)
class Info:
    address: str
    system_id: str | None
    username: str | None
    password: str | None
    verify: bool | str
    auth_type: str

    @property
    def key(self):
        return (self.address, self.username, self.password, self.verify,
                self.auth_type)


def parse(node, conf) -> Info:
    driver_info.required(node, {'redfish_address': ''})
    address = driver_info.string(node, 'redfish_address').strip()
    if '://' not in address:
        address = 'https://' + address
    try:
        parsed = urllib.parse.urlsplit(address)
        parsed.port  # noqa: B018  (raises for a malformed port)
        ok = parsed.scheme in ('http', 'https') and bool(parsed.hostname)
        if ok:
            # a name the resolver could not be asked for (a label longer
            # than 63 characters, an empty one): UnicodeError, a
            # ValueError, where requests would raise it at every call
            parsed.hostname.encode('idna')
    except ValueError:
        ok = False
    if not ok:
        raise exception.InvalidParameterValue(
            'Invalid redfish_address %r in node %s driver_info: it must be '
            'an http(s) URL with a host and an optional port'
            % (address, node.uuid))
    system_id = driver_info.string(node, 'redfish_system_id')
    if system_id and not system_id.startswith('/'):
        system_id = '/redfish/v1/Systems/' + system_id
    return Info(
        address=address.rstrip('/'), system_id=system_id,
        username=driver_info.string(node, 'redfish_username'),
        password=driver_info.string(node, 'redfish_password'),
        verify=driver_info.bool_or_path(node, 'redfish_verify_ca', True),
        auth_type=driver_info.choice(node, 'redfish_auth_type', AUTH_TYPES,
                                     conf.redfish.auth_type))


def endpoint(driver_info: dict) -> tuple | None:
    """The BMC a node's ``redfish_address`` names: ('redfish', scheme,
    host, port), whatever system behind it; None when it is unusable."""
    address = (driver_info or {}).get('redfish_address')
    if not isinstance(address, str) or not address.strip():
        return None
    address = address.strip()
    if '://' not in address:
        address = 'https://' + address
    try:
        u = urllib.parse.urlsplit(address)
        port = u.port or (443 if u.scheme == 'https' else 80)
    except ValueError:
        return None
    if not u.hostname:
        return None
    return ('redfish', u.scheme.lower(), u.hostname.lower(), port)


def _origin(url: str) -> tuple:
    """(host, port) of a URL, as ``endpoint`` reads an address; (None,
    None) for one it cannot read."""
    return (endpoint({'redfish_address': url}) or (None,) * 4)[2:]


def _at_home(session, address: str):
    """Keep ``session``'s requests at the BMC: sushy sends a request to
    whatever absolute URL a resource names, with the BMC's credentials
    (a basic password, a session token), so a BMC could have the
    conductor read any address it reaches and hand it the credentials.
    A URL of another host or port is asked at the BMC's own address
    (the same path: some BMCs name themselves by another name or
    address than the operator's); a redirect to another host is not
    followed (a ``RequestException``: sushy's ConnectionError).  The
    function that makes a URL the BMC's."""
    import requests

    base = urllib.parse.urlsplit(address)
    home = _origin(address)
    told: set = set()      # the other hosts logged (once each)

    def own(url: str) -> str:
        u = urllib.parse.urlsplit(url)
        if not u.netloc or _origin(url) == home:
            return url
        if u.netloc not in told and len(told) < 10:
            told.add(u.netloc)
            LOG.warning('The BMC at %s named %s, on another host; asked '
                        'at its own address instead (logged once a host)',
                        address, storable.bounded(url, 200))
        return urllib.parse.urlunsplit((base.scheme, base.netloc, u.path,
                                        u.query, ''))

    target = session.get_redirect_target

    def redirect_target(response):
        location = target(response)
        if location is not None and _origin(urllib.parse.urljoin(
                response.url, location))[0] != home[0]:
            raise requests.exceptions.RequestException(
                'the BMC at %s redirected to %s, another host: not '
                'followed' % (address, storable.bounded(location, 200)))
        return location

    session.get_redirect_target = redirect_target
    return own


def _gated(session, gate: bmc_gates.Gate, address: str, wait: float,
           attempts: int = 1, interval: float = 0.0) -> None:
    """Make ``session`` take ``gate`` around each request.  sushy's
    retries and pauses run between requests, outside the gate.  A
    request that waits longer than ``wait`` for the BMC to finish
    another fails as a connection error saying so (the power sync backs
    off from the BMC).  Requests stay at the BMC (``_at_home``).

    A write (a reset, a boot device, virtual media, settings) the BMC
    answers 503 is sent again, up to ``attempts`` times in all,
    ``interval`` seconds apart, outside the gate: 503 says the BMC did
    not take the request (busy, starting), so asking again acts once.
    sushy retries reads answered with any 5xx itself, and no write (a
    500 or a gateway's 502/504 may come after the BMC acted)."""
    import requests

    from baremetal.drivers.modules.redfish import lean_get

    send = session.request
    own = _at_home(session, address)

    def once(method, url, *args, **kwargs):
        if not gate.lock.acquire(timeout=wait):
            raise requests.exceptions.RequestException(
                'the BMC at %s is still busy with an earlier request '
                'after %d seconds' % (address, wait))
        try:
            if method in lean_get.METHODS and not args:
                # most of what the conductor sends, without requests'
                # own work (lean_get.py)
                response = lean_get.send(session, url, method, **kwargs)
                if response is not None:
                    return response
            # read here, to direct_http's bound, not by requests whole
            response = send(method, url, *args, **dict(kwargs, stream=True))
            direct_http.read_all(response)
            return response
        finally:
            gate.lock.release()

    def request(method, url, *args, **kwargs):
        url = own(url)
        for attempt in range(1, attempts + 1):
            response = once(method, url, *args, **kwargs)
            if response.status_code != 503 or method == 'GET' or \
                    attempt == attempts:
                return response
            LOG.warning('The BMC at %s answered %s %s with 503 (attempt '
                        '%d of %d); asking again in %s seconds', address,
                        method, storable.bounded(url, 200), attempt,
                        attempts, interval)
            time.sleep(interval)
        raise AssertionError('unreachable')

    session.request = request


_CACHE: collections.OrderedDict = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()
# connections dropped from the cache whose Redfish sessions wait to be
# closed, at most; beyond it a session is left to expire on its BMC
CLOSE_BACKLOG = 1000
_CLOSER = None
_CLOSER_LOCK = threading.Lock()
_EVICTED_WARNED = [-float('inf')]   # when the full cache was last told
EVICTION_WARNING_SECONDS = 600


def _closer():
    global _CLOSER
    with _CLOSER_LOCK:
        if _CLOSER is None:
            import futurist
            import futurist.rejection
            _CLOSER = futurist.ThreadPoolExecutor(
                max_workers=1,
                check_and_reject=futurist.rejection.reject_when_reached(
                    CLOSE_BACKLOG))
        return _CLOSER


class _Auth:
    """A connection's sushy authentication, whose ``close`` (sushy's
    ``Sushy.__del__`` calls it) hands the session's ``DELETE`` to one
    closer thread.  Left to sushy, the garbage collector sends it in
    whatever thread it runs in: a power sync worker, a thread holding a
    node's lock or the conductor's heartbeat, blocked for as long as the
    BMC takes (``connection_attempts`` times ``connection_timeout`` when
    it does not answer)."""

    def __init__(self, auth, address: str) -> None:
        self.auth = auth
        self.address = address
        # False: the BMC refused us or cannot be reached; its session
        # is left to expire there
        self.closing = True

    def __getattr__(self, name):
        return getattr(self.auth, name)

    def close(self) -> None:
        if not self.closing:
            return
        self.closing = False
        import futurist
        try:
            _closer().submit(_close_session, self.auth, self.address)
        except futurist.RejectedSubmission:
            LOG.debug('Redfish session with %s left to expire: %d '
                      'others wait to be closed', self.address,
                      CLOSE_BACKLOG)


def flush_closer(timeout: float = 30.0) -> None:
    """Wait for the sessions handed to the closer so far (tests)."""
    done = threading.Event()
    _closer().submit(done.set)
    done.wait(timeout)


def _close_session(auth, address: str) -> None:
    try:
        auth.close()
    except Exception as e:      # noqa: BLE001 (it expires on the BMC)
        LOG.debug('Redfish session with %s not closed: %s', address, e)


def _connect(info: Info, conf):
    import sushy
    from sushy import auth
    cls = {'basic': auth.BasicAuth, 'session': auth.SessionAuth,
           'auto': auth.SessionOrBasicAuth}[info.auth_type]
    r = conf.redfish
    # sushy tries a request it cannot send ``server_side_retries`` times
    # (3 when given 0) and one answered with a 5xx that many times more;
    # it pauses ``server_side_retries_delay`` seconds between tries (2
    # when given 0, hence the tiny stand-in for "no pause")
    from sushy import connector
    conn = connector.Connector(
        info.address, verify=info.verify,
        server_side_retries=r.connection_attempts,
        server_side_retries_delay=r.connection_retry_interval or 0.001,
        default_request_timeout=r.connection_timeout,
        connect_timeout=min(r.connection_timeout, 10))
    _read_environment_once(conn, info)
    session = getattr(conn, '_session', None)
    if session is not None:
        # one request in flight per BMC: a request waits for one in
        # flight (up to its timeout) and one more for good measure
        _gated(session, bmc_gates.gate(
            endpoint({'redfish_address': info.address}) or info.address),
            info.address, 2.0 * r.connection_timeout,
            attempts=r.connection_attempts,
            interval=r.connection_retry_interval)
    root = sushy.Sushy(
        info.address, connector=conn,
        auth=cls(username=info.username, password=info.password))
    root._auth = _Auth(root._auth, info.address)
    return root, conn


def _read_environment_once(conn, info: Info) -> None:
    """What requests would read from the environment at every request
    (proxies and no_proxy for the BMC's address, a CA bundle named by
    REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE), read once per connection:
    requests' per-request reading (.netrc looked for on disk, the
    environment scanned and matched) was a tenth of the conductor's
    CPU in a power sync of 2,000 BMCs (doc/source/admin/performance.rst).
    The conductor's own .netrc is no longer consulted: the credentials
    are driver_info's."""
    session = getattr(conn, '_session', None)
    if session is None or not hasattr(session, 'trust_env'):
        return
    import requests.utils
    session.proxies.update(requests.utils.get_environ_proxies(info.address))
    if info.verify is True and hasattr(conn, '_verify'):
        # sushy passes its verify with every request, where requests
        # would have put the bundle in place of True
        bundle = os.environ.get('REQUESTS_CA_BUNDLE') or \
            os.environ.get('CURL_CA_BUNDLE')
        if bundle:
            conn._verify = bundle
    session.trust_env = False


def _connected(node, info: Info, conf):
    """The BMC's sushy root and the connector under it."""
    size = conf.redfish.connection_cache_size
    with _CACHE_LOCK:
        pair = _CACHE.get(info.key)
        if pair is not None:
            _CACHE.move_to_end(info.key)
            return pair
    # sushy itself retries [redfish]connection_attempts times
    with errors(node, info, 'connect'):
        pair = _connect(info, conf)
    if size:
        evicted = []
        with _CACHE_LOCK:
            # another thread may have connected meanwhile: keep its
            # connection and close this one
            pair, spare = _CACHE.setdefault(info.key, pair), pair
            while len(_CACHE) > size:
                evicted.append(_CACHE.popitem(last=False)[1])
        if evicted:
            _warn_evicting(size)
        # closed (their sessions' DELETE handed to the closer) outside
        # the cache's lock
        for root, _ in evicted + ([spare] if spare is not pair else []):
            root._auth.close()
    return pair


def _warn_evicting(size: int) -> None:
    now = time.monotonic()
    if now < _EVICTED_WARNED[0] + EVICTION_WARNING_SECONDS:
        return
    _EVICTED_WARNED[0] = now
    LOG.warning('The Redfish connection cache is full (%d connections): '
                'connections to BMCs are being closed and opened again '
                '(each opening reads the service root and may open a '
                'Redfish session). Set [redfish]connection_cache_size '
                'above the number of BMC addresses and credentials this '
                'conductor talks to.', size)


def _connection(node, info: Info, conf):
    return _connected(node, info, conf)[0]


def forget(info: Info, close: bool = True) -> None:
    """Drop the BMC's cached connection; ``close=False`` when the BMC
    cannot be reached or refused the credentials: its session is not
    asked to close (it expires on the BMC)."""
    with _CACHE_LOCK:
        pair = _CACHE.pop(info.key, None)
    if pair is not None:
        if close:
            pair[0]._auth.close()
        else:
            pair[0]._auth.closing = False


def forget_all() -> None:
    """Drop every cached connection, their sessions left to expire on
    the BMCs: for a service configured afresh in the same process (a
    connection keeps the [redfish] options it was made with: attempts,
    timeouts)."""
    with _CACHE_LOCK:
        pairs = list(_CACHE.values())
        _CACHE.clear()
    for pair in pairs:
        pair[0]._auth.closing = False


# what sushy raises reading fields from whatever JSON came: a list, a
# string or an object missing what every Redfish service sends; a number
# Python will not read (ValueError: an integer of more than 4,300
# digits) or convert (OverflowError: int() of Infinity)
ODD_ANSWER = (AttributeError, KeyError, TypeError, ValueError,
              OverflowError)


def linked(system, name: str) -> bool:
    """Whether the System's ``Links`` name ``name`` (``ManagedBy``,
    ``Chassis``: links Redfish makes optional, which sushy reads as an
    error where they are missing)."""
    links = system.json.get('Links')
    return isinstance(links, dict) and bool(links.get(name))


@contextlib.contextmanager
def errors(node, info: Info, what: str):
    """sushy exceptions -> ours, naming the BMC and the request."""
    import sushy.exceptions as sx
    try:
        with metrics.bmc_request('redfish', what):
            yield
    except sx.AccessError as e:
        forget(info, close=False)
        raise exception.RedfishError(
            error='%s: the BMC at %s refused the credentials in '
                  'driver_info (HTTP %s)'
                  % (what, info.address, getattr(e, 'status_code', 401))
        ) from None
    except sx.ConnectionError as e:
        forget(info, close=False)
        raise exception.RedfishConnectionError(
            node=node.uuid, error='%s: cannot reach %s: %s'
            % (what, info.address, _short(e))) from None
    except sx.ServerSideError as e:
        # the BMC is there but failing or busy (5xx after sushy's
        # retries): the power sync backs off from it
        raise exception.RedfishServerError(
            error='%s on %s: %s' % (what, info.address, _short(e))
        ) from None
    except sx.SushyError as e:
        raise exception.RedfishError(
            error='%s on %s: %s' % (what, info.address, _short(e))
        ) from None
    except json.JSONDecodeError as e:
        raise exception.RedfishError(
            error='%s: the BMC at %s answered with something that is not '
                  'JSON (%s)' % (what, info.address, _short(e))) from None
    except RecursionError:
        # Python's JSON parser on an answer nested thousands deep
        raise exception.RedfishError(
            error='%s: the BMC at %s answered with JSON nested too deeply '
                  'to read' % (what, info.address)) from None
    except ODD_ANSWER as e:
        raise exception.RedfishError(
            error='%s: the BMC at %s answered with JSON that is not a '
                  'Redfish resource (%s: %s)'
                  % (what, info.address, type(e).__name__, _short(e))
        ) from None


def _short(e: Exception) -> str:
    return storable.bounded(str(e), 300)


def get_system(node, conf):
    """The sushy System of this node (one GET when the connection is
    cached)."""
    info = parse(node, conf)
    conn = _connection(node, info, conf)
    with errors(node, info, 'get system'):
        if info.system_id:
            return conn.get_system(info.system_id)
        members = conn.get_system_collection().members_identities
        if len(members) != 1:
            raise exception.InvalidParameterValue(
                'The Redfish service at %s manages %d systems; set '
                'redfish_system_id in node %s driver_info to one of: %s'
                % (info.address, len(members), node.uuid,
                   ', '.join(sorted(members))))
        return conn.get_system(members[0])


def system_fields(node, conf, what: str = 'get system') -> dict:
    """The ComputerSystem's own JSON, read with one GET through sushy's
    connector, for what needs only its top-level fields (PowerState,
    Status): building sushy's ComputerSystem parses every field, about
    a quarter of a power-sync read's CPU
    (doc/source/admin/performance.rst)."""
    info = parse(node, conf)
    if not info.system_id:
        return get_system(node, conf).json
    connector = _connected(node, info, conf)[1]
    with errors(node, info, what):
        data = connector.get(path=info.system_id).json()
        if not isinstance(data, dict):
            raise TypeError('%s is not an object' % type(data).__name__)
        return data


RESET_ACTION = '#ComputerSystem.Reset'


def reset_system(node, conf, system: dict, reset_type: str,
                 what: str) -> None:
    """POST the ComputerSystem's Reset action, as sushy's
    ``System.reset_system`` does, from the System's JSON (``system``,
    from system_fields): building sushy's System to find its action cost
    a tenth of the conductor's CPU while a fleet is cleaned and
    deployed (doc/source/admin/performance.rst).  The action's target
    and allowed reset types are the System's (or its
    ``@Redfish.ActionInfo``'s, read when the action points at one); a
    type the BMC does not list is refused before anything is sent."""
    import sushy.exceptions as sx
    info = parse(node, conf)
    connector = _connected(node, info, conf)[1]
    with errors(node, info, what):
        actions = system.get('Actions')
        action = actions.get(RESET_ACTION) if isinstance(
            actions, dict) else None
        target = action.get('target') if isinstance(action, dict) else None
        if not isinstance(target, str) or not target:
            raise sx.MissingActionError(
                action=RESET_ACTION,
                resource=system.get('@odata.id') or info.system_id)
        allowed = _allowed_reset_types(connector, action)
        if allowed and reset_type not in allowed:
            raise sx.InvalidParameterValueError(
                parameter='ResetType', value=reset_type,
                valid_values=', '.join(allowed))
        connector.post(path=target, data={'ResetType': reset_type})


def _allowed_reset_types(connector, action: dict) -> list | None:
    """The reset types the action lists, None when the BMC says not
    (any is tried, as sushy does)."""
    allowed = action.get('ResetType@Redfish.AllowableValues')
    uri = action.get('@Redfish.ActionInfo')
    if not allowed and isinstance(uri, str) and uri:
        import sushy.exceptions as sx
        try:
            doc = connector.get(path=uri).json()
            allowed = next(
                (p.get('AllowableValues') for p in doc.get('Parameters')
                 or () if isinstance(p, dict)
                 and p.get('Name') == 'ResetType'), None)
        except (sx.SushyError, ValueError, AttributeError, TypeError) as e:
            LOG.warning('Could not read the ActionInfo resource at %s: '
                        '%s', uri, _short(e))
            return None
    if not isinstance(allowed, list):
        return None
    return [v for v in allowed if isinstance(v, str)]


class Interface(driver_info.Interface):
    """What every redfish interface shares: its driver_info keys, their
    validation and the node's ComputerSystem."""

    properties = PROPERTIES
    parse = staticmethod(parse)

    def _system(self, task):
        """The node's sushy System; read once in a stretch of reads
        (``task.bmc_reads``)."""
        cache = getattr(task, 'bmc_read_cache', None)
        if cache is None:
            return get_system(task.node, task.conductor.conf)
        system = cache.get('redfish_system')
        if system is None:
            system = cache['redfish_system'] = get_system(
                task.node, task.conductor.conf)
        return system

    def _system_fields(self, task) -> dict:
        """The system's top-level JSON fields; read once in a stretch of
        reads (the power and health reads of a power sync), or taken
        from the System read there."""
        cache = getattr(task, 'bmc_read_cache', None)
        if cache is None:
            return system_fields(task.node, task.conductor.conf)
        data = cache.get('redfish_system_fields')
        if data is None:
            system = cache.get('redfish_system')
            data = cache['redfish_system_fields'] = (
                system.json if system is not None else
                system_fields(task.node, task.conductor.conf))
        return data


@contextlib.contextmanager
def call(node, conf, what: str):
    """For requests after get_system: map their errors."""
    info = parse(node, conf)
    with errors(node, info, what):
        yield


def get_event_service(node, conf):
    """The BMC's sushy EventService (one GET)."""
    info = parse(node, conf)
    conn = _connection(node, info, conf)
    with errors(node, info, 'read the event service'):
        return conn.get_event_service()


def enum_values(values) -> set[str]:
    """Strings of what sushy may give as enums (``EventType.ALERT``)."""
    return {getattr(v, 'value', v) for v in values or ()}


def is_task_monitor(obj) -> bool:
    """Whether a sushy answer is a TaskMonitor (the BMC works on it)."""
    from sushy import taskmonitor
    return isinstance(obj, taskmonitor.TaskMonitor)


def on_reset_apply_time(collection):
    """``OnReset`` when the collection's ``@Redfish.OperationApplyTime``
    support says changes apply only at the next reset (the node must be
    rebooted), else None (the BMC's default, immediate on most)."""
    import sushy
    support = getattr(collection, 'operation_apply_time_support', None)
    values = getattr(support, 'mapped_supported_values', None) or ()
    if sushy.APPLY_TIME_IMMEDIATE in values or \
            sushy.APPLY_TIME_ON_RESET not in values:
        return None
    return sushy.APPLY_TIME_ON_RESET


_FAILED_TASK_STATES = ('Exception', 'Killed', 'Cancelled', 'Interrupted')


def task_outcome(node, conf, uri: str) -> str | None:
    """None while the BMC's task at ``uri`` (a task monitor or a Task)
    runs; ``''`` once it completed; the BMC's reason when it failed.
    RedfishTaskGone where the BMC answers that it has no such task."""
    import sushy.exceptions as sx
    info = parse(node, conf)
    conn = _connection(node, info, conf)
    what = 'read task %s' % storable.bounded(uri, 200)
    with errors(node, info, what):
        try:
            monitor = conn.get_task_monitor(uri)
        except sx.ResourceNotFoundError:
            raise exception.RedfishTaskGone(
                error='%s: the BMC at %s has no such task (HTTP 404)'
                % (what, info.address)) from None
        if monitor.is_processing:
            return None
        response = monitor.response
        doc = {}
        if response is not None and response.content:
            try:
                doc = response.json()
            except ValueError:
                doc = {}
    if not isinstance(doc, dict):
        return ''
    state = doc.get('TaskState')
    if state in ('New', 'Starting', 'Running', 'Pending', 'Suspended',
                 'Stopping'):
        return None
    status = doc.get('TaskStatus')
    if state in _FAILED_TASK_STATES or status == 'Critical':
        # what the BMC says, in part (texts, or what else it sent)
        listed = doc.get('Messages')
        messages = [storable.bounded(str(m['Message']), 300)
                    for m in listed if isinstance(m, dict) and
                    m.get('Message')] if isinstance(listed, list) else []
        return storable.bounded('; '.join(messages), 1000) or \
            'task %s ended in state %s, status %s' % (
                storable.bounded(uri, 200), storable.bounded(str(state), 40),
                storable.bounded(str(status), 40))
    return ''


def simple_update(node, conf, url: str) -> str:
    """``UpdateService.SimpleUpdate`` of the firmware at ``url``; the URI
    of the task monitor the BMC answers.  The node's system is named as
    the target when the BMC manages several (as Ironic does)."""
    import sushy
    info = parse(node, conf)
    conn = _connection(node, info, conf)
    with errors(node, info, 'update firmware from %s' % url):
        service = conn.get_update_service()
        actions = service.json.get('Actions')
        action = actions.get('#UpdateService.SimpleUpdate') \
            if isinstance(actions, dict) else None
        if not isinstance(action, dict) or \
                not isinstance(action.get('target'), str):
            # (sushy's own error for it is a KeyError)
            raise exception.RedfishError(
                error='update firmware from %s: the UpdateService of the '
                      'BMC at %s offers no SimpleUpdate action' % (
                          url, info.address))
        many = len(conn.get_system_collection().members_identities) > 1
        targets = [info.system_id] if many and info.system_id else None
        protocol = sushy.UpdateTransferProtocolType(
            'HTTPS' if url.lower().startswith('https:') else 'HTTP')
        monitor = service.simple_update(url, targets=targets,
                                        transfer_protocol=protocol)
    return monitor_uri(node, conf, monitor, 'update firmware from %s' % url)


# a task monitor's URI, kept in driver_internal_info while its task runs
MAX_MONITOR_URI = 2000


def monitor_uri(node, conf, monitor, what: str) -> str:
    """The URI of the task monitor the BMC answered ``what`` with, to be
    polled and kept with the node: a path or URL of printable characters
    without spaces, of at most MAX_MONITOR_URI (RedfishError naming the
    BMC otherwise)."""
    uri = monitor.task_monitor_uri
    if isinstance(uri, str) and 0 < len(uri) <= MAX_MONITOR_URI and \
            uri.isprintable() and not any(c.isspace() for c in uri):
        return uri
    raise exception.RedfishError(
        error='%s: the BMC at %s answered with a task monitor that is no '
              'URL (%s)' % (what, parse(node, conf).address,
                            storable.bounded(repr(uri), 100)))
