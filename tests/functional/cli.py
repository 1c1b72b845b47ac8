"""python-ironicclient's ``baremetal`` CLI, run in this process.

``ironicclient.shell.main`` is the code behind the ``baremetal`` command;
calling it here costs milliseconds instead of the ~0.7 s interpreter and
import start-up of each ``baremetal`` process, so a test can run a hundred
commands.  The server is a separate process as always.
(test_embedded_lifecycle.py runs the ``baremetal`` executable itself.)
"""

import contextlib
import io
import json
import os
import time
import urllib.request

from ironicclient import shell


class CLI:
    def __init__(self, endpoint: str, version: str = '1.61') -> None:
        self.env = {'OS_ENDPOINT': endpoint, 'OS_AUTH_TYPE': 'none',
                    'OS_BAREMETAL_API_VERSION': version}

    @contextlib.contextmanager
    def _environ(self):
        saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def __call__(self, *args, ok: bool = True):
        """Run ``baremetal ARGS``; with ``ok`` assert success and return
        the output (parsed when ``-f json``), else assert failure and
        return what it printed on stderr."""
        out, err = io.StringIO(), io.StringIO()
        with self._environ(), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                rc = shell.main(['--max-retries', '0', *args])
            except SystemExit as e:  # argparse errors
                rc = e.code
        if ok:
            assert rc == 0, (args, err.getvalue())
            text = out.getvalue()
            return json.loads(text) if '-f' in args and text else text
        assert rc != 0, (args, out.getvalue())
        return err.getvalue()

    def wait(self, node: str, state: str, timeout: float = 30) -> dict:
        """Until the node rests in ``state`` (no target state)."""
        deadline = time.monotonic() + timeout
        while True:
            n = self('node', 'show', node, '-f', 'json')
            if n['provision_state'] == state and \
                    not n['target_provision_state']:
                return n
            assert time.monotonic() < deadline, n
            time.sleep(0.05)

    def wait_state(self, node: str, state: str, timeout: float = 30
                   ) -> dict:
        """Until provision_state is ``state`` (target or not)."""
        deadline = time.monotonic() + timeout
        while True:
            n = self('node', 'show', node, '-f', 'json')
            if n['provision_state'] == state:
                return n
            assert time.monotonic() < deadline, n
            time.sleep(0.05)

    def wait_power(self, node: str, state: str, timeout: float = 60
                   ) -> str:
        """The node's power_state once it is ``state``, or as it is at
        ``timeout``: the CLI's power commands return when the API
        accepts them (202), before the conductor has switched."""
        deadline = time.monotonic() + timeout
        while True:
            got = self('node', 'show', node, '-f', 'json')['power_state']
            if got == state or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    def inspect_in_band(self, node: str, inventory: dict) -> dict:
        """``baremetal node inspect`` on a node with the ``agent``
        inspect interface, then post ``inventory`` as its agent would
        (``/v1/continue_inspection``, API 1.84); the node once it rests
        again."""
        self('node', 'inspect', node)
        self.wait_state(node, 'inspect wait')
        req = urllib.request.Request(
            self.env['OS_ENDPOINT'] + '/v1/continue_inspection',
            data=json.dumps({'inventory': inventory}).encode(),
            headers={'Content-Type': 'application/json',
                     'X-OpenStack-Ironic-API-Version': '1.84'},
            method='POST')
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 202
        return self.wait(node, 'manageable')
