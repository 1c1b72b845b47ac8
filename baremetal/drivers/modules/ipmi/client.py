"""Talking to one BMC over IPMI with pyghmi.

BMCs are slow and fragile, so every command goes through a per-BMC gate:

* one command at a time per BMC (address, port), whatever node or thread
  asks;
* at least ``[ipmi] min_command_interval`` seconds between two commands;
* retries of failures that may pass (timeouts, a busy BMC) until
  ``[ipmi] command_retry_timeout``; failures that will not pass (wrong
  credentials) fail at once;
* a deadline: pyghmi can wait on a silent BMC for a long time, so the
  command runs in its own thread and the caller gives up at the deadline
  with a clear error.  The BMC stays busy until that thread returns.

Credentials go to pyghmi as bytes: with str, a second session to the same
BMC hangs in pyghmi 1.6.
"""

import dataclasses
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from oslo_log import log

from baremetal.common import exception
from baremetal.common import metrics
from baremetal.drivers.modules import bmc_gates
from baremetal.drivers.modules import driver_info

LOG = log.getLogger(__name__)

PRIV_LEVELS = ('ADMINISTRATOR', 'OPERATOR', 'USER', 'CALLBACK')
_PRIV_NUMBERS = {'CALLBACK': 1, 'USER': 2, 'OPERATOR': 3,
                 'ADMINISTRATOR': 4}

PROPERTIES = {
    'ipmi_address': 'IP address or host name of the BMC. Required.',
    'ipmi_port': 'UDP port of the BMC. Optional, default 623.',
    'ipmi_username': 'User name. Optional (anonymous login).',
    'ipmi_password': 'Password. Optional; never shown by the API.',
    'ipmi_priv_level': 'Privilege level: %s. Optional, default '
                       'ADMINISTRATOR.' % ', '.join(PRIV_LEVELS),
    'ipmi_kg_key': 'BMC key (Kg). Optional; never shown by the API.',
}

# errors that will not go away by asking again
_FATAL = ('incorrect password', 'unauthorized name', 'unauthorized role',
          'invalid role', 'insufficient privilege', 'invalid name',
          'password for', 'username too long')


@dataclasses.dataclass(frozen=True)
class Info:
    address: str
    port: int
    username: bytes
    password: bytes
    priv_level: str
    kg: bytes | None

    @property
    def key(self) -> tuple[str, int]:
        return (self.address, self.port)


def parse(node, conf) -> Info:
    """driver_info -> Info, or a 400-class error naming the bad key."""
    driver_info.required(node, {'ipmi_address': ''})
    address = driver_info.string(node, 'ipmi_address')
    port = driver_info.port(node, 'ipmi_port', 623)
    priv = driver_info.choice(node, 'ipmi_priv_level', PRIV_LEVELS,
                              'ADMINISTRATOR')
    user = driver_info.string(node, 'ipmi_username', '')
    pw = (node.driver_info or {}).get('ipmi_password')
    if pw is None:
        pw = ''
    if not isinstance(pw, (str, int)):
        raise exception.InvalidParameterValue(
            'Invalid ipmi_password in node %s driver_info: it must be a '
            'string' % node.uuid)
    kg = driver_info.string(node, 'ipmi_kg_key', conf.ipmi.kg_key)
    if len(user.encode()) > 16:
        raise exception.InvalidParameterValue(
            'Invalid ipmi_username in node %s driver_info: IPMI user '
            'names have at most 16 bytes' % node.uuid)
    return Info(address=address, port=port, username=user.encode(),
                password=str(pw).encode(), priv_level=priv,
                kg=kg.encode() if kg else None)


def endpoint(driver_info: dict) -> tuple | None:
    """The BMC a node's driver_info names: ('ipmi', address, port)."""
    address = (driver_info or {}).get('ipmi_address')
    if not isinstance(address, str) or not address.strip():
        return None
    try:
        port = int((driver_info or {}).get('ipmi_port') or 623)
    except (TypeError, ValueError):
        return None
    return ('ipmi', address.strip().lower(), port)


def _is_fatal(err: Exception) -> bool:
    text = str(err).lower()
    return any(f in text for f in _FATAL)


class Interface(driver_info.Interface):
    """What every ipmi interface shares: its driver_info keys, their
    validation and the node's BMC."""

    properties = PROPERTIES
    parse = staticmethod(parse)

    def _bmc(self, task) -> 'BMC':
        return BMC(task.node, task.conductor.conf)


