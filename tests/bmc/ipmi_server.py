"""A virtual IPMI BMC for tests, built on pyghmi's BMC server classes.

Run as its own process (``python -m tests.bmc.ipmi_server ...``); it
listens on UDP on loopback and keeps the managed "server" state (power,
boot device with its persistent and EFI flags, NMIs) in a JSON file the
tests read to check what the BMC was told.

Three things differ from pyghmi's bundled ``fakebmc``:

* pyghmi's server session always negotiates cipher suite 3 (SHA1), while
  the pyghmi 1.6 client asks for suite 17 (SHA256) first and then fails
  its RAKP checks.  This BMC answers with the suite the client asked for.
* Every reply waits ``--delay`` seconds (default 1 ms): an instantly
  answering BMC trips a race in the client that costs it 0.5-1.7 s
  stalls, and a longer delay makes a slow BMC for tests.
* It has an SDR repository with a few sensors (SENSORS: temperatures,
  a fan, a voltage, a discrete health sensor) that answers pyghmi's
  client (Get SDR Repository Info, Reserve SDR Repository, Get SDR, Get
  Sensor Reading), which pyghmi's server does not.
* A packet that arrives for a session pyghmi has just dropped (a client
  that logged out and opened a new session from the same UDP port) goes
  to the server as a new conversation; pyghmi hands it to the dropped
  session, which has nowhere to take it, and its listen loop dies.
"""

import argparse
import hashlib
import hmac
import json
import os
import random
import struct
import sys
import time
import traceback

import pyghmi.ipmi.bmc as bmc
import pyghmi.ipmi.private.serversession as serversession
from pyghmi.ipmi.private import constants

# auth algorithm (table 13-17) -> (hash, integrity length)
_AUTH = {1: (hashlib.sha1, 12), 3: (hashlib.sha256, 16)}


class NegotiatingSession(serversession.ServerSession):
    """A server session that speaks the cipher suite it is asked for
    (3: HMAC-SHA1, 17: HMAC-SHA256)."""

    def create_open_session_response(self, request):
        algo = request[12] if len(request) > 12 else 1
        if algo not in _AUTH:
            algo = 1
        self.authalgo = algo
        self.currhashlib, self.currhashlen = _AUTH[algo]
        integrity = 4 if algo == 3 else 1
        clienttag = request[0]
        self.clientsessionid = request[4:8]
        self.managedsessionid = os.urandom(4)
        self.privlevel = 4
        return (bytearray([clienttag, 0, self.privlevel, 0])
                + self.clientsessionid + self.managedsessionid
                + bytearray([0, 0, 0, 8, algo, 0, 0, 0,
                             1, 0, 0, 8, integrity, 0, 0, 0,
                             2, 0, 0, 8, 1, 0, 0, 0]))

    def _hash(self):
        return getattr(self, 'currhashlib', hashlib.sha1)

    def _got_rakp1(self, data):
        clienttag = data[0]
        self.Rm = data[8:24]
        self.rolem = data[24]
        self.maxpriv = self.rolem & 0b111
        if data[27] == 0:
            return
        self.username = bytes(data[28:])
        password = self.authdata.get(self.username.decode('utf-8'))
        if password is None:
            # RAKP2 with status 0x0d, "unauthorized name", as BMCs do
            self.send_payload(
                bytearray([clienttag, 0x0d, 0, 0]) + self.clientsessionid,
                constants.payload_types['rakp2'], retry=False)
            return
        self.uuiddata = self.uuid.bytes
        self.Rc = os.urandom(16)
        hmacdata = (self.clientsessionid + self.managedsessionid
                    + self.Rm + self.Rc + self.uuiddata
                    + bytearray([self.rolem, len(self.username)])
                    + self.username)
        self.kuid = password.encode('utf-8')
        if self.kg is None:
            self.kg = self.kuid
        authcode = hmac.new(self.kuid, bytes(hmacdata),
                            self._hash()).digest()
        self.send_payload(
            bytearray([clienttag, 0, 0, 0]) + self.clientsessionid
            + self.Rc + self.uuiddata + authcode,
            constants.payload_types['rakp2'], retry=False)

    def _got_rakp3(self, data):
        h = self._hash()
        head = struct.pack('2B', self.rolem, len(self.username))
        self.sik = hmac.new(self.kg, bytes(self.Rm + self.Rc) + head
                            + self.username, h).digest()
        self.k1 = hmac.new(self.sik, b'\x01' * 20, h).digest()
        self.k2 = hmac.new(self.sik, b'\x02' * 20, h).digest()
        self.aeskey = self.k2[0:16]
        expected = hmac.new(self.kuid, bytes(self.Rc + self.clientsessionid
                                             + head + self.username),
                            h).digest()
        if expected != bytes(data[8:]) or data[1] != 0:
            return
        self.localsid = struct.unpack('<I', self.managedsessionid)[0]
        self.ipmicallback = self.handle_client_request
        self._send_rakp4(data[0], 0)

    def _send_rakp4(self, tagvalue, statuscode):
        payload = bytearray([tagvalue, statuscode, 0, 0]) + \
            self.clientsessionid
        hmacdata = bytes(self.Rm + self.managedsessionid + self.uuiddata)
        payload += hmac.new(self.sik, hmacdata,
                            self._hash()).digest()[:self.currhashlen]
        self.send_payload(payload, constants.payload_types['rakp4'],
                          retry=False)
        self.confalgo = 'aes'
        self.integrityalgo = 'sha256' if self.authalgo == 3 else 'sha1'
        self.sequencenumber = 1
        self.sessionid = struct.unpack(
            '<I', struct.pack('4B', *self.clientsessionid))[0]

    def sessionless_data(self, data, sockaddr):
        self.bmc.sessionless_data(data, sockaddr)


