"""The boot mode a node must boot in (Ironic's order of precedence), the
validation that refuses an interface that cannot boot it so, and the
ipmi management interface sending the mode with the boot device.  The
BMC side is tested against real peers in tests/functional (test_ipmi,
test_redfish)."""

import types

import pytest
from oslo_config import cfg

from baremetal.common import exception
from baremetal.conf import deploy as deploy_conf
from baremetal.conf import ipmi as ipmi_conf
from baremetal.drivers.modules import boot_modes
from baremetal.drivers.modules.ipmi import client as ipmi_client
from baremetal.drivers.modules.ipmi import management as ipmi_mgmt


@pytest.fixture
def conf():
    c = cfg.ConfigOpts()
    deploy_conf.register_opts(c)
    ipmi_conf.register_opts(c)
    c([])
    # the fake BMC answers at once: no pause between its commands
    c.set_override('min_command_interval', 0, group='ipmi')
    return c


def node(properties=None, instance_info=None, driver_internal_info=None,
         **extra):
    return types.SimpleNamespace(
        uuid='1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
        properties=properties or {}, instance_info=instance_info or {},
        driver_internal_info=driver_internal_info or {}, boot_mode=None,
        driver='ipmi', **extra)


def test_default_is_uefi(conf):
    assert conf.deploy.default_boot_mode == 'uefi'
    assert boot_modes.requested(node(), conf) == 'uefi'
    assert boot_modes.asked(node()) is None


def test_default_is_the_option(conf):
    conf.set_override('default_boot_mode', 'bios', group='deploy')
    assert boot_modes.requested(node(), conf) == 'bios'


def test_option_accepts_only_the_two_modes(conf):
    with pytest.raises(ValueError):
        conf.set_override('default_boot_mode', 'legacy', group='deploy')


@pytest.mark.parametrize('caps', [
    'boot_mode:bios', 'cpu_arch:x86_64,boot_mode:bios',
    ' boot_mode : bios ,foo:bar', {'boot_mode': 'bios', 'x': 'y'}])
def test_capability_as_string_or_dict(conf, caps):
    assert boot_modes.requested(
        node(properties={'capabilities': caps}), conf) == 'bios'


def test_precedence_is_ironics(conf):
    """secure_boot (instance_info capabilities) > properties
    capabilities > driver_internal_info > instance_info
    deploy_boot_mode > [deploy]default_boot_mode."""
    conf.set_override('default_boot_mode', 'bios', group='deploy')
    n = node(instance_info={'deploy_boot_mode': 'uefi'})
    assert boot_modes.requested(n, conf) == 'uefi'
    n.driver_internal_info['deploy_boot_mode'] = 'bios'
    assert boot_modes.requested(n, conf) == 'bios'
    n.properties['capabilities'] = 'boot_mode:uefi'
    assert boot_modes.requested(n, conf) == 'uefi'
    n.properties['capabilities'] = 'boot_mode:bios'
    n.instance_info['capabilities'] = {'secure_boot': 'true'}
    assert boot_modes.requested(n, conf) == 'uefi'
    n.instance_info['capabilities'] = {'secure_boot': 'false'}
    assert boot_modes.requested(n, conf) == 'bios'


@pytest.mark.parametrize('where', ['properties', 'instance_info'])
def test_an_unknown_mode_is_a_400_naming_the_field(conf, where):
    n = node(properties={'capabilities': 'boot_mode:legacy'}) \
        if where == 'properties' else \
        node(instance_info={'deploy_boot_mode': 'legacy'})
    with pytest.raises(exception.InvalidParameterValue) as e:
        boot_modes.requested(n, conf)
    assert 'legacy' in str(e.value) and where in str(e.value)
    assert e.value.code == 400


def _task(conf, n, boot_modes_=('uefi', 'bios'),
          mgmt_modes=('uefi', 'bios')):
    boot = types.SimpleNamespace(supported_boot_modes=boot_modes_)
    mgmt = types.SimpleNamespace(supported_boot_modes=mgmt_modes)
    return types.SimpleNamespace(
        node=n, conductor=types.SimpleNamespace(conf=conf),
        driver=types.SimpleNamespace(boot=boot, management=mgmt))


def test_validate_refuses_a_mode_an_interface_cannot_boot(conf):
    n = node(boot_interface='ipxe', management_interface='old-bmc')
    task = _task(conf, n, mgmt_modes=('bios',))
    with pytest.raises(exception.InvalidParameterValue) as e:
        boot_modes.validate(task)
    msg = str(e.value)
    assert 'uefi' in msg and 'management interface old-bmc' in msg
    assert e.value.code == 400
    n.properties['capabilities'] = 'boot_mode:bios'
    assert boot_modes.validate(task) == 'bios'
    task = _task(conf, n, boot_modes_=('uefi',))
    with pytest.raises(exception.InvalidParameterValue) as e:
        boot_modes.validate(task)
    assert 'boot interface ipxe' in str(e.value)


class FakeCommand:
    """pyghmi's Command as far as the management interface uses it."""

    def __init__(self, answer=None):
        self.calls = []
        self.answer = answer or {'bootdev': 'default'}

    def set_bootdev(self, bootdev, persist=False, uefiboot=False):
        self.calls.append((bootdev, persist, uefiboot))
        return {'bootdev': bootdev}

    def get_bootdev(self):
        return self.answer


def _ipmi_task(conf, monkeypatch, n, cmd):
    n.driver_info = {'ipmi_address': '192.0.2.9'}
    monkeypatch.setattr(ipmi_client.BMC, '_session', lambda self: cmd)
    return types.SimpleNamespace(node=n,
                                 conductor=types.SimpleNamespace(conf=conf))


@pytest.mark.parametrize('caps,efi', [('', True), ('boot_mode:uefi', True),
                                      ('boot_mode:bios', False)])
def test_ipmi_sends_the_mode_with_every_boot_device(conf, monkeypatch,
                                                    caps, efi):
    cmd = FakeCommand()
    task = _ipmi_task(conf, monkeypatch,
                      node(properties={'capabilities': caps}), cmd)
    mgmt = ipmi_mgmt.IPMIManagement()
    mgmt.set_boot_device(task, 'pxe')
    mgmt.set_boot_device(task, 'disk', persistent=True)
    assert cmd.calls == [('network', False, efi), ('hd', True, efi)]


def test_ipmi_reads_the_mode_from_the_override_else_the_requested(
        conf, monkeypatch):
    cmd = FakeCommand({'bootdev': 'hd', 'persistent': True,
                       'uefimode': False})
    task = _ipmi_task(conf, monkeypatch, node(), cmd)
    mgmt = ipmi_mgmt.IPMIManagement()
    assert mgmt.get_boot_mode(task) == 'bios'
    cmd.answer = {'bootdev': 'hd', 'persistent': True, 'uefimode': True}
    assert mgmt.get_boot_mode(task) == 'uefi'
    cmd.answer = {'bootdev': 'default', 'persistent': True}
    assert mgmt.get_boot_mode(task) == 'uefi'      # what it will send
    task.node.properties['capabilities'] = 'boot_mode:bios'
    assert mgmt.get_boot_mode(task) == 'bios'


def test_ipmi_sets_the_mode_only_with_the_boot_device(conf, monkeypatch):
    task = _ipmi_task(conf, monkeypatch, node(), FakeCommand())
    with pytest.raises(exception.UnsupportedDriverExtension) as e:
        ipmi_mgmt.IPMIManagement().set_boot_mode(task, 'bios')
    assert 'boot_mode:bios' in str(e.value)