class _PollSelect:
    """``select.select`` on ``poll()``, for pyghmi's session module.

    pyghmi's I/O thread waits on its UDP sockets with ``select.select``,
    which refuses a file descriptor numbered 1024 or more: in a conductor
    that has more files open than that when it first talks IPMI,
    pyghmi's thread dies on its first wait and every IPMI command after
    it goes unanswered until its deadline.  ``poll()`` has
    no such limit; the answer is ``select.select``'s."""

    error = select.error

    @staticmethod
    def select(rlist, wlist, xlist, timeout=None):
        poller = select.poll()
        masks: dict[int, int] = {}
        for items, mask in ((rlist, select.POLLIN), (wlist, select.POLLOUT),
                            (xlist, select.POLLPRI)):
            for item in items:
                fd = item if isinstance(item, int) else item.fileno()
                masks[fd] = masks.get(fd, 0) | mask
        for fd, mask in masks.items():
            poller.register(fd, mask)
        events = dict(poller.poll(None if timeout is None
                                  else max(0.0, timeout) * 1000.0))

        def ready(items, mask):
            return [i for i in items if events.get(
                i if isinstance(i, int) else i.fileno(), 0) &
                (mask | select.POLLERR | select.POLLHUP | select.POLLNVAL)]
        return (ready(rlist, select.POLLIN), ready(wlist, select.POLLOUT),
                ready(xlist, select.POLLPRI))


def _recvfrom(sock, size):
    """pyghmi's ``_io_recvfrom`` without switching the socket to
    non-blocking first: the I/O thread reads what has arrived, never
    waiting.

    pyghmi's own sets the shared socket non-blocking and then reads, while
    any thread sending a packet on that socket sets it blocking first: a
    send between the two leaves the I/O thread waiting inside the read,
    for a packet that only the threads it should wake would make
    something send.  Every IPMI session on that socket then waits for
    good (seen in 2 of 15 bursts of 200 logins at once on a lossy
    network; pyghmi puts up to 64 sessions on a socket).  ``MSG_DONTWAIT``
    is this read's alone."""
    try:
        return sock.recvfrom(size, socket.MSG_DONTWAIT)
    except OSError:
        return None


_patched = False


def _pyghmi():
    """pyghmi's command module, its sessions waiting with ``poll()``,
    reading without switching their sockets' mode, under one lock."""
    global _patched
    from pyghmi.ipmi import command
    if not _patched:
        from pyghmi.ipmi.private import session, simplesession
        session.select = simplesession.select = _PollSelect
        # pyghmi guards its keepalive and waiting tables with a lock
        # each and takes them in either order: a thread timing out a
        # request holds the waiting one and wants the keepalive one, a
        # thread sending a login packet the other way round.  Under many
        # threads at once (the power sync of a couple of hundred IPMI
        # nodes) they deadlock, and no IPMI command is answered again.
        # One lock for both cannot be taken in two orders.
        session.WAITING_SESSIONS = session.KEEPALIVE_SESSIONS
        session._io_recvfrom = _recvfrom
        _patched = True
    return command


