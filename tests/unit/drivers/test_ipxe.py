"""boot.ipxe as the conductor writes it, run by a small interpreter of
the iPXE commands it uses (the real iPXE runs it in tests/vm): it chains
to the script of the NIC that booted, or of another NIC, and without one
boots the local disk as the firmware needs it (UEFI: ``exit`` to the
next boot entry; legacy BIOS: the first disk)."""

import re
import types

import pytest

from baremetal.drivers.modules import ipxe

BASE = 'http://192.0.2.1:8089'
MACS = ['52:54:00:00:00:0a', '52:54:00:00:00:0b', '52:54:00:00:00:0c']


def script(tmp_path) -> str:
    conf = types.SimpleNamespace(
        state_path=str(tmp_path), deploy=types.SimpleNamespace(
            http_root=str(tmp_path / 'httpboot'), http_url=BASE,
            http_server_enabled=False, external_http_url=None))
    assert ipxe.write_boot_script(conf) == BASE + '/boot.ipxe'
    return (tmp_path / 'httpboot' / 'boot.ipxe').read_text()


class IPXE:
    """Runs a script: ``did`` lists the URLs it chained to (``chain
    <url> ok`` or ``failed``), then ``exit`` or ``sanboot <args>``."""

    def __init__(self, platform, macs, booted, published):
        self.settings = {'platform': platform}
        for i, mac in enumerate(macs):
            self.settings['net%d/mac' % i] = mac
        self.settings['netX/mac'] = macs[booted] if macs else None
        self.published = published
        self.did: list[str] = []
        self.labels: dict[str, int] = {}

    def expand(self, s):
        # ${net${idx}/mac}: the inner setting first, as iPXE does
        while m := re.search(r'\$\{([^${}]+)\}', s):
            name, _, fmt = m.group(1).partition(':')
            value = self.settings.get(name)
            value = '' if value is None else str(value)
            if fmt == 'hexhyp':
                value = value.replace(':', '-')
            s = s[:m.start()] + value + s[m.end():]
        return s

    # each command: (ok, jump or None, ended)
    def isset(self, *args):
        return bool(args), None, False

    def iseq(self, a, b):
        return a == b, None, False

    def goto(self, label):
        return True, self.labels[label], False

    def set(self, name, value):
        self.settings[name.split(':')[0]] = int(value)
        return True, None, False

    def inc(self, name):
        self.settings[name] = int(self.settings[name]) + 1
        return True, None, False

    def chain(self, *args):
        url = [a for a in args if not a.startswith('--')][0]
        ok = url in self.published
        self.did.append('chain %s %s' % (url, 'ok' if ok else 'failed'))
        return ok, None, ok

    def exit(self, status='0'):
        self.did.append('exit %s' % status)
        return True, None, True

    def sanboot(self, *args):
        self.did.append('sanboot ' + ' '.join(args))
        return True, None, True

    def command(self, line):
        name, *args = self.expand(line).split()
        assert name in ('isset', 'iseq', 'goto', 'set', 'inc', 'chain',
                        'exit', 'sanboot'), name
        return getattr(self, name)(*args)

    def run(self, text):
        lines = [ln.strip() for ln in text.splitlines()]
        assert lines[0] == '#!ipxe'
        self.labels = {ln[1:]: i for i, ln in enumerate(lines)
                       if ln.startswith(':')}
        pc = 1
        for _ in range(500):
            if pc >= len(lines):
                raise AssertionError('ran off its end: %s' % self.did)
            line, pc = lines[pc], pc + 1
            if not line or line.startswith(('#', ':')):
                continue
            first, _, alt = line.partition(' || ')
            ok, jump, ended = self.command(first)
            if not ok:
                assert alt, 'unhandled failure of %r' % first
                ok, jump, ended = self.command(alt)
            if ended:
                return self.did
            if jump is not None:
                pc = jump + 1
        raise AssertionError('the script loops: %s' % self.did)


def run(text, platform, macs, booted, published):
    return IPXE(platform, macs, booted, published).run(text)


def url(mac):
    return '%s/ipxe/%s.ipxe' % (BASE, mac.replace(':', '-'))


@pytest.mark.parametrize('platform', ['efi', 'pcbios'])
def test_chains_to_the_script_of_the_nic_that_booted(tmp_path, platform):
    did = run(script(tmp_path), platform, MACS, booted=1,
              published={url(MACS[1])})
    assert did == ['chain %s ok' % url(MACS[1])]


def test_tries_the_other_nics_when_the_booted_one_has_none(tmp_path):
    did = run(script(tmp_path), 'efi', MACS, booted=0,
              published={url(MACS[2])})
    assert did[0] == 'chain %s failed' % url(MACS[0])
    assert did[-1] == 'chain %s ok' % url(MACS[2])


def test_uefi_without_a_script_exits_to_the_next_boot_entry(tmp_path):
    """With an error status: a boot entry that returns success makes
    UEFI's boot manager stop and show its menu instead (UEFI spec, Boot
    Manager; what OVMF does, tests/functional/test_ipxe_dnsmasq.py)."""
    did = run(script(tmp_path), 'efi', MACS, booted=2, published=set())
    assert did[-1] == 'exit 1'
    assert not [d for d in did if d.startswith('sanboot')]
    assert {d.split()[1] for d in did[:-1]} == {url(m) for m in MACS}


def test_bios_without_a_script_boots_the_first_disk(tmp_path):
    did = run(script(tmp_path), 'pcbios', MACS[:1], booted=0,
              published=set())
    assert did[-1] == 'sanboot --no-describe --drive 0x80'


def test_no_nic_at_all_still_boots_the_disk(tmp_path):
    assert run(script(tmp_path), 'efi', [], booted=0,
               published=set()) == ['exit 1']
