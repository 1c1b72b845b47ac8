"""Reading ironic-python-agent's hardware inventory (in-band
inspection, API 1.84): what the API checks and the conductor learns."""

from baremetal.common import exception


def properties_from(inventory: dict) -> dict:
    """cpus, cpu_arch, memory_mb and local_gb from an IPA inventory (the
    root disk: the smallest one of at least 4 GiB, as IPA picks it)."""
    out = {}
    cpu = inventory.get('cpu') or {}
    if isinstance(cpu, dict):
        if isinstance(cpu.get('count'), int):
            out['cpus'] = cpu['count']
        if isinstance(cpu.get('architecture'), str):
            out['cpu_arch'] = cpu['architecture']
    memory = inventory.get('memory') or {}
    if isinstance(memory, dict) and isinstance(memory.get('physical_mb'),
                                               int):
        out['memory_mb'] = memory['physical_mb']
    sizes = [d.get('size') for d in inventory.get('disks') or []
             if isinstance(d, dict) and isinstance(d.get('size'), int)
             and d['size'] >= 4 * 1024 ** 3]
    if sizes:
        # Ironic's convention: one GiB less than the disk, for partitions
        out['local_gb'] = min(sizes) // 1024 ** 3 - 1
    return out


def macs_of(inventory: dict) -> list[str]:
    out = []
    for iface in inventory.get('interfaces') or []:
        mac = iface.get('mac_address') if isinstance(iface, dict) else None
        if isinstance(mac, str) and mac:
            out.append(mac.lower())
    return out


def boot_mac(inventory: dict) -> str | None:
    """The MAC address of the NIC the machine booted from, as the agent
    reports it (``boot.pxe_interface``: the ``BOOTIF`` it was given, a
    MAC or PXELINUX's ``01-aa-bb-...`` form), lower case; None when it
    does not know."""
    boot = inventory.get('boot')
    value = boot.get('pxe_interface') if isinstance(boot, dict) else None
    if not isinstance(value, str) or not value:
        return None
    value = value.strip().lower()
    if len(value) == 20 and value.startswith('01-'):
        value = value[3:]
    value = value.replace('-', ':')
    return value if len(value) == 17 else None


def check_inventory(data) -> tuple[dict, dict]:
    """(inventory, plugin data) from a continue_inspection body; 400
    when it is not an agent's inventory."""
    if not isinstance(data, dict) or not isinstance(
            data.get('inventory'), dict):
        raise exception.InvalidParameterValue(
            err='the body must be an object with an "inventory" object')
    data = dict(data)
    inventory = data.pop('inventory')
    if not isinstance(inventory.get('interfaces'), list):
        raise exception.InvalidParameterValue(
            err='inventory.interfaces must be a list')
    return inventory, data