serversession.ServerSession = NegotiatingSession


# (name, number, entity, sensor type, unit, M, raw reading, health bits)
# unit: IPMI unit code (1 degrees C, 4 Volts, 18 RPM); None: a discrete
# sensor (sensor-specific reading type 6Fh) whose raw reading is the
# asserted state bits; health bits are the threshold status byte
SENSORS = (
    ('Inlet Temp', 0x05, 7, 0x01, 1, 1, 21, 0),
    ('CPU Temp', 0x01, 3, 0x01, 1, 1, 44, 0),
    ('Fan1', 0x30, 29, 0x04, 18, 50, 112, 0),
    ('12V', 0x10, 7, 0x02, 4, 1, 12, 0),
    ('Mgmt Health', 0x23, 7, 0x28, None, 1, 0, 0),
)


def sdr_record(record_id, sensor):
    """A full sensor record (IPMI 2.0 table 43-1) of one SENSORS row."""
    name, number, entity, stype, unit, m, _, _ = sensor
    threshold = unit is not None
    body = bytearray(43)
    body[0] = 0x20                       # owner: the BMC
    body[2] = number
    body[3], body[4] = entity, 1         # entity ID, instance
    body[5] = 0x7f                       # scanning enabled ...
    body[6] = 0b01001000 if threshold else 0b01000000
    body[7] = stype
    body[8] = 0x01 if threshold else 0x6f
    body[15] = 0                         # unsigned, no modifier unit
    body[16] = unit or 0
    body[18] = 0                         # linear
    body[19] = m & 0xff
    body[20] = (m >> 2) & 0b11000000     # M high bits; tolerance 0
    body[42] = 0xc0 | len(name)          # 8-bit ASCII ID string
    body += name.encode()
    return bytearray([record_id & 0xff, record_id >> 8, 0x51, 0x01,
                      len(body)]) + body