class BMC:
    """Commands to one node's BMC; each call goes through the gate."""

    def __init__(self, node, conf) -> None:
        self.node = node
        self.conf = conf
        self.info = parse(node, conf)

    def _session(self):
        command = _pyghmi()
        i = self.info
        return command.Command(
            bmc=i.address, userid=i.username, password=i.password,
            port=i.port, kg=i.kg, privlevel=_PRIV_NUMBERS[i.priv_level])

    def call(self, what: str, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(pyghmi_command)`` against the BMC; ``what`` names
        the command in errors.  Raises IPMIFailure with the BMC's
        answer, or BMCConnectionError when it cannot be reached."""
        with metrics.bmc_request('ipmi', what):
            return self._call(what, fn)

    def _call(self, what: str, fn: Callable[[Any], Any]) -> Any:
        conf = self.conf.ipmi
        deadline = time.monotonic() + conf.command_retry_timeout
        gate = bmc_gates.gate(('ipmi',) + self.info.key)
        if not gate.lock.acquire(timeout=conf.command_retry_timeout):
            raise exception.BMCConnectionError(
                node=self.node.uuid,
                error='the BMC at %s:%d does not answer (an earlier '
                      'command still waits for its reply after %d '
                      'seconds)' % (*self.info.key,
                                    conf.command_retry_timeout))
        released = True
        try:
            attempt = 0
            while True:
                attempt += 1
                wait = gate.last + conf.min_command_interval - \
                    time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                done, result, error = self._run_bounded(
                    fn, deadline - time.monotonic())
                gate.last = time.monotonic()
                if not done:
                    # pyghmi still waits on the BMC: keep the gate closed
                    # until it gives up, so nothing else talks to it
                    released = False
                    self._release_when_done(gate, result)
                    raise exception.BMCConnectionError(
                        node=self.node.uuid,
                        error='the BMC at %s:%d does not answer (%s: no '
                              'reply within %d seconds)'
                              % (*self.info.key, what,
                                 conf.command_retry_timeout))
                if error is None:
                    return result
                if _is_fatal(error) or time.monotonic() >= deadline:
                    raise self._failure(what, error, attempt)
                LOG.debug('Node %s: IPMI %s failed (attempt %d), '
                          'retrying: %s', self.node.uuid, what, attempt,
                          error)
        finally:
            if released:
                gate.lock.release()

    def _failure(self, what, error, attempt) -> Exception:
        text = str(error) or type(error).__name__
        if text in ('None', 'IpmiException') or 'timeout' in text.lower():
            return exception.BMCConnectionError(
                node=self.node.uuid,
                error='the BMC at %s:%d does not answer (%s, %d '
                      'attempt(s))' % (*self.info.key, what, attempt))
        return exception.IPMIFailure(
            cmd='%s on the BMC at %s:%d: %s'
                % (what, self.info.address, self.info.port, text))

    def _run_bounded(self, fn, budget: float):
        box: dict[str, Any] = {}

        def target():
            try:
                box['result'] = fn(self._session())
            except Exception as e:  # reported to the caller
                box['error'] = e

        thread = threading.Thread(target=target, daemon=True,
                                  name='ipmi-%s' % self.info.address)
        thread.start()
        thread.join(max(budget, 0.1) + 1.0)
        if thread.is_alive():
            return False, thread, None
        return True, box.get('result'), box.get('error')

    @staticmethod
    def _release_when_done(gate: bmc_gates.Gate,
                           thread: threading.Thread) -> None:
        def waiter():
            thread.join()
            gate.lock.release()
        threading.Thread(target=waiter, daemon=True).start()


# IPMI 2.0 chassis commands (netfn 0): Get Chassis Status (1), whose
# first data byte's bit 0 says the power is on, and Chassis Control (2)
# with its action.  Sent raw: pyghmi's get_power and set_power first ask
# the BMC who made it (Get Device ID, for OEM extensions none of which
# changes these), on every new Command, i.e. every call here, which
# doubled the power sync's traffic to every IPMI BMC.
CHASSIS_CONTROL = {'off': 0, 'on': 1, 'shutdown': 5}


def _answer(rsp: dict) -> dict:
    if 'error' in rsp:
        from pyghmi import exceptions
        raise exceptions.IpmiException(rsp['error'], code=rsp.get('code', 0))
    return rsp


def power_state(cmd) -> str:
    """'on' or 'off', as the BMC says (for ``BMC.call``)."""
    data = _answer(cmd.raw_command(netfn=0, command=1))['data']
    if not data:
        from pyghmi import exceptions
        raise exceptions.IpmiException('Get Chassis Status: no data')
    return 'on' if data[0] & 1 else 'off'


def chassis_control(action: str) -> Callable[[Any], None]:
    """Ask for ``action`` ('on', 'off', 'shutdown'; for ``BMC.call``)."""
    def send(cmd) -> None:
        _answer(cmd.raw_command(netfn=0, command=2,
                                data=(CHASSIS_CONTROL[action],)))
    return send


def read_sensors(cmd) -> list[dict]:
    """Every readable sensor of the BMC's SDR repository, read now (for
    ``BMC.call``): plain dicts, see ipmi/sensors.py."""
    sdr = cmd.init_sdr()
    out = []
    for key in sdr.get_sensor_numbers():
        entry = sdr.sensors[key]
        rsp = cmd.raw_command(netfn=4, command=0x2d,
                              rslun=entry.sensor_lun,
                              data=(entry.sensor_number,))
        if 'error' in rsp:
            if rsp.get('code') == 0xcb:   # sensor not present
                continue
            raise exception.IPMIFailure(
                cmd='get sensor reading of %s: %s'
                    % (entry.name, rsp['error']))
        raw = bytearray(rsp['data'])
        reading = entry.decode_sensor_reading(cmd, raw)
        threshold = entry.reading_type == 1
        bits = raw[2] if len(raw) > 2 else 0
        if len(raw) > 3:
            bits |= (raw[3] & 0x7f) << 8
        out.append({
            'name': entry.name, 'number': entry.sensor_number,
            'entity': entry.entity,
            'entity_number': entity_number(entry.entity),
            'type': entry.sensor_type,
            'type_number': entry.sensor_type_number,
            'threshold': threshold,
            'unavailable': bool(reading.unavailable),
            'value': reading.value, 'imprecision': reading.imprecision,
            'unit': getattr(entry, 'baseunit', ''),
            'percent': bool(getattr(entry, 'percent', '')),
            'health': reading.health, 'states': list(reading.states),
            'state_bits': bits})
    return out


def entity_number(name: str) -> int | None:
    """The IPMI entity ID code of pyghmi's entity name."""
    from pyghmi.ipmi.private import constants
    for number, known in constants.entity_ids.items():
        if known == name:
            return number
    return None
