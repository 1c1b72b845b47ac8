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
"""

import os
import threading
import time

import orjson
import requests
from oslo_log import log

from baremetal.common import exception
from baremetal.common import agent_tokens
from baremetal.common import json_depth
from baremetal.common import metrics
from baremetal.common import secrets

LOG = log.getLogger(__name__)

RUNNING = 'RUNNING'
SUCCEEDED = 'SUCCEEDED'
FAILED = 'FAILED'

_SESSION = threading.local()


def _session() -> requests.Session:
    s = getattr(_SESSION, 's', None)
    if s is None:
        s = _SESSION.s = requests.Session()
    return s


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
            # requests wants a file: one per node, rewritten when the
            # agent sends another CA
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
        url = self.url + path
        attempts = self.conf.agent.max_command_attempts
        for attempt in range(1, attempts + 1):
            try:
                resp = _session().request(
                    method, url, params=query,
                    data=orjson.dumps(body) if body is not None else None,
                    headers={'Content-Type': 'application/json'},
                    timeout=self.conf.agent.command_timeout,
                    verify=self._verify())
                break
            except (requests.ConnectionError, requests.Timeout) as e:
                if attempt >= attempts:
                    if isinstance(e, requests.ReadTimeout):
                        error = ('no answer within %d seconds ([agent]'
                                 'command_timeout), %d attempt(s)'
                                 % (self.conf.agent.command_timeout,
                                    attempts))
                    else:
                        error = '%s (%d attempt(s))' % (
                            _short(e, self.token), attempts)
                    raise exception.AgentConnectionFailed(
                        node=self.node.uuid,
                        url=secrets.mask_text(self.url),
                        command=command, error=error) from None
                LOG.debug('Node %s: agent at %s not reachable for %s '
                          '(attempt %d of %d)', self.node.uuid,
                          secrets.mask_text(self.url), command, attempt,
                          attempts)
            except requests.RequestException as e:
                raise exception.AgentError(
                    node=self.node.uuid, command=command,
                    error=_short(e, self.token)) from None
        limit = self.conf.api.max_json_body_depth
        try:
            data = (json_depth.loads(resp.content, limit, orjson.loads)
                    if resp.content else {})
        except json_depth.TooDeep as e:
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='the agent answered with %s ([api]'
                      'max_json_body_depth)' % e) from None
        except orjson.JSONDecodeError:
            data = None
        if resp.status_code >= 400:
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='HTTP %d: %s' % (resp.status_code,
                                       _fault(data, resp.text, self.token)))
        if not isinstance(data, dict):
            raise exception.AgentError(
                node=self.node.uuid, command=command,
                error='the agent answered with something that is not a '
                      'JSON object (HTTP %d)' % resp.status_code)
        return data

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
        record = self._request('GET', '/v1/commands/%s' % command_id, name)
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
            error='the agent answered without a command id or status: %s'
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
                return _short(data[key], token)
    return _short(text or 'no body', token)


def _short(e, token: str | None = None) -> str:
    """``e`` as text for an error message: secrets masked (before it is
    cut, so no half token survives), at most 400 characters."""
    text = secrets.mask_text(str(e), token)
    return text if len(text) < 400 else text[:397] + '...'
