"""A stand-in for ironic-python-agent's command API, for unit tests of
the conductor's side of the protocol (the VM tests use the real agent).

It speaks IPA's wire format: ``POST /v1/commands/?wait=&agent_token=``
with ``{"name", "params"}``, ``GET /v1/commands/{id}``, ``GET
/v1/commands/`` (``{"commands": [...]}``, in the order they ran); a
command sent while the last one still runs gets IPA's 409 AgentIsBusy
(``refuses_when_busy``; a command runs until polled
``polls_until_done`` times, so set it False for tests that send one
past a command they never poll); records carry
``id``, ``command_name``, ``command_status``, ``command_result``,
``command_error``; a request without the right token gets 401 as IPA
answers.  Behaviour is steered per command name:

* ``steps``: what ``clean.get_clean_steps`` reports;
* ``service_steps``: what ``service.get_service_steps`` reports (one
  de-duplicated list, as IPA's service extension answers);
  ``deploy.get_deploy_steps`` reports none;
* ``polls_until_done``: how many status reads a command stays RUNNING;
* ``fail``: command names that end FAILED (with ``command_error``:
  ``error``);
* ``results``: the ``command_result`` of a step command that ends well,
  by step name (``{'ok': True}`` for the others);
* ``answer``: a raw (status, body) or (status, body, headers) to give
  for every request (garbage, 500s, redirects), or ``None``;
* ``odd_record``: a function of every command record answered (run or
  status), returning the record to send instead (an agent that answers
  what IPA would not), or ``None``;
* ``hang``: when set, every request is read and not answered until
  ``unhang`` or ``stop`` (then the connection is closed); ``hung``
  counts the requests held so far.
"""

import http.server
import itertools
import json
import threading
import urllib.parse

GENERIC_STEPS = [
    {'step': 'erase_devices', 'priority': 10, 'interface': 'deploy',
     'reboot_requested': False, 'abortable': True},
    {'step': 'erase_devices_metadata', 'priority': 99,
     'interface': 'deploy', 'reboot_requested': False,
     'abortable': True},
    {'step': 'burnin_disk', 'priority': 0, 'interface': 'deploy',
     'reboot_requested': False, 'abortable': True,
     'argsinfo': {'runtime': {'description': 'seconds',
                              'required': True}}},
    {'step': 'delete_configuration', 'priority': 0, 'interface': 'raid',
     'reboot_requested': False, 'abortable': True},
    {'step': 'create_configuration', 'priority': 0, 'interface': 'raid',
     'reboot_requested': False, 'abortable': True},
]

SERVICE_STEPS = [
    {'step': 'burnin_cpu', 'priority': 0, 'interface': 'deploy',
     'reboot_requested': False, 'abortable': True},
    {'step': 'delete_configuration', 'priority': 0, 'interface': 'raid',
     'reboot_requested': False, 'abortable': True},
]


