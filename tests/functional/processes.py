"""Real baremetal processes for functional tests.

``Service`` writes a config file, starts one of the console scripts on a
free loopback port with a private state dir, waits until it answers, and
stops it (SIGTERM, then SIGKILL) at the end.  Its log is shown when a
test fails.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from tests import harness

BIN = os.path.dirname(sys.executable)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def write_conf(path, sections: dict) -> str:
    lines = []
    for section, values in sections.items():
        lines.append('[%s]' % section)
        for k, v in values.items():
            if isinstance(v, (list, tuple)):
                if k.endswith('_override'):
                    lines.extend('%s = %s' % (k, i) for i in v)
                    continue
                v = ','.join(v)
            lines.append('%s = %s' % (k, v))
        lines.append('')
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    return str(path)


def base_conf(tmp, **sections) -> dict:
    conf = {'DEFAULT': dict(harness.FAKE_ONLY, state_path=str(tmp),
                            debug='false'),
            'api': {}, 'database': {},
            # local images: the test's own files only
            'conductor': {'file_url_allowed_paths': [str(tmp)]}}
    for name, values in sections.items():
        conf.setdefault(name, {}).update(values)
    return conf


# the [agent] timeouts of conftest's agent_server (test_agent_faults.py
# times what a silent agent costs with them)
AGENT_COMMAND_TIMEOUT = 3
AGENT_ATTEMPTS = 2


def agent_server_conf(tmp, conductor=None, agent=None, **sections
                      ) -> dict:
    """The conf of a baremetal-server whose agent a test plays (the
    ``direct`` deploy interface with fake power and boot; the agent
    double of tests/agent_double.py answers): quick polls, a minute's
    callback timeouts, no automated cleaning unless a node asks for
    it; ``conductor`` and ``agent`` options on top of those."""
    conf = base_conf(
        tmp,
        conductor=dict({'check_provision_state_interval': 1,
                        'async_step_poll_interval': 1,
                        'automated_clean': 'false',
                        'clean_callback_timeout': 60,
                        'deploy_callback_timeout': 60},
                       **(conductor or {})),
        agent=dict({'command_poll_max_interval': 0.5}, **(agent or {})),
        **sections)
    conf['DEFAULT'].update({
        'enabled_deploy_interfaces': ['fake', 'direct'],
        'enabled_boot_interfaces': ['fake'],
    })
    return conf


class Service:
    def __init__(self, command: str, tmp, name: str, conf: dict,
                 port: int | None = None) -> None:
        self.command = command
        self.name = name
        self.dir = os.path.join(str(tmp), name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port
        if port is not None:
            conf.setdefault('api', {})['port'] = port
        self.conf_file = write_conf(os.path.join(self.dir, 'bm.conf'), conf)
        self.log_file = os.path.join(self.dir, 'log')
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return 'http://127.0.0.1:%d' % self.port

    def start(self, wait: bool = True) -> 'Service':
        log = open(self.log_file, 'ab')
        self.proc = subprocess.Popen(
            [os.path.join(BIN, self.command), '--config-file',
             self.conf_file], stdout=log, stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONWARNINGS='ignore'))
        log.close()
        if wait and self.port:
            self.wait_http()
        return self

    def wait_http(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('%s exited with %s:\n%s' % (
                    self.name, self.proc.returncode, self.log()))
            try:
                urllib.request.urlopen(self.endpoint + '/', timeout=2)
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError('%s did not answer in %ss:\n%s'
                           % (self.name, timeout, self.log()))

    def log(self, tail: int | None = 6000) -> str:
        """The process's log: its last ``tail`` characters, or all of it
        with ``tail=None``."""
        try:
            with open(self.log_file, errors='replace') as f:
                text = f.read()
                return text if tail is None else text[-tail:]
        except OSError:
            return ''

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            if self.command.startswith('baremetal-'):
                # where it was stuck, in the log the failure shows
                self.proc.send_signal(signal.SIGUSR2)
                time.sleep(1)
            self.proc.kill()
            return self.proc.wait(10)

    def kill(self) -> None:
        self.stop(signal.SIGKILL)
