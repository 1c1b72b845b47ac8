"""Talking to ironic-python-agent's REST API (``/v1/commands/``).

The agent's URL comes from its heartbeat (``driver_internal_info
['agent_url']``), its TLS CA from ``agent_verify_ca`` (API 1.68), and
every request carries the node's agent token as IPA requires: in the
query string (``?agent_token=``), the only place IPA reads it.  Every
failure becomes an ``AgentError``/``AgentConnectionFailed`` naming the
node, the command and what went wrong.  requests and urllib3 quote the
URL, query included, in their errors, and an agent or a proxy may echo
it in a fault: every text taken from them is masked here
(``secrets.mask_text``: the token, ``agent_token=...``, URL passwords)
before it becomes part of an error.

Commands run synchronously (``wait=true``: listing steps, syncing) or
asynchronously (a step, writing an image): ``start`` returns the
command's record, ``status`` re-reads it until it is no longer RUNNING.

Requests go out through ``http.client`` itself (direct_http.py), each
on a connection of its own, at a fifth of the CPU ``requests`` takes for
the same request; only where the environment names a proxy for the
agent's URL (``http_proxy`` and the like, ``no_proxy`` honoured) do they
go through ``requests``, which uses it.  Either way a redirect is not
followed, credentials are never taken from ``.netrc``, and with
``[agent]verify_ca = True`` the CA bundle is ``REQUESTS_CA_BUNDLE`` or
``CURL_CA_BUNDLE`` when set, as ``requests`` reads them.
"""

import os
import threading
import time
import urllib.parse

import orjson
import requests
from oslo_log import log

from baremetal.common import exception
from baremetal.common import agent_tokens
from baremetal.common import json_depth
from baremetal.common import metrics
from baremetal.common import secrets
from baremetal.common import storable
from baremetal.drivers.modules import direct_http

LOG = log.getLogger(__name__)

RUNNING = 'RUNNING'
SUCCEEDED = 'SUCCEEDED'
FAILED = 'FAILED'

_SESSION = threading.local()


def _session() -> requests.Session:
    s = getattr(_SESSION, 's', None)
    if s is None:
        s = _SESSION.s = requests.Session()
        # what the environment may add is decided here (_proxied,
        # _ca_bundle), the same on both paths
        s.trust_env = False
    return s


_PROXY_VARIABLES = ('http_proxy', 'https_proxy', 'all_proxy',
                    'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY')


def _proxied(url: str) -> dict | None:
    """The proxies the environment names for ``url`` (``no_proxy``
    honoured), as requests picks them; None where it names none."""
    if not any(os.environ.get(v) for v in _PROXY_VARIABLES):
        return None
    proxies = requests.utils.get_environ_proxies(url)
    chosen = requests.utils.select_proxy(url, proxies) if proxies else None
    return {'http': chosen, 'https': chosen} if chosen else None


def _ca_bundle(verify):
    """``verify`` with requests' reading of the environment: True means
    REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE where one is set."""
    if verify is True:
        return (os.environ.get('REQUESTS_CA_BUNDLE') or
                os.environ.get('CURL_CA_BUNDLE') or True)
    return verify


def _strtobool(value: str) -> bool | str:
    low = value.strip().lower()
    if low in ('true', '1', 'yes', 'on'):
        return True
    if low in ('false', '0', 'no', 'off'):
        return False
    return value


