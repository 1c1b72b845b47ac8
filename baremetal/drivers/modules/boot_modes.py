"""The boot mode a node must boot in: ``uefi`` or ``bios``.

Resolved as Ironic does, first match wins:

1. ``secure_boot: true`` in ``instance_info['capabilities']`` (what Nova
   passes from the flavor): ``uefi``, the only mode with Secure Boot;
2. ``boot_mode`` in ``properties['capabilities']`` (the operator's
   word for this machine; a ``"k:v,k:v"`` string or a dict);
3. ``driver_internal_info['deploy_boot_mode']``;
4. ``instance_info['deploy_boot_mode']``;
5. ``[deploy]default_boot_mode`` (``uefi`` unless set).

Management interfaces send it with every boot device change; boot
interfaces serve the matching boot loader.
"""

from oslo_log import log

from baremetal.common import exception

LOG = log.getLogger(__name__)

UEFI = 'uefi'
BIOS = 'bios'
MODES = (UEFI, BIOS)


def capability(caps, name: str):
    """``name``'s value in a capabilities string (``"k:v,k:v"``) or
    dict; None when absent."""
    if isinstance(caps, dict):
        return caps.get(name)
    for item in str(caps or '').split(','):
        key, _, value = item.partition(':')
        if key.strip() == name:
            return value.strip()
    return None


def _is_true(value) -> bool:
    return str(value).strip().lower() in ('true', '1', 'yes', 'on')


def _sources(node):
    """(where, value) in Ironic's order of precedence."""
    instance = node.instance_info or {}
    if _is_true(capability(instance.get('capabilities'), 'secure_boot')):
        yield 'instance_info/capabilities secure_boot', UEFI
    yield ('properties/capabilities boot_mode',
           capability((node.properties or {}).get('capabilities'),
                      'boot_mode'))
    yield ('driver_internal_info/deploy_boot_mode',
           (node.driver_internal_info or {}).get('deploy_boot_mode'))
    yield 'instance_info/deploy_boot_mode', instance.get('deploy_boot_mode')


def asked(node) -> str | None:
    """The mode ``node`` asks for itself (1-4 above), or None: then
    ``[deploy]default_boot_mode`` applies. Raises InvalidParameterValue
    (400) naming the field when it asks for neither mode."""
    for where, mode in _sources(node):
        if mode in (None, ''):
            continue
        if mode not in MODES:
            raise exception.InvalidParameterValue(
                'Node %s asks for boot mode %r in %s; supported: %s'
                % (node.uuid, mode, where, ', '.join(MODES)))
        return mode
    return None


def requested(node, conf) -> str:
    """``uefi`` or ``bios``: the mode ``node`` must boot in."""
    return asked(node) or conf.deploy.default_boot_mode


def for_task(task) -> str:
    return requested(task.node, task.conductor.conf)


def validate(task) -> str:
    """The node's mode, after checking that its boot and management
    interfaces can boot it in that mode; InvalidParameterValue (400)
    naming the interface otherwise."""
    node = task.node
    mode = for_task(task)
    for kind in ('boot', 'management'):
        iface = getattr(task.driver, kind)
        supported = tuple(getattr(iface, 'supported_boot_modes', MODES))
        if mode not in supported:
            name = getattr(node, '%s_interface' % kind, None) or \
                type(iface).__name__
            raise exception.InvalidParameterValue(
                'Node %s must boot in %s mode, which its %s interface %s '
                'cannot do (it supports %s); set boot_mode in the '
                'node\'s properties/capabilities or choose another %s '
                'interface' % (node.uuid, mode, kind, name,
                               ', '.join(supported) or 'none', kind))
    return mode


def secure_boot_requested(node) -> bool:
    """``secure_boot: true`` in ``instance_info['capabilities']`` (Nova
    passes it from the flavor), as in Ironic.  The same capability in
    ``properties`` only says the machine can do it (for schedulers)."""
    return _is_true(capability((node.instance_info or {}).get(
        'capabilities'), 'secure_boot'))


def check_secure_boot(task) -> None:
    """InvalidParameterValue (400) when the node asks for Secure Boot
    and its management interface cannot turn it on."""
    node = task.node
    if not secure_boot_requested(node):
        return
    mgmt = task.driver.management
    if not getattr(mgmt, 'supports_secure_boot', False):
        raise exception.InvalidParameterValue(
            'Node %s asks for Secure Boot (instance_info/capabilities '
            'secure_boot), which its management interface %s cannot turn '
            'on; use one that can (redfish)'
            % (node.uuid, node.management_interface or
               type(mgmt).__name__))


def set_secure_boot(task, state: bool) -> None:
    """Secure Boot on (``state``) or off where the node asks for it:
    on before the instance boots, off once the instance is gone."""
    if secure_boot_requested(task.node):
        LOG.info('Node %s: turning Secure Boot %s', task.node.uuid,
                 'on' if state else 'off')
        task.driver.management.set_secure_boot_state(task, state)


def record(task) -> None:
    """Set the node's ``boot_mode`` (API 1.75) to what its management
    interface reports; left as it is where it cannot tell."""
    try:
        mode = task.driver.management.get_boot_mode(task)
    except Exception as e:
        LOG.warning('Node %s: could not read the boot mode: %s',
                    task.node.uuid, e)
        return
    if mode is not None and mode != task.node.boot_mode:
        task.node.boot_mode = mode
