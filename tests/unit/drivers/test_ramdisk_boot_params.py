"""The agent ramdisk's kernel command line: a virtual media boot names
the node's one PXE-enabled port as BOOTIF (the NIC in-band inspection
keeps PXE on); a network boot's BOOTIF is iPXE's own."""

import types

from baremetal.drivers.modules import ramdisk_boot


def _task(*ports):
    conf = types.SimpleNamespace(conductor=types.SimpleNamespace(
        api_url='http://192.0.2.1:6385'))
    node = types.SimpleNamespace(driver_info={}, uuid='n1')
    return types.SimpleNamespace(
        conductor=types.SimpleNamespace(conf=conf), node=node,
        ports=[types.SimpleNamespace(address=a, pxe_enabled=p)
               for a, p in ports])


def test_vmedia_names_the_one_pxe_enabled_port():
    task = _task(('52:54:00:00:00:01', False), ('52:54:00:00:00:02', True))
    params = ramdisk_boot.kernel_params(task, 'vmedia', 'nofb')
    assert 'BOOTIF=52:54:00:00:00:02' in params.split()


def test_no_bootif_when_the_port_is_not_known_or_not_one():
    for task in (_task(), _task(('52:54:00:00:00:01', True),
                                ('52:54:00:00:00:02', True))):
        assert 'BOOTIF' not in ramdisk_boot.kernel_params(
            task, 'vmedia', 'nofb')
    task = _task(('52:54:00:00:00:01', True))
    assert 'BOOTIF' not in ramdisk_boot.kernel_params(task, 'pxe', 'nofb')