class Client:
    """Commands to the agent of one node (build one per use)."""

    def __init__(self, node, conf) -> None:
        self.node = node
        self.conf = conf
        info = node.driver_internal_info
        self.url = (info.get('agent_url') or '').rstrip('/')
        self.token = info.get(agent_tokens.TOKEN_KEY)
        self.ca = info.get('agent_verify_ca')

    def _check(self, command: str) -> None:
        if not self.url:
            raise exception.AgentNotReady(
                node=self.node.uuid,
                reason='no agent_url; the agent has not heartbeated '
                       'since it booted')
        if not self.token:
            raise exception.AgentNotReady(
                node=self.node.uuid,
                reason='no agent token; the agent has not looked the node '
                       'up since it booted')

    def _verify(self):
        if self.ca:
            # a file, one per node, rewritten when the agent sends
            # another CA (its TLS context is kept while the file stays)
            where = os.path.expanduser(self.conf.agent.certificates_path)
            os.makedirs(where, mode=0o700, exist_ok=True)
            path = os.path.join(where, '%s.crt' % self.node.uuid)
            try:
                with open(path) as f:
                    same = f.read() == self.ca
            except OSError:
                same = False
            if not same:
                tmp = path + '.%d' % threading.get_ident()
                with open(tmp, 'w') as f:
                    f.write(self.ca)
                os.replace(tmp, path)
            return path
        return _strtobool(self.conf.agent.verify_ca)

    def _request(self, method: str, path: str, command: str,
                 params: dict | None = None, body: dict | None = None
                 ) -> dict:
        self._check(command)
        with metrics.agent_command(command, method):
            return self._send(method, path, command, params, body)

    def _send(self, method: str, path: str, command: str,
              params: dict | None, body: dict | None) -> dict:
        query = dict(params or {})
        query['agent_token'] = self.token
        url = '%s%s?%s' % (self.url, path, urllib.parse.urlencode(query))
        data = orjson.dumps(body) if body is not None else None
        timeout = self.conf.agent.command_timeout
        attempts = self.conf.agent.max_command_attempts
        for attempt in range(1, attempts + 1):
            try:
                status, content, charset = self._exchange(
                    method, url, data, timeout)
                break
            except (requests.ConnectionError, requests.Timeout) as e:
                if attempt >= attempts:
                    if isinstance(e, requests.ReadTimeout):
                        error = ('no answer within %d seconds ([agent]'
                                 'command_timeout), %d attempt(s)'
                                 % (timeout, attempts))
                    else:
                        # the URL last: the mask of its token runs to
                        # the next delimiter
                        error = '%s (%d attempt(s) of %s %s)' % (
                            _short(_reason(e), self.token), attempts,
                            method, _short(url, self.token))
                    raise exception.AgentConnectionFailed(
                        node=self.node.uuid,
                        url=secrets.mask_text(self.url),
                        command=command, error=error) from None
                LOG.debug('Node %s: agent at %s not reachable for %s '
                          '(attempt %d of %d)', self.node.uuid,
                          secrets.mask_text(self.url), command, attempt,
                          attempts)
            except (requests.RequestException, OSError) as e:
                raise exception.AgentError(
                    node=self.node.uuid, command=command,
                    error=_short(_reason(e), self.token)) from None
        limit = self.conf.api.max_json_body_depth
        try:
            data = (json_depth.loads(content, limit, orjson.loads)
                    if content else {})
        except json_depth.TooDeep as e:
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='the agent answered with %s ([api]'
                      'max_json_body_depth)' % e) from None
        except orjson.JSONDecodeError:
            data = None
        if status >= 300:
            # a redirect too: not followed (nothing the agent says sends
            # the conductor, and the token, elsewhere)
            try:
                text = content.decode(charset or 'utf-8', 'replace')
            except LookupError:     # a charset nobody knows
                text = content.decode('utf-8', 'replace')
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='HTTP %d: %s' % (status,
                                       _fault(data, text, self.token)))
        if not isinstance(data, dict):
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='the agent answered with something that is not a '
                      'JSON object (HTTP %d)' % status)
        return data

    def _exchange(self, method: str, url: str, data: bytes | None,
                  timeout: float) -> tuple[int, bytes, str]:
        """(status, body, charset) of one request to the agent."""
        headers = {'Content-Type': 'application/json',
                   'Accept': 'application/json'}
        verify = _ca_bundle(self._verify())
        proxies = _proxied(url)
        if proxies is None:
            return direct_http.exchange(method, url, headers, data,
                                        verify, timeout)
        resp = _session().request(
            method, url, data=data, headers=headers, timeout=timeout,
            verify=verify, proxies=proxies, allow_redirects=False,
            stream=True)
        direct_http.read_all(resp)
        return resp.status_code, resp.content, resp.encoding or ''

    # ---- commands ----
    def run(self, name: str, params: dict, wait: bool) -> dict:
        """Send command ``name``; its record (``id``, ``command_status``,
        ``command_result``, ``command_error``)."""
        record = self._request(
            'POST', '/v1/commands/', name,
            params={'wait': 'true' if wait else 'false'},
            body={'name': name, 'params': params})
        _check_record(self.node, name, record, self.token)
        return record

    def status(self, command_id: str, name: str) -> dict:
        record = self._request(
            'GET', '/v1/commands/%s' % urllib.parse.quote(command_id, ''),
            name)
        _check_record(self.node, name, record, self.token)
        return record

    def last_command(self, name: str) -> dict | None:
        """The agent's most recent command record (``GET
        /v1/commands/``, IPA's list in the order it ran them), None when
        it ran none this boot.  ``name``: the command it is looked up
        for, for errors."""
        listing = self._request('GET', '/v1/commands/', name)
        records = listing.get('commands')
        if not isinstance(records, list):
            raise exception.AgentError(
                node=self.node.uuid, command=name,
                error='the agent listed its commands without a '
                      '"commands" list')
        if not records:
            return None
        record = records[-1]
        if not isinstance(record, dict):
            raise exception.AgentError(
                node=self.node.uuid, command=name,
                error='the agent listed a command that is not an object')
        _check_record(self.node, name, record, self.token)
        return record

    def run_to_end(self, name: str, params: dict, timeout: float) -> dict:
        """An asynchronous command run to its end, for a step that
        cannot go on without its outcome: sent with ``wait=true`` (the
        agent answers once it ended), then polled if it still runs, for
        up to ``timeout`` seconds; its last record (SUCCEEDED or
        FAILED).  AgentError when it still runs then."""
        record = self.run(name, params, wait=True)
        deadline = time.monotonic() + timeout
        pause = 0.1
        while record['command_status'] == RUNNING:
            if time.monotonic() > deadline:
                raise exception.AgentError(
                    node=self.node.uuid, command=name,
                    error='still running after %d seconds' % timeout)
            time.sleep(pause)
            pause = min(pause * 2,
                        self.conf.agent.command_poll_max_interval)
            record = self.status(record['id'], name)
        return record

    def run_sync(self, name: str, params: dict) -> dict:
        """A command that answers at once; its result, or AgentError."""
        record = self.run(name, params, wait=True)
        if record['command_status'] != SUCCEEDED:
            raise exception.AgentError(
                node=self.node.uuid, command=name,
                error=error_of(record, self.token))
        result = record.get('command_result')
        return result if isinstance(result, dict) else {}