class VirtualBMC(bmc.Bmc):
    def __init__(self, authdata, port, state_file, delay, on_power=None,
                 address='127.0.0.1', drop=0.0):
        super().__init__(authdata, port=port, address=address)
        # the share of session set-up packets lost on the way (clients
        # time out and send again, as over a lossy network)
        self.drop = drop
        self.port = port
        self.additionaldevices = 0x02    # an SDR repository device
        self.sdr = [sdr_record(i, s) for i, s in enumerate(SENSORS)]
        self.state_file = state_file
        self.delay = delay
        # on_power(port, on): told of every power change (the fleet's
        # simulated agents boot when their machine powers on)
        self.on_power = on_power
        self.reads: list[float] = []    # when the power state was read
        self.kinds: dict[str, int] = {}  # 'netfn/command' -> how many
        self.state = {'power': 'off', 'bootdev': 'default',
                      'persistent': False, 'uefi': False, 'nmi': 0,
                      'commands': 0}
        self._save()

    def _save(self):
        if self.state_file is None:
            return
        tmp = self.state_file + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_file)

    def sessionless_data(self, data, sockaddr):
        if self.drop and random.random() < self.drop:
            return
        super().sessionless_data(data, sockaddr)

    def handle_raw_request(self, request, session):
        time.sleep(self.delay)
        self.state['commands'] += 1
        netfn, command = request['netfn'], request['command']
        if (netfn, command) == (0, 1):    # Get Chassis Status
            self.reads.append(time.time())
        kind = '%02x/%02x' % (netfn, command)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.state_file is not None:
            # what the tests read: each command by kind
            self.state['kinds'] = self.kinds
            self._save()
        if netfn == 0x0a and command in (0x20, 0x22, 0x23):
            return self.sdr_command(command, request['data'], session)
        if netfn == 4 and command == 0x2d:
            return self.sensor_reading(request['data'], session)
        super().handle_raw_request(request, session)

    def sdr_command(self, command, data, session):
        if command == 0x20:       # Get SDR Repository Info
            n = len(self.sdr)
            return session.send_ipmi_response(data=[
                0x51, n & 0xff, n >> 8, 0xff, 0xff,
                0, 0, 0, 0, 0, 0, 0, 0, 0x02])
        if command == 0x22:       # Reserve SDR Repository
            return session.send_ipmi_response(data=[1, 0])
        record_id = data[2] | (data[3] << 8)   # Get SDR
        offset, size = data[4], data[5]
        if record_id >= len(self.sdr):
            return session.send_ipmi_response(code=0xcb)
        record = self.sdr[record_id]
        following = record_id + 1 if record_id + 1 < len(self.sdr) \
            else 0xffff
        end = len(record) if size == 0xff else offset + size
        session.send_ipmi_response(
            data=[following & 0xff, following >> 8]
            + list(record[offset:end]))

    def sensor_reading(self, data, session):
        for sensor in SENSORS:
            if sensor[1] == data[0]:
                raw, status = sensor[6], sensor[7]
                if sensor[4] is None:     # discrete: the state bits
                    return session.send_ipmi_response(
                        data=[0, 0xc0, raw & 0xff, 0x80 | (raw >> 8)])
                return session.send_ipmi_response(
                    data=[raw, 0xc0, 0xc0 | status])
        session.send_ipmi_response(code=0xcb)

    def get_power_state(self):
        return self.state['power']

    def _power(self, value):
        self.state['power'] = value
        self._save()
        if self.on_power is not None:
            self.on_power(self.port, value == 'on')

    def power_on(self):
        self._power('on')

    def power_off(self):
        self._power('off')

    def power_shutdown(self):
        self._power('off')

    def power_reset(self):
        self._power('on')

    def power_cycle(self):
        self._power('on')

    def pulse_diag(self):
        self.state['nmi'] += 1
        self._save()

    def get_system_boot_options(self, request, session):
        if request['data'][0] != 5:
            return session.send_ipmi_response(code=0x80)
        dev = self.state['bootdev']
        num = bmc.ipmicommand.boot_devices.get(dev, 0)
        flags = 0b10000000 | (0b01000000 if self.state['persistent']
                              else 0) | (0b00100000 if self.state['uefi']
                                         else 0)
        session.send_ipmi_response(data=[1, 5, flags, num, 0, 0, 0])

    def set_system_boot_options(self, request, session):
        data = request['data']
        if data[0] in (0, 3, 4):
            return session.send_ipmi_response()
        if data[0] != 5:
            return session.send_ipmi_response(code=0x80)
        num = (data[2] >> 2) & 0b1111
        dev = bmc.ipmicommand.boot_devices.get(num)
        if dev is None:
            return session.send_ipmi_response(code=0xcc)
        self.state['bootdev'] = dev
        self.state['persistent'] = bool(data[1] & 0b01000000)
        # boot flags, data 1 bit 5: "EFI boot" (pyghmi's uefiboot)
        self.state['uefi'] = bool(data[1] & 0b00100000)
        self._save()
        session.send_ipmi_response()


