"""The sushy-tools Redfish emulator for tests, on its fake systems driver.

Run as its own process: ``python -m tests.bmc.redfish_server --port P
--state-dir D --systems FILE [--auth-file F] [--power-delay S]``.
The HTTP side, the Redfish resources and basic auth are sushy-tools'
own.  Its in-memory ``FakeDriver`` lacks what the tests need, so this
wrapper subclasses it:

* power changes land after ``--power-delay`` seconds (the stock driver
  picks 1-11 s at random);
* BIOS attributes: ``PATCH .../BIOS/Settings`` stores pending settings
  that become current at the next power on or restart, as on real
  hardware; ``ResetBios`` restores the defaults at the next boot too;
* firmware versions (``BiosVersion``, 1.0.0 at first), which
  sushy-tools' own UpdateService bumps at each ``SimpleUpdate``;
* memory size, CPU count, processors and simple storage disks, read
  from each fake system's JSON (``memory_gib``, ``cpus``, ``disks``);
* a chassis Power resource, which sushy-tools has none of
  (tests/bmc/redfish_power.py);
* chassis NetworkAdapters with their firmware versions, which sushy-tools
  has none of (tests/bmc/redfish_nics.py);
* an EventService, which sushy-tools has none of
  (tests/bmc/redfish_events.py);
* Storage and Drives from each fake system's ``storage`` (sushy-tools'
  own static storage and drives), with RAID volumes the fake driver
  cannot make (tests/bmc/redfish_volumes.py).

The state lives in a sqlite file under ``--state-dir``; use a fresh one.
"""

import argparse
import copy
import json
import sys
import time

from sushy_tools.emulator import main as emulator
from sushy_tools.emulator.resources.systems import fakedriver

from tests.bmc import redfish_events
from tests.bmc import redfish_nics
from tests.bmc import redfish_power
from tests.bmc import redfish_volumes

DEFAULT_BIOS = {'BootMode': 'Uefi', 'ProcTurboMode': 'Enabled',
                'EmbeddedSata': 'Raid', 'NicBoot1': 'NetworkBoot'}
POWER_DELAY = 0.0


class TestDriver(fakedriver.FakeDriver):
    def set_power_state(self, identity, state):
        system = self._get(identity)
        if 'On' in state:
            pending = 'On'
        elif state in ('ForceOff', 'GracefulShutdown'):
            pending = 'Off'
        elif 'Restart' in state:
            system['power_state'] = 'Off'
            pending = 'On'
        else:
            return super().set_power_state(identity, state)
        if system['power_state'] != pending:
            self._update(system, pending_power={
                'power_state': pending,
                'apply_time': time.time() + POWER_DELAY})

    def _update_if_needed(self, system):
        pending = system.get('pending_power')
        if pending and time.time() >= pending['apply_time']:
            changes = {'power_state': pending['power_state'],
                       'pending_power': None}
            if pending['power_state'] == 'On' and \
                    system.get('bios_pending') is not None:
                # settings are applied while the machine boots
                changes['bios'] = system['bios_pending']
                changes['bios_pending'] = None
            self._update(system, **changes)
            if pending['power_state'] == 'On':
                # RAID changes waiting for a reset are applied now
                redfish_volumes.system_reset(system['uuid'])
        return system

    def get_bios(self, identity):
        return dict(self._get(identity).get('bios') or DEFAULT_BIOS)

    def set_bios(self, identity, attributes):
        system = self._get(identity)
        base = system.get('bios_pending') or self.get_bios(identity)
        merged = dict(base)
        merged.update(attributes or {})
        self._update(system, bios_pending=merged)

    def reset_bios(self, identity):
        self._update(identity, bios_pending=dict(DEFAULT_BIOS))

    def get_versions(self, identity):
        # sushy-tools' own UpdateService.SimpleUpdate reads and bumps these
        return dict(self._get(identity).get('versions')
                    or {'BiosVersion': '1.0.0'})

    def set_versions(self, identity, firmware_versions):
        system = self._get(identity)
        versions = self.get_versions(identity)
        versions.update(firmware_versions)
        self._update(system, versions=versions)

    def get_total_memory(self, identity):
        return self._get(identity).get('memory_gib')

    def get_total_cpus(self, identity):
        return self._get(identity).get('cpus')

    def get_processors(self, identity):
        n = self._get(identity).get('cpus') or 0
        return [{'id': 'CPU%d' % i, 'Id': 'CPU%d' % i, 'socket': i,
                 'vendor': 'Test', 'model': 'Test CPU', 'cores': 1,
                 'threads': 1} for i in range(n)]

    def get_simple_storage_collection(self, identity):
        disks = self._get(identity).get('disks') or []
        return {'ctrl': {'Id': 'ctrl', 'Name': 'ctrl', 'DeviceList': [
            {'Name': 'disk%d' % i, 'CapacityBytes': int(size_gib) << 30}
            for i, size_gib in enumerate(disks)]}}


def main(argv=None):
    global POWER_DELAY
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--state-dir', required=True)
    p.add_argument('--systems', required=True,
                   help='JSON file: a list of fake systems')
    p.add_argument('--auth-file')
    p.add_argument('--power-delay', type=float, default=0.0)
    args = p.parse_args(argv)
    POWER_DELAY = args.power_delay
    with open(args.systems) as f:
        systems = json.load(f)
    fakedriver.FakeDriver = TestDriver
    emulator.fakedriver.FakeDriver = TestDriver
    extra = {'SUSHY_EMULATOR_FAKE_DRIVER': True,
             'SUSHY_EMULATOR_FAKE_SYSTEMS': copy.deepcopy(systems),
             'SUSHY_EMULATOR_STATE_DIR': args.state_dir,
             'SUSHY_EMULATOR_LISTEN_IP': '127.0.0.1',
             'SUSHY_EMULATOR_LISTEN_PORT': args.port}
    extra.update(redfish_volumes.storage_config(systems))
    if args.auth_file:
        extra['SUSHY_EMULATOR_AUTH_FILE'] = args.auth_file
    emulator.app.configure(extra_config=extra)
    redfish_events.install(emulator.app)
    redfish_volumes.install(emulator.app)
    redfish_power.install(emulator.app)
    redfish_nics.install(emulator.app)
    emulator.app.run(host='127.0.0.1', port=args.port, threaded=True)


if __name__ == '__main__':
    sys.exit(main())