def _check_record(node, name: str, record: dict,
                  token: str | None) -> None:
    if not isinstance(record.get('id'), str) or record.get(
            'command_status') not in (RUNNING, SUCCEEDED, FAILED):
        raise exception.AgentError(
            node=node.uuid, command=name,
            error='the agent answered without a command id or with a '
            'status IPA has not (RUNNING, SUCCEEDED or FAILED): %s'
            % _short(orjson.dumps(record).decode(), token))


def error_of(record: dict, token: str | None = None) -> str:
    """The agent's error of a failed command, as one readable line
    (masked: ``token`` is the node's agent token, when known)."""
    err = record.get('command_error')
    if isinstance(err, dict):
        text = err.get('message') or err.get('details') or \
            err.get('type') or orjson.dumps(err).decode()
        details = err.get('details')
        if details and details != text:
            text = '%s (%s)' % (text, details)
        return _short(str(text), token)
    return _short(str(err or 'the command failed with no error given'),
                  token)


def _fault(data, text: str, token: str | None = None) -> str:
    if isinstance(data, dict):
        for key in ('faultstring', 'message', 'description'):
            if isinstance(data.get(key), str):
                details = data.get('details')
                if key == 'message' and isinstance(details, str) and \
                        details and details != data[key]:
                    # IPA's errors: "Agent is busy", "executing command X"
                    return _short('%s: %s' % (data[key], details), token)
                return _short(data[key], token)
    return _short(text or 'no body', token)


def _reason(e: Exception) -> str:
    """What went wrong, without the exception chain's wrappers (the
    socket's or TLS's own words where there are some)."""
    inner = e.args[0] if e.args and isinstance(e.args[0], Exception) \
        else e
    return str(inner) or type(inner).__name__


def _short(e, token: str | None = None) -> str:
    """``e`` as text for an error message: secrets masked (before it is
    cut, so no half token survives), at most 400 characters."""
    return storable.bounded(secrets.mask_text(str(e), token), 400)