def serve_forever(server) -> None:
    """Answer until killed.  pyghmi's server side can raise on a packet
    that arrives while a session is still negotiating (seen in CI:
    'NegotiatingSession' object has no attribute 'k1'), which ends its
    loop; a real BMC drops such a packet and goes on answering, so the
    doubles do too."""
    while True:
        try:
            server.listen(timeout=1)
        except Exception:
            traceback.print_exc()


def serve_fleet(args) -> None:
    """Many BMCs in this process (pyghmi's one loop answers them all):
    each power change is POSTed to ``--notify``/bmc-port/PORT/power;
    ``--stats`` gets, every second, each port's command count and the
    times its power state was read in the last ``--keep`` seconds."""
    import threading
    import urllib.request

    def notify(port, on):
        req = urllib.request.Request(
            '%s/bmc-port/%d/power' % (args.notify, port),
            data=json.dumps({'on': on}).encode(), method='POST',
            headers={'Content-Type': 'application/json'})
        try:
            urllib.request.urlopen(req, timeout=10).read()
        except OSError as e:
            print('notify %d: %s' % (port, e), file=sys.stderr)

    bmcs = [VirtualBMC({args.user: args.password}, port, None, args.delay,
                       on_power=notify if args.notify else None,
                       address=args.address, drop=args.drop)
            for port in args.ports]

    def stats():
        while True:
            time.sleep(1)
            cutoff = time.time() - args.keep
            out = {}
            for b in bmcs:
                b.reads = [t for t in b.reads if t >= cutoff]
                out[b.port] = {'commands': b.state['commands'],
                               'kinds': dict(b.kinds),
                               'reads': list(b.reads)}
            tmp = args.stats + '.tmp'
            with open(tmp, 'w') as f:
                json.dump(out, f)
            os.replace(tmp, args.stats)

    if args.stats:
        threading.Thread(target=stats, daemon=True).start()
    print('listening on %s ports %d-%d' % (
        args.address, min(args.ports), max(args.ports)), flush=True)
    serve_forever(bmcs[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int)
    p.add_argument('--ports', type=lambda v: [int(x) for x in v.split(',')],
                   help='a fleet: BMCs on these ports (comma-separated)')
    p.add_argument('--notify', help='with --ports: URL told of power '
                   'changes')
    p.add_argument('--stats', help='with --ports: file of the counts')
    p.add_argument('--keep', type=float, default=600)
    p.add_argument('--drop', type=float, default=0.0,
                   help='with --ports: share of session set-up packets '
                   'dropped')
    p.add_argument('--address', default='127.0.0.1',
                   help='with --ports: the loopback address to listen on')
    p.add_argument('--user', default='admin')
    p.add_argument('--password', default='password')
    p.add_argument('--state-file')
    p.add_argument('--delay', type=float, default=0.001)
    args = p.parse_args(argv)
    if args.ports:
        return serve_fleet(args)
    if args.port is None or args.state_file is None:
        p.error('--port and --state-file (or --ports)')
    server = VirtualBMC({args.user: args.password}, args.port,
                        args.state_file, args.delay)
    print('listening on 127.0.0.1:%d' % args.port, flush=True)
    serve_forever(server)


if __name__ == '__main__':
    sys.exit(main())