class AgentDouble:
    SYNC = frozenset(('standby.sync', 'rescue.finalize_rescue'))
    def __init__(self, token: str | None = None, tls=None) -> None:
        """``tls``: a server-side ssl.SSLContext to answer HTTPS with."""
        self.token = token
        self.steps = [dict(s) for s in GENERIC_STEPS]
        self.service_steps = [dict(s) for s in SERVICE_STEPS]
        self.polls_until_done = 1
        self.fail: set[str] = set()
        self.results: dict[str, dict] = {}
        self.error = {'type': 'CleaningError', 'code': 500,
                      'message': 'Clean step failed',
                      'details': 'the double was told to fail'}
        self.odd_record = None
        self.answer: tuple | None = None
        self.hang = False
        self.hung = 0
        self.refuses_when_busy = True
        self._stopping = threading.Event()
        self.received: list[dict] = []      # every command's name/params
        self.requests: list[str] = []       # every path with its query
        self._records: dict[str, dict] = {}
        self._polls: dict[str, int] = {}
        self._steps_run: dict[str, str | None] = {}
        self._ids = itertools.count(1)
        double = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body, headers=None) -> None:
                data = body if isinstance(body, bytes) else \
                    json.dumps(body).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                query = urllib.parse.parse_qs(
                    urllib.parse.urlsplit(self.path).query)
                double.requests.append(self.path)
                if double.hang:
                    double.hung += 1
                    double._stopping.wait(120)
                    self.close_connection = True
                    return False
                if double.answer is not None:
                    self._send(*double.answer)
                    return False
                if query.get('agent_token', [None])[0] != double.token:
                    self._send(401, {'faultcode': 'Client',
                                     'faultstring': 'Token invalid.'})
                    return False
                return True

            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(length) or b'{}')
                if not self._authorized():
                    return
                busy = double._busy_with()
                if busy:
                    # IPA's AgentIsBusy
                    self._send(409, {
                        'type': 'AgentIsBusy', 'code': 409,
                        'message': 'Agent is busy',
                        'details': 'executing command %s' % busy})
                    return
                self._send(200, double._odd(
                    double._run(body['name'], body['params'])))

            def do_GET(self):
                if not self._authorized():
                    return
                path = urllib.parse.urlsplit(self.path).path
                if path.rstrip('/').endswith('/v1/commands'):
                    self._send(200, {'commands': [
                        double._odd(dict(r))
                        for r in double._records.values()]})
                    return
                cid = path.rsplit('/', 1)[-1]
                if cid not in double._records:
                    self._send(404, {'faultstring': 'no such command'})
                    return
                self._send(200, double._odd(double._status(cid)))

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket,
                                                 server_side=True)
        self.url = '%s://127.0.0.1:%d' % ('https' if tls else 'http',
                                          self.server.server_address[1])
        # a short poll: stop() waits for the loop's next look
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        args=(0.05,), daemon=True)
        self._thread.start()

    def unhang(self) -> None:
        """Let the held requests go (unanswered) and answer again."""
        self.hang = False
        self._stopping.set()

    def stop(self) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def names(self) -> list[str]:
        """Command names received, with the step for step commands."""
        out = []
        for c in self.received:
            step = (c['params'].get('step') or {}).get('step')
            out.append(c['name'] + (':' + step if step else ''))
        return out

    def _busy_with(self) -> str | None:
        """The name of the command still running, when the last one
        does (IPA refuses another then: 409 AgentIsBusy)."""
        if not self.refuses_when_busy or not self._records:
            return None
        last = list(self._records.values())[-1]
        return last['command_name'] \
            if last['command_status'] == 'RUNNING' else None

    def _odd(self, record: dict) -> dict:
        return self.odd_record(record) if self.odd_record else record

    def _run(self, name: str, params: dict) -> dict:
        self.received.append({'name': name, 'params': params})
        cid = str(next(self._ids))
        record = {'id': cid, 'command_name': name,
                  'command_status': 'RUNNING', 'command_result': None,
                  'command_error': None}
        if name == 'clean.get_clean_steps':
            record.update(command_status='SUCCEEDED', command_result={
                'clean_steps': {'GenericHardwareManager': self.steps},
                'hardware_manager_version': {'generic': '1.2'}})
        elif name == 'service.get_service_steps':
            record.update(command_status='SUCCEEDED', command_result={
                'service_steps': self.service_steps,
                'hardware_manager_version': {'generic': '1.2'}})
        elif name == 'deploy.get_deploy_steps':
            record.update(command_status='SUCCEEDED', command_result={
                'deploy_steps': {'GenericHardwareManager': []},
                'hardware_manager_version': {'generic': '1.2'}})
        elif name in self.SYNC:
            record.update(command_status='SUCCEEDED', command_result={})
        self._records[cid] = record
        self._polls[cid] = 0
        self._steps_run[cid] = (params.get('step') or {}).get('step')
        return dict(record)

    def _status(self, cid: str) -> dict:
        record = self._records[cid]
        self._polls[cid] += 1
        if record['command_status'] == 'RUNNING' and \
                self._polls[cid] >= self.polls_until_done:
            if record['command_name'] in self.fail:
                record.update(command_status='FAILED',
                              command_error=self.error)
            else:
                step = self._steps_run.get(cid)
                record.update(command_status='SUCCEEDED',
                              command_result=self.results.get(
                                  step, {'ok': True}))
        return dict(record)
